"""Issue 31, item 3: empty image data becomes the documented placeholder, counted, in every dialect, and
``validate()`` reports an empty or non-image source in every dialect."""

from __future__ import annotations

import json

import pytest

from snapglyph import Message, Part, compact, validate

DIALECTS = ("openai", "anthropic", "responses", "gemini")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="


def _conv(*images: Part) -> list[Message]:
    return [Message(0, "user", [Part("text", text="look"), *images]),
            Message(1, "assistant", [Part("tool_call", name="shot", call_id="c1", arguments="{}")]),
            Message(2, "tool", [Part("tool_result", call_id="c1", name="shot",
                                     content=[Part("image", media_type="image/png", data="")])])]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_empty_images_become_the_placeholder_and_are_counted(dialect):
    res = compact(_conv(Part("image", media_type="image/png", data=""), Part("image", url=""),
                        Part("image", url="data:image/png;base64,")), dialect=dialect, budget=100_000)
    sent = json.dumps(res.request)
    assert validate(res.request, dialect) == []
    assert res.rewrites["empty images replaced by a placeholder"] == 4
    assert sent.count("[image removed: no image data]") == 4
    assert '"data": ""' not in sent and '"url": ""' not in sent and "base64,\"" not in sent


EMPTY = {
    "anthropic": {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}},
        {"type": "image", "source": {"type": "url", "url": ""}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "bm90IGFuIGltYWdl"}}]}]},
    "openai": {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": ""}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,bm90IGFuIGltYWdl"}}]}]},
    "responses": {"model": "m", "input": [{"type": "message", "role": "user", "content": [
        {"type": "input_image", "image_url": ""},
        {"type": "input_image", "image_url": "data:image/png;base64,"},
        {"type": "input_image", "image_url": "data:image/png;base64,bm90IGFuIGltYWdl"}]}]},
    "gemini": {"contents": [{"role": "user", "parts": [
        {"inline_data": {"mime_type": "image/png", "data": ""}},
        {"file_data": {"mime_type": "image/png", "file_uri": ""}},
        {"inline_data": {"mime_type": "image/png", "data": "bm90IGFuIGltYWdl"}}]}]},
}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_validate_reports_empty_and_non_image_sources(dialect):
    faults = [f.text for f in validate(EMPTY[dialect], dialect)]
    assert sum("empty" in f for f in faults) == 2, faults
    assert sum("Could not process image" in f for f in faults) == 1, faults


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_good_image_still_passes(dialect):
    res = compact(_conv(Part("image", media_type="image/png", data=PNG)), dialect=dialect, budget=100_000)
    assert validate(res.request, dialect) == [] and res.rewrites["empty images replaced by a placeholder"] == 1
