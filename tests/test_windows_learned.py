"""Windows learned per upstream and model (issue 35 item 3; snapglyph.compaction.windows): serve keeps them in its
state folder and shows them on /snapglyph/status, and a second, larger conversation to the same model, refused with a
body that names no number, is compacted before it is sent (it is over what the first one's refusal proved; issue 35
item 3) and aimed at a third of that refusal, not at a third of itself."""
from __future__ import annotations

import json

import pytest

from snapglyph.testing import Simulator, answer

WINDOW = 8_000
MODEL = "gpt-4.1"


def _body(words: str, turns: int) -> dict:
    msgs = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(turns):
        msgs.append({"role": "user" if i % 2 == 0 else "assistant",
                     "content": f"{words} step {i}: " + "".join(f"line {j} of the log: ok\n" for j in range(60))})
    return {"model": MODEL, "max_tokens": 512, "messages": msgs}


def test_serve_learns_the_window_of_a_model_and_shows_it(tmp_path):
    pytest.importorskip("uvicorn", reason="snapglyph serve needs the `serve` extra")
    import httpx

    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.run import Background
    with Simulator([answer("ok")] * 2, provider="openai-responses", context_window=WINDOW) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state")).start() as bg:
        h = {"authorization": "Bearer x"}
        first = httpx.post(bg.url + "/v1/chat/completions", json=_body("alpha", 30), headers=h, timeout=120)
        status = httpx.get(bg.url + "/snapglyph/status").json()
        second = httpx.post(bg.url + "/v1/chat/completions", json=_body("beta", 34), headers=h, timeout=120)
        after = httpx.get(bg.url + "/snapglyph/status").json()
        kinds = [e["kind"] for e in sim.log]
        sizes = [e.get("prompt_tokens") for e in sim.log]
        base = sim.base_url
    assert first.status_code == second.status_code == 200 and kinds == ["overflow", "ok", "ok"]
    (learned,) = status["windows"]
    assert (learned["upstream"], learned["model"], learned["window"]) == (base, MODEL, None)
    assert 0 < learned["accepted"] < WINDOW < learned["refused"]       # the retry answered, the request refused
    tokens_before = sorted(c["tokens_before"] for c in after["conversations"])
    assert sizes[2] < sizes[0] and tokens_before[1] > learned["refused"]   # larger, compacted before it was sent
    (again,) = after["windows"]
    assert again["refused"] == learned["refused"] and again["accepted"] >= learned["accepted"]
    windows = [c["window"] for c in after["conversations"]]
    assert windows == [learned["refused"] // 3] * 2      # both aimed at a third of the smaller refusal, learned
    saved = json.loads((tmp_path / "state" / "windows.json").read_text())
    assert list(saved) == [f"{base} {MODEL}"]
