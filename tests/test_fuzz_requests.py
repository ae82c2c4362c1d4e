"""Fuzz: random conversations through compact() for all three dialects (issue 12).

Conversations with repeated and unsafe tool call ids, parallel calls, missing and extra results, images of every
kind (real PNG/JPEG/GIF, a JPEG labelled PNG, HTML and PDF labelled as images, base64 that does not decode, a BMP,
a URL image, one wider than the many-image limit), an opening assistant greeting. Examples are mostly valid
conversations at budgets they fit (compaction happens on most, the error branch is not what is tested). Every output
must pass ``validate()`` and the SDKs' own request types, pair every tool result with the call that produced it,
and account for every input message (sent in the head or tail, shown as pages, or recallable from the store).
"""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from sdk_oracle import sdk_errors  # noqa: E402
from snapglyph import compact  # noqa: E402
from snapglyph.model.messages import Message, Part  # noqa: E402
from snapglyph.providers.validation import validate  # noqa: E402


def _img(fmt: str, size=(4, 4)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", size, (10, 200, 90)).save(buf, format=fmt)
    return base64.b64encode(buf.getvalue()).decode("ascii")


IMAGES = [
    ("image/png", _img("PNG")), ("image/jpeg", _img("JPEG")), ("image/gif", _img("GIF")),
    ("image/png", _img("JPEG")),                                                  # JPEG labelled PNG
    ("image/png", base64.b64encode(b"<html><body>502</body></html>").decode()),   # HTML labelled PNG
    ("image/jpeg", base64.b64encode(b"%PDF-1.4\n%%EOF").decode()),                # PDF labelled JPEG
    ("image/png", "not*base64*at*all"),                                           # does not decode
    ("image/png", _img("BMP")),                                                   # a format providers refuse
    ("image/png", _img("PNG", (2100, 30))),                                       # wider than 2000 px
    ("url", "https://example.com/shot.png"),                                      # a URL image
]
CALL_IDS = ["a", "a", "b", "call|7", "", "toolu_01"]   # repeats, an unsafe one, a missing one
NAMES = ["read", "bash", "edit_file"]


def image_part(k: int) -> Part:
    mt, data = IMAGES[k]
    return Part("image", url=data) if mt == "url" else Part("image", media_type=mt, data=data)


@st.composite
def conversations(draw) -> list[Message]:
    msgs: list[Message] = [Message(0, "system", [Part("text", text="You are terse.")])]
    if draw(st.booleans()):
        msgs.append(Message(len(msgs), "assistant", [Part("text", text="Hello! What shall we do?")]))
    msgs.append(Message(len(msgs), "user", [Part("text", text="Fix the failing test in src/app.py.")]))
    tag = 0
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["tools", "tools", "tools", "text", "user"]))
        if kind == "user":
            parts = [Part("text", text=draw(st.text(min_size=1, max_size=60)) + " please")]
            parts += [image_part(draw(st.integers(0, len(IMAGES) - 1))) for _ in range(draw(st.integers(0, 2)))]
            msgs.append(Message(len(msgs), "user", parts))
            continue
        if kind == "text":
            msgs.append(Message(len(msgs), "assistant", [Part("text", text="ok " + "z" * draw(st.integers(0, 900)))]))
            continue
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            tag += 1
            calls.append(Part("tool_call", name=draw(st.sampled_from(NAMES)), arguments=json.dumps({"tag": tag}),
                              call_id=draw(st.sampled_from(CALL_IDS))))
        msgs.append(Message(len(msgs), "assistant", [Part("text", text="working")] * draw(st.integers(0, 1))
                            + calls))
        # now and then a call without a result (only where its id is its own: a result's id names one call then)
        ids = [c.call_id for c in calls]
        answered = [c for c in calls if ids.count(c.call_id) > 1 or not c.call_id or draw(st.integers(0, 9)) > 0]
        one_message = draw(st.booleans())                                   # results together or one per message
        results = []
        for c in answered:
            content = [Part("text", text=f"result of tag {json.loads(c.arguments)['tag']}: "
                                         + "r" * draw(st.integers(0, 1500)))]
            if draw(st.integers(0, 4)) == 0:
                content.append(image_part(draw(st.integers(0, len(IMAGES) - 1))))
            results.append(Part("tool_result", call_id=c.call_id, name=c.name, content=content))
        if draw(st.integers(0, 12)) == 0:                                   # now and then a result with no call
            results.append(Part("tool_result", call_id="ghost", content=[Part("text", text="stray output")]))
        for group in ([results] if one_message else [[r] for r in results]):
            if group:
                msgs.append(Message(len(msgs), "tool", group))
    msgs.append(Message(len(msgs), "assistant", [Part("text", text="Done.")]))
    return msgs


def _pairs(req: dict, dialect: str) -> list[tuple[str, str]]:
    """(call arguments, result text) of every tool result, paired through the request's own ids."""
    if dialect == "anthropic":
        blocks = [b for m in req["messages"] if isinstance(m["content"], list) for b in m["content"]]
        args = {b["id"]: json.dumps(b["input"]) for b in blocks if b["type"] == "tool_use"}
        res = [(b["tool_use_id"], b.get("content", "")) for b in blocks if b["type"] == "tool_result"]
        res = [(i, c if isinstance(c, str) else " ".join(q.get("text", "") for q in c)) for i, c in res]
    elif dialect == "openai":
        args = {c["id"]: c["function"]["arguments"] for m in req["messages"] for c in m.get("tool_calls") or []}
        res = [(m["tool_call_id"], m["content"]) for m in req["messages"] if m["role"] == "tool"]
    else:
        args = {i["call_id"]: i["arguments"] for i in req["input"] if i["type"] == "function_call"}
        res = [(i["call_id"], i["output"] if isinstance(i["output"], str)
                else " ".join(q.get("text", "") for q in i["output"])) for i in req["input"]
               if i["type"] == "function_call_output"]
    return [(args[i], text) for i, text in res]


@pytest.mark.parametrize("dialect", ["anthropic", "openai", "responses"])
@settings(max_examples=18, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(msgs=conversations(), budget=st.sampled_from([7_000, 12_000, 40_000]))
def test_random_conversations_compact_to_requests_providers_accept(dialect, msgs, budget):
    profile = "claude" if dialect == "anthropic" else "openai"
    res = compact(msgs, profile=profile, dialect=dialect, budget=budget, max_tokens=500, allow_empty_middle=True)
    req = res.request
    assert validate(req, dialect, profile=profile) == []
    assert sdk_errors(req, dialect) == ""
    assert res.tokens_after <= budget
    # every result answers the call that produced it (or is the error result of a call that had none)
    for args, text in _pairs(req, dialect):
        tag = json.loads(args)["tag"]
        assert text.startswith(f"result of tag {tag}:") or text.startswith("(no result was recorded"), (args, text)
    # every input message is accounted for: sent, shown or recallable; only empty ones may be removed
    sent = set(res.head_ids) | set(res.tail_ids) | set(res.middle_ids)
    removed = {m.id for m in msgs} - sent
    assert len(removed) <= res.rewrites["empty messages removed"]
    for i in res.middle_ids:
        assert res.store.get(i).id == i
