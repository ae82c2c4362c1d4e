"""Property tests over random well-formed conversations: valid, inside limits, smaller, nothing lost."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from snapglyph import BudgetError, Message, Part, compact, recall, validate
from snapglyph.compaction.recall import source_text


def _png(w: int, h: int) -> Part:
    buf = io.BytesIO()
    Image.fromarray(np.full((h, w), 128, np.uint8)).save(buf, "PNG")
    return Part("image", media_type="image/png", data=base64.b64encode(buf.getvalue()).decode(), width=w, height=h)


texts = st.one_of(
    st.text(min_size=1, max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=200, max_size=3000),
    st.just("\x1b[31mred\x1b[0m\r\nline\tx\x00\u0301\ud800"),
)


@st.composite
def conversations(draw):
    msgs = [Message(0, "system", [Part("text", text="system prompt")]),
            Message(1, "user", [Part("text", text=draw(texts))])]
    for r in range(draw(st.integers(2, 14))):
        if draw(st.booleans()):
            n = draw(st.integers(1, 3))
            calls = [Part("tool_call", name=draw(st.sampled_from(["bash", "read", "grep"])),
                          arguments=json.dumps({"q": draw(texts)}), call_id=f"c{r}_{k}") for k in range(n)]
            msgs.append(Message(len(msgs), "assistant", [Part("text", text=draw(texts))] + calls))
            for c in calls:
                content = [Part("text", text=draw(texts))]
                if draw(st.integers(0, 5)) == 0:
                    content.append(_png(draw(st.integers(1, 64)), draw(st.integers(1, 64))))
                msgs.append(Message(len(msgs), "tool", [Part("tool_result", call_id=c.call_id, name=c.name,
                                                             content=content)]))
        else:
            msgs.append(Message(len(msgs), "assistant", [Part("text", text=draw(texts))]))
            msgs.append(Message(len(msgs), "user", [Part("text", text=draw(texts))]))
    return msgs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversations(), st.sampled_from(["anthropic", "openai", "responses"]),
       st.sampled_from(["claude", "openai"]), st.floats(0.3, 0.9))
def test_compaction_properties(msgs, dialect, prof, share):
    total = compact(msgs, profile=prof, dialect=dialect, budget=10**9, max_tokens=256).tokens_after
    budget = max(300, int(total * share))
    try:
        res = compact(msgs, profile=prof, dialect=dialect, budget=budget, max_tokens=256)
    except BudgetError as e:
        assert e.budget == budget and e.needed is not None and e.needed > 0
        return
    assert validate(res.request, dialect, profile=prof) == []
    assert res.tokens_after <= budget
    if not res.passthrough:
        assert res.tokens_after < res.tokens_before
    by_id = {m.id: m for m in msgs}
    for i, text in recall(res.store, res.middle_ids).items() if res.middle_ids else []:
        assert text == source_text(by_id[i])


_B64 = base64.b64encode(bytes(range(256)) * 2).decode()  # 684 characters of base64


@given(st.lists(st.sampled_from([_B64, _B64[:300], _B64[:255], "x" * 300, "data:image/png;base64,", " ", "\n",
                                 "\u3000", "é", "+/", "==", "word", "a1" * 130]), max_size=12))
def test_replace_blobs_word_check_changes_nothing(pieces):
    """The whitespace-free-word check before the blob pattern skips only texts the pattern leaves alone."""
    from snapglyph.model.document import _BLOB_RE, _blob_placeholder, replace_blobs

    text = "".join(pieces)
    assert replace_blobs(text) == _BLOB_RE.sub(_blob_placeholder, text)
