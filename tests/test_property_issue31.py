"""Issue 31's property test: nothing lost, nothing misattributed, nothing a provider would reject.

Random conversations written in each of the four source formats (OpenAI chat, Anthropic messages, OpenAI Responses,
Gemini ``generateContent``), with parallel and duplicate tool calls, user text in the same turn as tool results,
documents, file parts, empty and malformed images, lone surrogates, and system and developer messages in odd places,
are compacted into each of the four dialects, and the request written is compacted again, twice, through JSON. After
every pass the request passes :func:`snapglyph.validate` and the official SDKs' request types; after the last, every
source message is byte-exact in the store under the id the reader gave it (the store is the truth), the request read
back and expanded gives every id its source role, and the examples mostly compact rather than take an error branch
(the share is counted and asserted).
"""

from __future__ import annotations

import base64
import io
import json
from collections import Counter

import pytest
from PIL import Image

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sdk_oracle import sdk_errors  # noqa: E402

from snapglyph import BudgetError, LimitError, SourceStore, compact, validate  # noqa: E402
from snapglyph.compaction.second_pass import expand_snapshots  # noqa: E402
from snapglyph.compaction.store import message_to_dict  # noqa: E402
from snapglyph.readers.registry import from_request  # noqa: E402

FORMATS = DIALECTS = ("openai", "anthropic", "responses", "gemini")
PROFILES = {"anthropic": "claude", "openai": "openai", "responses": "openai", "gemini": "gemini"}


def _png() -> str:
    buf = io.BytesIO()
    Image.new("L", (6, 4), 90).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


PNG = _png()
HTML = base64.b64encode(b"<html><body>502 Bad Gateway</body></html>").decode()
PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj << /Type /Page >>\n%%EOF").decode()
IMAGES = {"good": PNG, "empty": "", "html": HTML}
WORDS = st.sampled_from(["alpha", "beta", "x=1", "0x3f", "caf\u00e9", "\ud800", "\u6f22\u5b57", "\x1b[31mred\x1b[0m"])


def _text(draw, lo: int = 1, hi: int = 30) -> str:
    return " ".join(draw(st.lists(WORDS, min_size=lo, max_size=hi)))


@st.composite
def events(draw) -> list[tuple]:
    """An abstract conversation: ``("system", text, role)``, ``("user", parts)``, ``("round", calls, extra)``,
    ``("assistant", text)``; a part is ``("text", s)``, ``("image", key)``, ``("pdf",)``, ``("doc", s)`` or
    ``("file",)``; a call is ``(name, id, result text)``."""
    out: list[tuple] = [("system", "You are terse. " + _text(draw, 1, 4), "system")]
    if draw(st.booleans()):
        out.append(("system", "developer rules " + _text(draw, 1, 4), draw(st.sampled_from(["system", "developer"]))))
    first = [("text", "fix the parser " + _text(draw, 0, 3))]
    first += draw(st.lists(st.sampled_from([("image", "good"), ("image", "empty"), ("image", "html"), ("pdf",),
                                            ("doc", "the spec text"), ("file",)]), max_size=2))
    out.append(("user", first))
    tag = 0
    for _ in range(draw(st.integers(6, 12))):
        kind = draw(st.sampled_from(["round", "round", "round", "user", "assistant", "system"]))
        if kind == "system":
            out.append(("system", "a note " + _text(draw, 1, 3), draw(st.sampled_from(["system", "developer"]))))
        elif kind == "assistant":
            out.append(("assistant", "thinking aloud " + _text(draw, 5, 20) * draw(st.integers(1, 20))))
        elif kind == "user":
            parts = [("text", "please " + _text(draw, 1, 12))]
            parts += draw(st.lists(st.sampled_from([("image", "good"), ("image", "empty"), ("image", "html"),
                                                    ("doc", "notes"), ("file",), ("pdf",)]), max_size=2))
            out.append(("user", parts))
        else:
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                tag += 1
                cid = draw(st.sampled_from([f"c{tag}", f"c{tag}", "dup"]))     # now and then a repeated id
                calls.append((draw(st.sampled_from(["bash", "read", "edit"])), cid,
                              f"result {tag}: " + (_text(draw, 4, 12) + "\n") * draw(st.integers(60, 200))))
            extra = "and also check " + _text(draw, 1, 5) if draw(st.integers(0, 2)) == 0 else None
            out.append(("round", calls, extra))
    out.append(("user", [("text", "what now? " + _text(draw, 1, 5))]))
    return out


