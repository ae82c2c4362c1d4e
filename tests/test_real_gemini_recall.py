"""Real Gemini CLI (from npm, :data:`real_clients.CLIS`) through ``snapglyph serve`` in front of the simulator: the
resumed session overflows, ``serve`` compacts it, the scripted model calls ``recall_messages`` and ``serve`` answers
it; the CLI sees only the final turn. Skips, saying why, where npm or the CLI is absent."""

from __future__ import annotations

import json
import uuid

import pytest
import real_clients as rc
from real_clients import ANSWER, PROMPT, conversation, installed, run

from snapglyph.serve.app import ServeConfig
from snapglyph.serve.run import Background
from snapglyph.testing import Simulator, Step, answer

pytest.importorskip("uvicorn")

WINDOW = 30_000
"""As tests/test_real_clients.py: above Gemini CLI's own system prompt and tools, below the resumed session."""


def _recalled(body: dict) -> str | None:
    parts = body["contents"][-1].get("parts") or []
    out = [p["functionResponse"]["response"]["output"] for p in parts
           if (p.get("functionResponse") or {}).get("name") == rc.RECALL]
    return out[-1] if out else None


def _declares_recall(body: dict) -> bool:
    return rc.RECALL in [d.get("name") for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]


def _script(dialect: str, body: dict) -> Step:
    if _declares_recall(body) and _recalled(body) is None:
        return Step(text="Let me read part 3 again.", tool_calls=((rc.RECALL, {"ids": "#7"}),))
    return answer(ANSWER)


def test_gemini_cli_gets_the_final_turn_of_a_recall_round(tmp_path):
    exe = installed("gemini")
    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    cwd.mkdir()
    rc.gemini_settings(home / ".gemini")
    rc.gemini_session(home / ".gemini", cwd, str(uuid.uuid4()))
    with Simulator(_script, provider="native", context_window=WINDOW) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state")) as bg:
        proc = run([exe, "--skip-trust", "-m", "gemini-3.1-pro-preview", "--resume", "latest", "-p", PROMPT], cwd,
                   {"HOME": str(home), "GEMINI_API_KEY": "offline-key", "GOOGLE_GEMINI_BASE_URL": bg.url,
                    "NO_COLOR": "1"})
    out = f"exit {proc.returncode}\nstdout: {proc.stdout[-1500:]}\nstderr: {proc.stderr[-3000:]}"
    conv = conversation(sim)
    assert [e["kind"] for e in conv[:3]] == ["overflow", "ok", "ok"], ([e["kind"] for e in conv], out)
    compacted, follow = conv[1]["body"], conv[2]["body"]
    assert _declares_recall(compacted) and conv[1]["images"]
    assert follow["contents"][:-2] == compacted["contents"]          # the compacted request, then the round
    assert [p.get("functionCall", {}).get("name") for p in follow["contents"][-2]["parts"]] == [None, rc.RECALL]
    recalled = _recalled(follow)
    assert recalled.startswith("#7 ") and "not held" not in recalled, recalled[:300]
    source = json.dumps(conv[0]["body"]["contents"], ensure_ascii=False)
    body_text = recalled.split("\n", 1)[1]
    assert body_text[:200] in source or json.dumps(body_text[:200], ensure_ascii=False)[1:-1] in source
    assert proc.returncode == 0 and ANSWER in proc.stdout and "Let me read part 3 again." in proc.stdout, out
    assert rc.RECALL not in proc.stdout + proc.stderr, out                   # the CLI never saw the call
