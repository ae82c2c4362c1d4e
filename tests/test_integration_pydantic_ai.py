"""pydantic-ai adapter against the local simulator: the agent overflows, recovers compacted (page images in a
ModelRequest of its own objects), recall works, the run's history keeps every message, and many runs through one
capability (the same opening words, told apart by their conversation_id) are kept apart."""
import asyncio
import json

import pytest

pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim[openai] not installed (the `integrations` extra)")
from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    BinaryContent,
    ModelRequest,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from doors_scenarios import MARK, OPENING, SYSTEM, WINDOW, check_apart, files, marker, recall_answers, script

from snapglyph import SourceStore
from snapglyph.integrations.pydantic_ai import SnapglyphCapability, SnapglyphHistory
from snapglyph.testing import Simulator, answer, call

FILES = {f"f{i}.txt": "".join(f"line {j} of file {i}: value={j * i}\n" for j in range(80)) for i in range(6)}


def _agent(sim, capability):
    client = AsyncOpenAI(base_url=sim.base_url + "/v1", api_key="x", max_retries=0)
    model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
    agent = Agent(model, instructions="Read files.", capabilities=[capability],
                  model_settings={"max_tokens": 200})

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file."""
        return FILES[path]

    return agent


def _script():
    return [call(("read_file", {"path": p})) for p in FILES] + [call(("recall_messages", {"ids": "#3"})),
                                                                answer("final answer")]


def test_overflow_recovers_with_pages_and_recall(tmp_path):
    hist = SnapglyphHistory(tmp_path, budget=100_000)
    with Simulator(_script(), provider="openai", context_window=4000) as sim:
        result = _agent(sim, SnapglyphCapability(hist)).run_sync("Read all files.")
        statuses = [e.get("status") for e in sim.log]
        bodies = [json.loads(e["raw"]) for e in sim.log]
    assert result.output == "final answer"
    assert statuses == [200] * 5 + [400] + [200] * 3   # the 6th request overflowed and its retry went through
    (conv,) = hist.conversations.held()
    assert conv.window == 4000                          # the window the simulator's error body named
    last = conv.last
    assert last is not None and len(last.pages) == 1 and last.middle_ids == list(range(2, last.tail_ids[0]))
    sent = bodies[-1]["messages"]
    rounds = (len(sent) - 3) // 2
    assert rounds >= 2 and [m["role"] for m in sent] == ["system", "user", "user"] + ["assistant", "tool"] * rounds
    assert sent[2]["content"][0]["type"] == "image_url"
    assert sent[2]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert sent[0]["content"] == "Read files." and sent[1]["content"] == "Read all files."
    assert sent[-1]["content"] == "#3: " + FILES["f0.txt"]   # recalled exactly, from the on-disk store
    # the run's history was not rewritten: every file's full text is still in its tool returns, no snapshot in it
    returns = [p for m in result.all_messages() if isinstance(m, ModelRequest) for p in m.parts
               if isinstance(p, ToolReturnPart)]
    assert [p.content for p in returns[:6]] == list(FILES.values())
    assert not any(m.metadata for m in result.all_messages() if isinstance(m, ModelRequest))
    assert len(SourceStore(tmp_path / f"{conv.key}.store.jsonl")) == len(conv.store) >= 10


def test_processor_keeps_its_own_objects_for_head_and_tail(tmp_path):
    hist = SnapglyphHistory(tmp_path, budget=100_000, max_tokens=200)
    with Simulator(_script()[:6] + [answer("done")], provider="openai", context_window=100_000) as sim:
        full = _agent(sim, SnapglyphCapability(hist)).run_sync("Read all files.").all_messages()
    conv = hist.conversation(full)
    assert conv.last is None                            # everything fitted
    conv.budget = 3000
    out = hist(full)
    assert out[0] is full[0]                            # head: the first request (instructions + task), same object
    assert conv.last.tail_ids == [12, 13, 14]           # the call reading f5.txt, its result, the answer
    assert len(out) == 5 and all(a is b for a, b in zip(out[2:], full[-3:]))   # tail: the same objects
    snap = out[1]
    assert isinstance(snap, ModelRequest) and len(snap.parts) == 1 and isinstance(snap.parts[0], UserPromptPart)
    images = [x for x in snap.parts[0].content if isinstance(x, BinaryContent)]
    texts = [x for x in snap.parts[0].content if isinstance(x, str)]
    assert len(images) == len(conv.last.pages) >= 1
    assert all(i.media_type == "image/png" and i.data[:8] == b"\x89PNG\r\n\x1a\n" for i in images)
    assert len(texts) == 1 and "#2-#" in texts[0]
    # ProcessHistory writes the result into the history; the next pass puts the middle back and compacts afresh
    again = hist(out + [])
    assert [type(m) for m in again] == [type(m) for m in out] and again[1].parts[0].content[-1] == texts[0]


def test_process_history_capability_runs(tmp_path):
    hist = SnapglyphHistory(tmp_path, budget=3000, max_tokens=200)
    with Simulator(_script()[:6] + [answer("final answer")], provider="openai", context_window=4000) as sim:
        result = _agent(sim, ProcessHistory(hist)).run_sync("Read all files.")
        statuses = [e.get("status") for e in sim.log]
        sent = json.loads(sim.log[-1]["raw"])["messages"]
    assert result.output == "final answer"
    assert statuses == [200] * 7                        # compacted before every request that would overflow
    assert sum(1 for m in sent if isinstance(m["content"], list)
               for p in m["content"] if p["type"] == "image_url") == len(hist.conversations.held()[0].last.pages)


def test_an_oversized_newest_tool_return_is_paged_in_place(tmp_path):
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    big = "".join(f"row {i}: {'x' * 20} value={i * 7}\n" for i in range(2500))
    msgs = [ModelRequest(parts=[UserPromptPart("Read the big log.")], instructions="Be brief.")]
    for i, text in enumerate([f"small {i}\n" * 300 for i in range(4)] + [big]):
        msgs.append(ModelResponse(parts=[ToolCallPart("read", {"p": f"f{i}"}, tool_call_id=f"c{i}")]))
        msgs.append(ModelRequest(parts=[ToolReturnPart("read", text, tool_call_id=f"c{i}")], instructions="Be brief."))
    hist = SnapglyphHistory(tmp_path, budget=30_000, max_tokens=200)
    out = hist(msgs)
    res = hist.conversation(msgs).last
    assert res.paged == [(11, "tool result", 1)]         # chat #0 is the instructions, #11 the big return
    assert out[0] is msgs[0] and out[2] is msgs[-2] and len(out) == 4
    (part,) = out[3].parts
    assert part.tool_call_id == "c4" and part.content == (
        "[snapglyph: tool result 1 of message #11 (104,801 characters) is shown as pages in the snapshot above; "
        "recall #11 for its exact text]")
    assert msgs[-1].parts[0].content == big                # the caller's message is not changed
    assert hist.conversation(msgs).recall_text("#11") == "#11: " + big


@pytest.mark.parametrize("n", [2, 50])
def test_many_runs_are_kept_apart(tmp_path, n):
    hist = SnapglyphHistory(tmp_path, budget=100_000, max_conversations=8)
    client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x", max_retries=0)

    async def every(sim):
        client.base_url = sim.base_url + "/v1"
        model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
        agent = Agent(model, instructions=SYSTEM, capabilities=[SnapglyphCapability(hist)],
                      model_settings={"max_tokens": 200}, deps_type=int)

        @agent.tool
        def read_file(ctx, path: str) -> str:
            """Read a file."""
            return files(ctx.deps)[path]

        runs = [agent.run(OPENING, deps=k, conversation_id=f"c{k:02d}") for k in range(n)]
        return [r.output for r in await asyncio.gather(*runs)]

    with Simulator(script, provider="gemini", context_window=WINDOW) as sim:
        finals = asyncio.run(every(sim))
        log = list(sim.log)
    assert finals == [f"done {marker(k)}" for k in range(n)]        # each recalled its own first file
    assert sorted(check_apart(log, tmp_path)) == [marker(k) for k in range(n)]
    assert sorted(recall_answers(log, "openai")) == sorted("#3: " + files(k)["f0.txt"] for k in range(n))
    # at most one overflow each, each recovered at once; a run whose request came after another's overflow taught
    # the window is compacted before it is sent (issue 35 item 3), so how many overflow depends on the interleaving
    over = [m for e in log if e.get("kind") == "overflow" for m in set(MARK.findall(e["raw"].decode()))]
    assert 1 <= len(over) <= n and len(set(over)) == len(over)
    assert all(e.get("status") == 200 for e in log if e.get("kind") != "overflow")
    assert len(list(tmp_path.glob("*.store.jsonl"))) == n and len(hist.conversations) == min(n, 8)
