"""Fuzz: random conversations through compact() for all four dialects (issue 12).

Conversations with repeated and unsafe tool call ids, tool names providers refuse, parallel calls, missing and extra
results, images of every kind (real PNG/JPEG/GIF, a JPEG labelled PNG, HTML and PDF labelled as images, base64 that
does not decode, a BMP, a URL image, ones wider or taller than the many-image limit, rounds of several screenshots),
an opening assistant greeting. Examples are mostly valid conversations at budgets they fit (compaction happens on
most, the error branch is not what is tested). Every output must pass ``validate()`` and the SDKs' own request types
(google-genai's for Gemini), pair every tool result with the call that produced it, keep every image within the
profile's limits, and account for every input message (sent in the head or tail, shown as pages, or recallable from
the store). A second test drives screenshot-heavy sessions past the 20-image threshold of Claude's many-image rule.
"""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings, target  # noqa: E402
from hypothesis import strategies as st
from sdk_oracle import sdk_errors  # noqa: E402

from snapglyph import compact  # noqa: E402
from snapglyph.model.images import check_image  # noqa: E402
from snapglyph.model.messages import Message, Part, images_in  # noqa: E402
from snapglyph.providers.profiles import profile as get_profile  # noqa: E402
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
    ("image/jpeg", _img("JPEG", (40, 2600))),                                     # taller than 2000 px
    ("url", "https://example.com/shot.png"),                                      # a URL image
]
CALL_IDS = ["a", "a", "b", "call|7", "", "toolu_01"]   # repeats, an unsafe one, a missing one
NAMES = ["read", "bash", "edit_file", "fs.read", "multi_tool_use.parallel"]   # the last two refused by providers


def image_part(k: int) -> Part:
    mt, data = IMAGES[k]
    return Part("image", url=data) if mt == "url" else Part("image", media_type=mt, data=data)


@st.composite
def conversations(draw, rounds=(1, 14), shots=(2, 6),
                  kinds=("tools", "tools", "tools", "text", "user", "shots")) -> list[Message]:
    msgs: list[Message] = [Message(0, "system", [Part("text", text="You are terse.")])]
    if draw(st.booleans()):
        msgs.append(Message(len(msgs), "assistant", [Part("text", text="Hello! What shall we do?")]))
    msgs.append(Message(len(msgs), "user", [Part("text", text="Fix the failing test in src/app.py.")]))
    tag = 0
    for _ in range(draw(st.integers(*rounds))):
        kind = draw(st.sampled_from(kinds))
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
            n_images = draw(st.integers(*shots)) if kind == "shots" else int(draw(st.integers(0, 4)) == 0)
            content += [image_part(draw(st.integers(0, len(IMAGES) - 1))) for _ in range(n_images)]
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
    elif dialect == "gemini":
        parts = [p for c in req["contents"] for p in c["parts"]]
        args = {p["functionCall"]["id"]: json.dumps(p["functionCall"]["args"]) for p in parts if "functionCall" in p}
        res = [(p["functionResponse"]["id"], next(iter(p["functionResponse"]["response"].values())))
               for p in parts if "functionResponse" in p]
    else:
        args = {i["call_id"]: i["arguments"] for i in req["input"] if i["type"] == "function_call"}
        res = [(i["call_id"], i["output"] if isinstance(i["output"], str)
                else " ".join(q.get("text", "") for q in i["output"])) for i in req["input"]
               if i["type"] == "function_call_output"]
    return [(args[i], text) for i, text in res]


def _image_sizes(req: dict) -> list[tuple[int, int] | None]:
    """Pixel size of every base64 image of a request (``None`` for one given by URL), read from its bytes."""
    found: list[tuple[int, int] | None] = []

    def walk(v):
        if isinstance(v, dict):
            url = v.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url          # chat: {"url": ...}; Responses: a str
            data = (v.get("data") if v.get("type") == "base64" or "mime_type" in v
                    else url.split(",", 1)[1] if isinstance(url, str) and url.startswith("data:") else None)
            if isinstance(data, str):
                found.append(Image.open(io.BytesIO(base64.b64decode(data))).size)
            elif v.get("type") == "url" or "file_data" in v or isinstance(url, str):
                found.append(None)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(req.get("messages") or req.get("input") or req.get("contents"))
    return found


PROFILES = {"anthropic": "claude", "openai": "openai", "responses": "openai", "gemini": "gemini"}


def _check(res, msgs: list[Message], dialect: str, budget: int) -> list[tuple[int, int] | None]:
    """What every compaction must hold (see the module docstring); returns the request's image sizes."""
    profile = PROFILES[dialect]
    req = res.request
    assert validate(req, dialect, profile=profile) == []
    assert sdk_errors(req, dialect) == ""
    assert res.tokens_after <= budget
    # a refused tool name is renamed, the same way in every call, result and definition (validate checks them)
    assert set(res.renamed_tools) <= {"fs.read", "multi_tool_use.parallel"}
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
    # the image limits, read from the bytes: the count, and above 20 images on Claude no side over 2000 px
    sizes = _image_sizes(req)
    prof = get_profile(profile)
    assert len(sizes) <= prof.max_images
    if prof.many_image_threshold is not None and len(sizes) > prof.many_image_threshold:
        assert all(s is None or max(s) <= prof.many_image_max_side for s in sizes), sizes
    return sizes


@pytest.mark.parametrize("dialect", ["anthropic", "openai", "responses", "gemini"])
@settings(max_examples=18, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(msgs=conversations(), budget=st.sampled_from([7_000, 12_000, 40_000]))
def test_random_conversations_compact_to_requests_providers_accept(dialect, msgs, budget):
    res = compact(msgs, profile=PROFILES[dialect], dialect=dialect, budget=budget, max_tokens=500,
                  allow_empty_middle=True)
    _check(res, msgs, dialect, budget)


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(msgs=conversations(rounds=(11, 16), shots=(2, 5), kinds=("shots",)),
       budget=st.sampled_from([12_000, 40_000, 150_000]))
def test_screenshot_sessions_meet_the_many_image_rule(msgs, budget):
    """Every round a screenshot round: at least 22 images in the input, so a request that keeps most of them
    (all at the largest budget, which most fit) holds more than 20 and the many-image rule applies; one that fits
    the budget sends every image a provider can read (the others become placeholders)."""
    res = compact(msgs, profile="claude", dialect="anthropic", budget=budget, max_tokens=500,
                  allow_empty_middle=True)
    sizes = _check(res, msgs, "anthropic", budget)
    target(float(len(sizes)))
    if res.passthrough:
        readable = [q for q in images_in(msgs) if q.url or not check_image(q.data).problem]
        assert len(sizes) == min(len(readable), 100)
