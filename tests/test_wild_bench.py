"""bench/wild.py --tiny: issue 35's goal table on a quick subset (a refusal after a compaction and sglang's wording,
through ``serve`` in the Anthropic and OpenAI chat dialects and the LangChain adapter); every cell recovered on the
first retry, counted from the simulator's log."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))


def test_every_tiny_cell_recovers_on_the_first_retry():
    pytest.importorskip("uvicorn", reason="snapglyph serve needs the `serve` extra")
    pytest.importorskip("langchain.agents", reason="langchain>=1 not installed (the `integrations` extra)")
    pytest.importorskip("langchain_openai", reason="langchain-openai not installed (the `integrations` extra)")
    import wild
    res = wild.run(tiny=True)
    got = {k: (c["verdict"], c["kinds"]) for k, c in res["cells"].items()}
    want = {}
    for door in wild.TINY[1]:
        want[("refusal after a compaction", door)] = ("recovered", ["overflow", "refused", "ok"])
        want[("sglang 'The input (N tokens) is longer'", door)] = ("recovered", ["overflow", "ok"])
    assert got == want
    text = wild.section(res, tiny=True)
    assert "6 recovered on the first retry, 0 ended with the error the issue names, 0 failed, 0 n/a" in text


@pytest.mark.parametrize("door", ["LangChain", "LiteLLM", "pydantic-ai", "Agents SDK"])
def test_adapters_meet_image_and_body_caps_and_relay_a_reserve_alone(door):
    """The adapters read an error by serve's rule (compaction.error_read through integrations._faults): an
    image-count cap and a 413 body cap are retried once under the cap (the client's own images in its first turn
    replaced, oldest first, even where the request fits its budget), and an output reserve that alone fills the
    window is the provider's error, sent once."""
    pytest.importorskip("uvicorn", reason="snapglyph serve needs the `serve` extra")
    import wild
    if door not in wild.doors():
        pytest.skip(f"{door}: its framework is not installed (the `integrations` extra)")
    res = wild.run(only_doors=(door,), only_behaviors=("image-count cap", "413 body cap", "output reserve alone"))
    got = {b: (c["verdict"], c["kinds"]) for (b, _), c in res["cells"].items()}
    assert got == {"image-count cap, the dialect's wording": ("recovered", ["limit", "ok"]),
                   "image-count cap, the other wording": ("recovered", ["injected", "ok"]),
                   "413 body cap (40,000 bytes)": ("recovered", ["body_cap", "ok"]),
                   "output reserve alone over the window": ("ended", ["overflow"])}
