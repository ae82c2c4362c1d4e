"""Image limits resolved inside compaction (issue 12 item 4) and an empty middle refused (issue 12 item 12)."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from PIL import Image
from sdk_oracle import sdk_errors
from test_cli import run

from conftest import ROOT
from snapglyph import BudgetError, Message, Part, SourceStore, compact, from_request, validate
from snapglyph.model.messages import images_in

TRAJ = ROOT / "examples" / "swe-agent" / "marshmallow-code__marshmallow-1867.traj"


def _png(w: int, h: int, noise: bool = False) -> str:
    if noise:
        px = np.random.default_rng(7).integers(0, 256, (h, w, 3), dtype=np.uint8)
        im = Image.fromarray(px, "RGB")
    else:
        im = Image.new("RGB", (w, h), (30, 120, 200))
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _shots(n: int, data: str, w: int, h: int) -> list[Message]:
    """A task, then ``n`` rounds whose tool result is a screenshot."""
    msgs = [Message(0, "user", [Part("text", text="look at the screen")])]
    for r in range(n):
        msgs += [Message(len(msgs), "assistant", [Part("tool_call", name="shot", arguments="{}", call_id=f"s{r}")]),
                 Message(len(msgs) + 1, "tool", [Part("tool_result", call_id=f"s{r}", content=[
                     Part("text", text=f"shot {r}"),
                     Part("image", media_type="image/png", data=data, width=w, height=h)])])]
    return msgs + [Message(len(msgs), "assistant", [Part("text", text="seen")])]


def _request_images(req: dict) -> list[dict]:
    blocks = [b for m in req["messages"] if isinstance(m["content"], list) for b in m["content"]]
    inner = [q for b in blocks if b["type"] == "tool_result" and isinstance(b.get("content"), list)
             for q in b["content"]]
    return [b for b in blocks + inner if b["type"] == "image"]


def test_too_many_images_drop_the_oldest_to_placeholders():
    res = compact(_shots(130, _png(8, 8), 8, 8), profile="claude", budget=150_000)
    assert res.passthrough
    imgs = _request_images(res.request)
    assert len(imgs) == 100
    results = [b for m in res.request["messages"] if isinstance(m["content"], list) for b in m["content"]
               if b["type"] == "tool_result"]
    assert results[0]["content"] == ("shot 0\n[image not sent: 8x8 image/png, 77 bytes; the request keeps the "
                                     "newest 100 images (profile claude)]")
    assert [q["type"] for q in results[30]["content"]] == ["text", "image"]  # the 31st and later keep theirs
    assert res.rewrites["oldest images replaced by a placeholder for the image count limit"] == 30
    assert validate(res.request, "anthropic", profile="claude") == [] and sdk_errors(res.request, "anthropic") == ""


def test_many_image_rule_downscales_the_oversized_images():
    data = _png(1600, 2600)
    res = compact(_shots(25, data, 1600, 2600), profile="claude", budget=150_000)
    imgs = _request_images(res.request)
    assert len(imgs) == 25
    sizes = {Image.open(io.BytesIO(base64.b64decode(b["source"]["data"]))).size for b in imgs}
    assert sizes == {(1231, 2000)}
    assert res.rewrites["images downscaled to a provider limit"] == 25
    assert validate(res.request, "anthropic", profile="claude") == []


def test_image_over_the_bytes_limit_is_downscaled_from_its_source_on_every_pass(tmp_path):
    data = _png(1200, 1200, noise=True)
    assert len(data) > 5 * 1024 * 1024
    msgs = [Message(0, "user", [Part("text", text="task")])]
    msgs += [Message(1 + i, r, [Part("text", text=f"{r} {i} " + "w" * 4000)])
             for i, r in enumerate(["assistant", "user"] * 12)]
    msgs += [Message(m.id + 24, m.role, m.parts) for m in _shots(1, data, 1200, 1200)[1:]]
    res = compact(msgs, profile="claude", budget=25_000)
    assert not res.passthrough and res.rewrites["images downscaled to a provider limit"] == 1
    imgs = [b for b in _request_images(res.request) if b["source"]["media_type"] != "image/png"
            or not b["source"]["data"].startswith("iVBORw0KGgoAAAANSUhEUgAABEQ")]  # not the pages (1092 px)
    assert len(imgs) == 1 and len(imgs[0]["source"]["data"]) <= 5 * 1024 * 1024
    assert validate(res.request, "anthropic", profile="claude") == []
    # the stored source keeps the original; a second pass downscales it again from there, to the same bytes
    assert [q.data for q in images_in(res.store.get(i) for i in res.store)] == [data]
    path = tmp_path / "s.jsonl"
    res.store.save(path)
    res2 = compact(from_request(json.loads(json.dumps(res.request))), profile="claude", budget=25_000,
                   store=SourceStore(path))
    assert imgs[0] in _request_images(res2.request)


def _long_then_shots(n_text: int, n_shots: int, data: str, w: int, h: int) -> list[Message]:
    """A task, ``n_text`` long messages (the middle), then ``n_shots`` screenshot rounds (the tail)."""
    msgs = [Message(0, "user", [Part("text", text="task")])]
    msgs += [Message(1 + i, "assistant" if i % 2 == 0 else "user",
                     [Part("text", text=f"m{i} " + f"word{i} " * 3000)]) for i in range(n_text)]
    return msgs + [Message(m.id + n_text, m.role, m.parts) for m in _shots(n_shots, data, w, h)[1:]]


def test_pages_past_the_many_image_threshold_downscale_the_oversized_images_instead_of_capping_pages():
    # 15 screenshots of 1600x2600 in the tail: the pages take the request past 20 images, so the screenshots are
    # downscaled to 2000 px (from their own bytes) rather than the pages capped at 5 as before
    res = compact(_long_then_shots(40, 15, _png(1600, 2600), 1600, 2600), profile="claude", budget=60_000)
    imgs = _request_images(res.request)
    assert len(res.pages) > 5 and len(imgs) == len(res.pages) + 15 > 20
    sizes = [Image.open(io.BytesIO(base64.b64decode(b["source"]["data"]))).size for b in imgs]
    assert [s for s in sizes if s[0] != 1092] == [(1231, 2000)] * 15  # pages are 1092 px wide
    assert res.rewrites["images downscaled to a provider limit"] == 15
    assert validate(res.request, "anthropic", profile="claude") == [] and sdk_errors(res.request, "anthropic") == ""
    # the stored source keeps the originals
    assert {(q.width, q.height) for q in images_in(res.store.get(i) for i in res.store)} == {(1600, 2600)}


def test_too_many_images_in_the_tail_leave_room_for_pages():
    # 130 screenshots in the tail: 30 over the limit of 100, and the pages need room too; before, every page was
    # dropped (the tail's 100 images left none) and compaction refused
    res = compact(_long_then_shots(40, 130, _png(8, 8), 8, 8), profile="claude", budget=60_000)
    n_pages = len(res.pages)
    imgs = _request_images(res.request)
    # The tail's images are fitted beside the 18 pages planned; the placeholders cost more tokens than the 8x8
    # images they stand for, so one page is dropped afterwards (assemble._own_images: a lower count still fits):
    # 17 pages and 82 screenshots, 99 of the 100 images allowed.
    planned = n_pages + 1
    assert n_pages == 17 and len(imgs) == 99 and len(imgs) - n_pages == 100 - planned
    assert res.rewrites["oldest images replaced by a placeholder for the image count limit"] == 30 + planned
    results = [b for m in res.request["messages"] if isinstance(m["content"], list) for b in m["content"]
               if b["type"] == "tool_result"]
    assert results[30]["content"] == (f"shot 30\n[image not sent: 8x8 image/png, 77 bytes; the request keeps the "
                                      f"newest {100 - planned} images beside {planned} pages (profile claude "
                                      f"allows 100)]")
    assert [q["type"] for q in results[30 + planned]["content"]] == ["text", "image"]
    assert validate(res.request, "anthropic", profile="claude") == [] and sdk_errors(res.request, "anthropic") == ""
    assert res.tokens_after <= 60_000


def test_a_page_above_the_many_image_side_is_refused_by_the_profile():
    import dataclasses

    from snapglyph import InputError, profile, profile_names
    assert all(max(profile(n).page_size) <= (profile(n).many_image_max_side or 10**9) for n in profile_names())
    with pytest.raises(InputError, match=r"^profile claude: a 2016x1092 page exceeds the many-image limit of 2000 "
                                         r"px a side$"):
        dataclasses.replace(profile("claude"), page_size=(2016, 1092))


# ------------------------------------------------------------------------------------ item 12: the empty middle
def _empty_middle_source() -> list[Message]:
    msgs = [Message(0, "user", [Part("text", text="task")])]
    for i in range(8):
        msgs.append(Message(len(msgs), "assistant" if i % 2 == 0 else "user",
                            [Part("text", text=f"message {i} " + "x" * 6000)]))
    return msgs


def test_every_page_dropped_is_refused_unless_allowed():
    with pytest.raises(BudgetError, match=r"every page of the middle would be dropped: messages #1-#7 would not "
                                          r"be shown \(the budget is 2000 tokens"):
        compact(_empty_middle_source(), profile="claude", budget=2000, max_tokens=100)
    res = compact(_empty_middle_source(), profile="claude", budget=2000, max_tokens=100, allow_empty_middle=True)
    assert res.dropped_ids == res.middle_ids == [1, 2, 3, 4, 5, 6, 7] and not res.pages
    assert "note: every page of the middle was dropped: messages #1-#7 are not shown" in res.summary()
    assert compact(_empty_middle_source(), profile="claude", budget=3000, max_tokens=100).dropped_ids == [
        1, 2, 3, 4, 5, 6]  # one page shows #7 whole: not an empty middle


def test_cli_empty_middle_exits_non_zero_and_says_so(tmp_path):
    out = tmp_path / "req.json"
    r = run("compact", str(TRAJ), "--mode", "lines", "--budget", "8000", "--out", str(out))
    assert r.returncode != 0 and not out.exists()
    assert r.stderr.startswith("snapglyph: error: every page of the middle would be dropped: messages #2-#21")
    assert len(r.stderr.strip().splitlines()) == 1 and "--allow-empty-middle" in r.stderr
    r = run("compact", str(TRAJ), "--mode", "lines", "--budget", "8000", "--out", str(out), "--allow-empty-middle")
    assert r.returncode == 0, r.stderr
    assert "every page of the middle was dropped: messages #2-#21 are not shown" in r.stderr
    assert validate(json.loads(out.read_text()), "anthropic", profile="claude") == []


def test_a_middle_of_one_long_message_shows_its_newest_pages():
    """A middle that is mostly one 12,000-line log: the budget holds its newest pages, so they are sent (the rest
    of it named as not shown, recallable), not refused as if every page were dropped (found by a fresh-eyes run)."""
    import snapglyph
    log = "\n".join(f"12:00:{i % 60:02d} worker-{i % 7} finished batch {i} in {i * 37 % 1000} ms" for i in range(12000))
    msgs = [{"role": "user", "content": "task: find the slow worker"}, {"role": "assistant", "content": "ok"},
            {"role": "user", "content": log}, {"role": "assistant", "content": "done"},
            {"role": "user", "content": "next?"}]
    res = snapglyph.compact({"model": "claude-sonnet-4-5", "messages": msgs}, budget=20000)
    assert res.pages and res.middle_ids == [1, 2] and res.tokens_after <= 20000
    assert not any("every page of the middle" in n for n in res.notes)
    assert any(p.first_id == 2 for p in res.pages)
