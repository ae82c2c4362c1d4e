"""`snapglyph cost`: the numbers match an independent computation of the documented formulas."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from test_compactor import conversation

from conftest import ROOT
from snapglyph import cost_report

TRAJ = ROOT / "examples" / "swe-agent" / "marshmallow-code__marshmallow-1867.traj"


def test_rows_follow_the_documented_formulas():
    msgs = conversation()
    rows = cost_report(msgs, profiles=["claude", "openai"], budget=30_000)
    assert [(r.profile, r.scope) for r in rows] == [("claude", "whole"), ("claude", "middle"),
                                                    ("openai", "whole"), ("openai", "middle")]
    from snapglyph import build_document
    from snapglyph.raster.render import render_document
    pages = render_document(build_document(msgs), profile="claude")
    # Anthropic: ceil(w/28) * ceil(h/28); OpenAI gpt-5.4+ high: ceil(ceil(w/32) * ceil(h/32) * 1.2)
    claude = sum(math.ceil(p.width / 28) * math.ceil(p.height / 28) for p in pages)
    assert rows[0].image_tokens == claude and rows[0].pages == len(pages)
    pages = render_document(build_document(msgs), profile="openai")
    openai = sum(math.ceil(math.ceil(p.width / 32) * math.ceil(p.height / 32) * 1.2) for p in pages)
    assert rows[2].image_tokens == openai
    for r in rows:
        assert r.ratio == round(r.text_tokens / r.image_tokens, 3)
        assert r.text_method.startswith(("counted: tiktoken", "estimated: "))
    assert rows[0].text_method.endswith("x1.3")
    assert rows[1].messages < rows[0].messages


def test_cost_cli_json():
    r = subprocess.run([sys.executable, "-m", "snapglyph.cli", "cost", str(TRAJ), "-p", "claude", "-p", "qwen3-vl",
                        "--budget", "9000", "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["format"] == "swe-agent"
    assert {(x["profile"], x["scope"]) for x in data["rows"]} >= {("claude", "whole"), ("claude", "middle"),
                                                                  ("qwen3-vl", "whole")}


def test_plot(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is the optional [plot] extra")
    from snapglyph.report import plot
    rows = cost_report(conversation(rounds=5), profiles=["claude"])
    plot(rows, str(tmp_path / "c.png"))
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
