"""OpenAI Agents SDK adapter against the local simulator: the run overflows, recovers compacted, recall works."""
import asyncio
import json

import pytest

agents = pytest.importorskip("agents", reason="openai-agents not installed (the `integrations` extra)")
from openai import AsyncOpenAI

from snapglyph import SourceStore
from snapglyph.integrations.openai_agents import InputFilter, RecoveringModel
from snapglyph.testing import Simulator, answer, call

FILES = {f"f{i}.txt": "".join(f"line {j} of file {i}: value={j * i}\n" for j in range(80)) for i in range(6)}


def _run(sim, flt, tools_extra=()):
    @agents.function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        return FILES[path]

    client = AsyncOpenAI(base_url=sim.base_url + "/v1", api_key="x", max_retries=0)
    model = RecoveringModel(agents.OpenAIResponsesModel(model="gpt-4o", openai_client=client), flt)
    agent = agents.Agent(name="a", instructions="Read files.", model=model, tools=[read_file, *tools_extra])
    cfg = agents.RunConfig(call_model_input_filter=flt, tracing_disabled=True)
    return asyncio.run(agents.Runner.run(agent, "Read all files.", run_config=cfg, max_turns=20))


def test_overflow_recovers_with_pages_and_recall(tmp_path):
    script = [call(("read_file", {"path": p})) for p in FILES] + [call(("recall_messages", {"ids": "#3"})),
                                                                  answer("final answer")]
    flt = InputFilter(tmp_path / "store.jsonl", budget=100_000, max_tokens=200)
    with Simulator(script, provider="openai", context_window=4000,
                   image_profile={"responses": "openai"}) as sim:
        result = _run(sim, flt, [flt.recall_tool()])
        statuses = [e.get("status") for e in sim.log]
        bodies = [json.loads(e["raw"]) for e in sim.log]
    assert result.final_output == "final answer"
    assert statuses == [200] * 5 + [400] + [200] * 3   # the 6th call overflowed and its retry went through
    assert flt.budget == 4000                           # the limit the simulator's error body named
    assert flt.last is not None and len(flt.last.pages) == 1 and flt.last.middle_ids == list(range(2, 12))
    last = bodies[-1]
    assert "input_image" in json.dumps(last)            # later calls carried the page image
    assert [i.get("type") for i in last["input"]] == ["message", "message", "function_call", "function_call_output",
                                                      "function_call", "function_call_output"]
    # recall_messages answered with the exact text of message #3 (the first file read) from the on-disk store
    assert last["input"][-1]["output"] == "#3: " + FILES["f0.txt"]
    again = SourceStore(tmp_path / "store.jsonl")
    assert len(again) == len(flt.store) >= 10
