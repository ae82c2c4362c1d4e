"""LangChain v1 middleware against the local simulator: the agent overflows, recovers compacted, recall works, and
the agent state keeps the whole history."""
import json

import pytest

pytest.importorskip("langchain.agents", reason="langchain>=1 not installed (the `integrations` extra)")
pytest.importorskip("langchain_openai", reason="langchain-openai not installed (the `integrations` extra)")
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from snapglyph_agent_demo.simulator import Simulator, answer, call

from snapglyph import SourceStore
from snapglyph.integrations.langchain import SnapglyphMiddleware

FILES = {f"f{i}.txt": "".join(f"line {j} of file {i}: value={j * i}\n" for j in range(80)) for i in range(6)}


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return FILES[path]


def _agent(sim, mw):
    model = ChatOpenAI(model="gpt-4o", base_url=sim.base_url + "/v1", api_key="x", max_retries=0, max_tokens=200)
    return create_agent(model, tools=[read_file], system_prompt="Read files.", middleware=[mw])


def test_overflow_recovers_with_pages_and_recall(tmp_path):
    script = [call(("read_file", {"path": p})) for p in FILES] + [call(("recall_messages", {"ids": "#3"})),
                                                                  answer("final answer")]
    mw = SnapglyphMiddleware(tmp_path / "store.jsonl", budget=100_000, max_tokens=200)
    with Simulator(script, provider="openai", context_window=4000) as sim:
        result = _agent(sim, mw).invoke({"messages": [{"role": "user", "content": "Read all files."}]})
        statuses = [e.get("status") for e in sim.log]
        bodies = [json.loads(e["raw"]) for e in sim.log]
    assert result["messages"][-1].content == "final answer"
    assert statuses == [200] * 5 + [400] + [200] * 3   # the 6th call overflowed and its retry went through
    assert mw.compactor.budget == 4000                  # the window the simulator's error body named
    last = mw.compactor.last
    assert last is not None and len(last.pages) == 1 and last.middle_ids == list(range(2, 12))
    # what reached the server: system, task, the snapshot (one page image + text), then the tail verbatim
    sent = bodies[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "user", "assistant", "tool", "assistant", "tool"]
    assert [p["type"] for p in sent[2]["content"]][:1] == ["image_url"]
    assert sent[2]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert sent[0]["content"] == "Read files." and sent[1]["content"] == "Read all files."
    assert sum(sum(1 for p in m["content"] if p.get("type") == "image_url") for m in sent
               if isinstance(m["content"], list)) == 1
    # recall_messages answered with the exact text of message #3 (the first file read) from the on-disk store
    assert sent[-1]["content"] == "#3: " + FILES["f0.txt"]
    # the agent state was not rewritten: every file's full text is still in its tool messages
    tools = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [m.content for m in tools[:6]] == list(FILES.values())
    assert len(result["messages"]) == 1 + 2 * 7 + 1     # task, 7 calls with their results, the answer
    assert len(SourceStore(tmp_path / "store.jsonl")) == len(mw.compactor.store) >= 10


def test_a_foreign_error_is_not_retried(tmp_path):
    mw = SnapglyphMiddleware(tmp_path / "store.jsonl", budget=100_000)
    with Simulator([answer("x")], provider="openai", context_window=4000) as sim:
        sim.inject(400, {"error": {"message": "Invalid value for 'temperature'", "type": "invalid_request_error",
                                   "param": "temperature", "code": None}})
        with pytest.raises(Exception, match="temperature"):
            _agent(sim, mw).invoke({"messages": [{"role": "user", "content": "hi"}]})
        assert len(sim.log) == 1                         # no second call
    assert mw.compactor.budget == 100_000 and mw.compactor.last is None