# ------------------------------------------------------------------------------------------- source formats


def _openai_part(p: tuple) -> dict:
    if p[0] == "image":
        data = IMAGES[p[1]]
        return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}" if data else ""}}
    if p[0] == "pdf":
        return {"type": "file", "file": {"filename": "a.pdf", "file_data": f"data:application/pdf;base64,{PDF}"}}
    return {"type": "text", "text": {"text": lambda: p[1], "pdf": lambda: "[a pdf]", "doc": lambda: p[1],
                                     "file": lambda: "gs://b/a.pdf"}[p[0]]()}


def _anthropic_part(p: tuple) -> dict:
    if p[0] == "image":
        return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": IMAGES[p[1]]}}
    if p[0] == "pdf":
        return {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}}
    if p[0] == "doc":
        return {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": p[1]}}
    return {"type": "text", "text": "gs://b/a.pdf" if p[0] == "file" else p[1]}


def _gemini_part(p: tuple) -> dict:
    if p[0] == "image":
        return {"inlineData": {"mimeType": "image/png", "data": IMAGES[p[1]]}}
    if p[0] == "pdf":
        return {"inlineData": {"mimeType": "application/pdf", "data": PDF}}
    if p[0] == "file":
        return {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://bucket/a.pdf"}}
    return {"text": p[1]}


def _responses_part(p: tuple) -> dict:
    if p[0] == "image":
        data = IMAGES[p[1]]
        return {"type": "input_image", "image_url": f"data:image/png;base64,{data}" if data else ""}
    if p[0] == "pdf":
        return {"type": "input_file", "filename": "a.pdf", "file_data": f"data:application/pdf;base64,{PDF}"}
    return {"type": "input_text", "text": _openai_part(p)["text"]}


def to_openai(evs: list[tuple]) -> dict:
    msgs: list[dict] = []
    for e in evs:
        if e[0] == "system":
            msgs.append({"role": e[2], "content": e[1]})
        elif e[0] == "user":
            msgs.append({"role": "user", "content": [_openai_part(p) for p in e[1]]})
        elif e[0] == "assistant":
            msgs.append({"role": "assistant", "content": e[1]})
        else:
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": n, "arguments": "{}"}} for n, cid, _ in e[1]]})
            msgs += [{"role": "tool", "tool_call_id": cid, "content": r} for _, cid, r in e[1]]
            if e[2]:
                msgs.append({"role": "user", "content": e[2]})
    return {"model": "gpt-4o", "messages": msgs}


def to_anthropic(evs: list[tuple]) -> dict:
    system = [e[1] for e in evs[:2] if e[0] == "system"]
    msgs: list[dict] = []
    for e in evs[len(system):]:
        if e[0] == "system":  # no system role in the middle: the note is user text
            msgs.append({"role": "user", "content": [{"type": "text", "text": f"[{e[2]}] {e[1]}"}]})
        elif e[0] == "user":
            msgs.append({"role": "user", "content": [_anthropic_part(p) for p in e[1]]})
        elif e[0] == "assistant":
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": e[1]}]})
        else:
            msgs.append({"role": "assistant", "content": [{"type": "tool_use", "id": cid, "name": n, "input": {}}
                                                          for n, cid, _ in e[1]]})
            msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid, "content": r}
                                                     for _, cid, r in e[1]]
                         + ([{"type": "text", "text": e[2]}] if e[2] else [])})
    return {"model": "claude-sonnet-4-5", "max_tokens": 300, "system": "\n\n".join(system), "messages": msgs}


