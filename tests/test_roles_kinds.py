"""Issue 31, item 2: roles and kinds survive.

User text sent in one turn with tool results (Anthropic, Gemini) stays a user message; an Anthropic ``document``
block is sent verbatim where the dialect is Anthropic (passthrough and tail) and drawn as what it is in the middle
(a text document's text; a PDF named with its size and page count), counted; a Gemini ``fileData`` part is kept in
Gemini and named by a placeholder elsewhere, counted.
"""

from __future__ import annotations

import base64
import json

import pytest

from sdk_oracle import sdk_errors

from snapglyph import compact, validate
from snapglyph.model.attachments import attachment_text
from snapglyph.readers.registry import from_request

DIALECTS = ("openai", "anthropic", "responses", "gemini")
PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj << /Type /Pages >> 2 0 obj << /Type /Page >> "
                       b"3 0 obj << /Type /Page >>\n%%EOF").decode()
PDF_DOC = {"type": "document", "title": "spec", "source": {"type": "base64", "media_type": "application/pdf",
                                                           "data": PDF}}
GS_FILE = {"fileData": {"fileUri": "gs://bucket/a.pdf", "mimeType": "application/pdf"}}


def anthropic_body(rounds: int) -> dict:
    msgs = [{"role": "user", "content": [{"type": "text", "text": "read the spec"}, PDF_DOC]}]
    for i in range(rounds):
        msgs.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "ls", "input": {}}]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "out " * 300},
            {"type": "text", "text": f"user words {i}"},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": f"doc body {i}"}}]})
    return {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": msgs}


def gemini_body(rounds: int) -> dict:
    c = [{"role": "user", "parts": [{"text": "look at this"}, GS_FILE]}]
    for i in range(rounds):
        c.append({"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]})
        c.append({"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "out " * 300}}},
                                            {"text": f"user words {i}"}]})
    return {"contents": c}


@pytest.mark.parametrize("body", [anthropic_body(2), gemini_body(2)], ids=["anthropic", "gemini"])
def test_user_text_beside_tool_results_stays_a_user_message(body):
    msgs = from_request(body).messages
    assert [(m.id, m.role) for m in msgs[:4]] == [(0, "user"), (1, "assistant"), (2, "tool"), (3, "user")]
    assert msgs[3].parts[0].text == "user words 0"
    assert [p.kind for p in msgs[2].parts] == ["tool_result"]


def test_user_words_of_a_tool_turn_are_in_the_snapshot_text():
    res = compact(anthropic_body(30), dialect="anthropic", budget=11000, max_tokens=100)
    snap = next(m for m in res.request["messages"] for b in m["content"]
                if b.get("type") == "text" and b["text"].startswith("snapglyph snapshot"))
    text = snap["content"][-1]["text"]
    assert "[#84 user] user words 27\n" in text and "doc body 27" not in text   # a document is no typed word
    assert res.store.get(3).role == "user" and res.store.get(3).parts[0].text == "user words 0"
    drawn = sum(1 for i in res.middle_ids if any("doc body" in (p.text or "") for p in res.store.get(i).parts))
    assert drawn == 28 and res.rewrites["documents and files drawn in the middle as what they are"] == drawn


def test_a_pdf_and_a_text_document_are_named_and_drawn_as_what_they_are():
    assert attachment_text(PDF_DOC) == "[document spec: application/pdf, 93 bytes, 2 pages]"
    assert attachment_text({"type": "document", "source": {"type": "text", "data": "abc"}}) == "[document]\nabc"


OWN_KIND = {"openai": {"type": "file", "file": {"filename": "spec",
                                                  "file_data": f"data:application/pdf;base64,{PDF}"}},
            "responses": {"type": "input_file", "filename": "spec",
                          "file_data": f"data:application/pdf;base64,{PDF}"},
            "gemini": {"inline_data": {"mime_type": "application/pdf", "data": PDF}}}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_documents_pass_through_verbatim_in_anthropic_and_as_their_own_kind_elsewhere(dialect):
    res = compact(anthropic_body(1), dialect=dialect, budget=100_000)
    sent = json.dumps(res.request)
    assert validate(res.request, dialect) == [] and sdk_errors(res.request, dialect) == ""
    named = f"documents and files the {dialect} dialect cannot carry sent as text naming them"
    own = f"documents sent as the {dialect} dialect's own kind of block"
    if dialect == "anthropic":
        assert res.request["messages"][0]["content"][1] == PDF_DOC and res.rewrites[named] == res.rewrites[own] == 0
    else:
        first = res.request["messages" if dialect == "openai" else "input" if dialect == "responses" else "contents"][0]
        blocks = first.get("content", first.get("parts"))
        assert OWN_KIND[dialect] in blocks and sent.count(PDF) == 1
        assert (res.rewrites[own], res.rewrites[named]) == (1, 1)          # the PDF carried, the text document named
        assert "doc body 0" in sent
    assert res.store.get(0).parts[1].meta["source_block"] == PDF_DOC       # the source, exact, in the store


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_gemini_file_is_kept_in_gemini_and_named_elsewhere(dialect):
    res = compact(gemini_body(1), dialect=dialect, budget=100_000)
    sent = json.dumps(res.request)
    assert validate(res.request, dialect) == []
    if dialect == "gemini":
        assert res.request["contents"][0]["parts"][1] == GS_FILE
    else:
        assert "image_url" not in sent and '"url": "gs://' not in sent and "input_image" not in sent
        assert "[file: application/pdf at gs://bucket/a.pdf]" in sent
        assert res.rewrites[f"documents and files the {dialect} dialect cannot carry sent as text naming them"] == 1


def test_a_pdf_sent_as_it_is_is_priced_by_its_pages():
    from snapglyph.compaction.estimate import TokenCosts
    from snapglyph.model.attachments import PDF_PAGE_TOKENS
    from snapglyph.providers.profiles import profile
    costs = TokenCosts(profile("claude"))
    with_pdf, without = from_request(anthropic_body(0)).messages[0], from_request(
        {"messages": [{"role": "user", "content": "read the spec"}]}).messages[0]
    assert costs.message(with_pdf) - costs.message(without) >= 2 * PDF_PAGE_TOKENS     # 2 pages