def to_responses(evs: list[tuple]) -> dict:
    items: list[dict] = []
    for e in evs:
        if e[0] == "system":
            items.append({"type": "message", "role": e[2], "content": e[1]})
        elif e[0] == "user":
            items.append({"type": "message", "role": "user", "content": [_responses_part(p) for p in e[1]]})
        elif e[0] == "assistant":
            items.append({"type": "message", "role": "assistant", "content": e[1]})
        else:
            items += [{"type": "function_call", "call_id": cid, "name": n, "arguments": "{}"} for n, cid, _ in e[1]]
            items += [{"type": "function_call_output", "call_id": cid, "output": r} for _, cid, r in e[1]]
            if e[2]:
                items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": e[2]}]})
    return {"model": "gpt-4o", "input": items}


def to_gemini(evs: list[tuple]) -> dict:
    contents: list[dict] = []
    for e in evs[1:]:
        if e[0] == "system":
            contents.append({"role": "user", "parts": [{"text": f"[{e[2]}] {e[1]}"}]})
        elif e[0] == "user":
            contents.append({"role": "user", "parts": [_gemini_part(p) for p in e[1]]})
        elif e[0] == "assistant":
            contents.append({"role": "model", "parts": [{"text": e[1]}]})
        else:
            contents.append({"role": "model", "parts": [{"functionCall": {"name": n, "args": {}, "id": cid}}
                                                        for n, cid, _ in e[1]]})
            contents.append({"role": "user", "parts": [
                {"functionResponse": {"name": n, "id": cid, "response": {"output": r}}} for n, cid, r in e[1]]
                + ([{"text": e[2]}] if e[2] else [])})
    return {"systemInstruction": {"parts": [{"text": evs[0][1]}]}, "contents": contents}


WRITERS = {"openai": to_openai, "anthropic": to_anthropic, "responses": to_responses, "gemini": to_gemini}


# ------------------------------------------------------------------------------------------------- the test


def _exact(m) -> str:
    return json.dumps(message_to_dict(m), ensure_ascii=True, sort_keys=True)


def _one_case(evs: list[tuple], fmt: str, dialect: str, budget: int) -> str:
    """Compact the body three times; check every pass; return the first pass's outcome."""
    body = WRITERS[fmt](evs)
    source = from_request(json.loads(json.dumps(body))).messages
    orig = {m.id: _exact(m) for m in source}
    roles = {m.id: m.role for m in source}
    store = SourceStore()
    req, outcome = body, None
    for n in range(3):
        try:
            res = compact(json.loads(json.dumps(req)), profile=PROFILES[dialect], dialect=dialect,
                          budget=budget - 100 * n, max_tokens=300, store=store, allow_empty_middle=True)
        except (BudgetError, LimitError):
            outcome = outcome or "error"
            break
        outcome = outcome or ("passthrough" if res.passthrough else "compacted")
        req = res.request
        assert validate(req, dialect, profile=PROFILES[dialect]) == [], (n, validate(req, dialect))
        assert sdk_errors(req, dialect) == ""
    assert {i: _exact(store.get(i)) for i in orig if i in store} == {i: orig[i] for i in orig if i in store}
    if outcome != "error":
        assert set(orig) <= set(store)                                 # every source message kept, by its id
        back = expand_snapshots(from_request(json.loads(json.dumps(req))).messages, store, read_back=True)
        assert {m.id: m.role for m in back if m.id in roles} == {m.id: roles[m.id] for m in back if m.id in roles}
    return outcome


COMBOS = [(f, d) for f in FORMATS for d in DIALECTS]


def test_every_format_and_dialect_keeps_every_source():
    outcomes: Counter = Counter()
    seen: Counter = Counter()

    @settings(max_examples=32, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck),
              database=None)
    @given(evs=events(), budget=st.sampled_from([8000, 10000, 13000]))
    def run(evs, budget):
        fmt, dialect = COMBOS[sum(seen.values()) % len(COMBOS)]  # every source format into every dialect, in turn
        seen[fmt, dialect] += 1
        outcomes[_one_case(evs, fmt, dialect, budget)] += 1

    run()
    total = sum(outcomes.values())
    assert set(seen) == set(COMBOS), seen
    assert total >= 32 and outcomes["compacted"] >= 0.75 * total, outcomes    # mostly compacted, not the error branch
