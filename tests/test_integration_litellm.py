"""LiteLLM adapters against the local simulator: the SDK helper overflows and recovers compacted with recall; the
proxy hook compacts an over-budget request that the simulator would refuse; many users through one hook (the same
opening words, told apart by `user` or `metadata["session_id"]`) are kept apart."""
import asyncio
import copy
import json
import re

import pytest

litellm = pytest.importorskip("litellm", reason="litellm not installed (the `integrations` extra)")
from litellm.caching.dual_cache import DualCache
from litellm.exceptions import ContextWindowExceededError
from litellm.proxy._types import UserAPIKeyAuth

from doors_scenarios import OPENING, SYSTEM, WINDOW, check_apart, files, marker, recall_answers, script

from snapglyph import SourceStore, recall_tool
from snapglyph.integrations.litellm import SnapglyphHook, acompletion_with_recovery, completion_with_recovery
from snapglyph.testing import Simulator, answer, call

FILES = {f"f{i}.txt": "".join(f"line {j} of file {i}: value={j * i}\n" for j in range(80)) for i in range(6)}
READ = {"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}


def _kwargs(sim, messages):
    return {"model": "openai/gpt-4o", "api_base": sim.base_url + "/v1", "api_key": "x", "messages": messages,
            "tools": [READ, recall_tool("openai")], "max_tokens": 200, "num_retries": 0}


def test_sdk_helper_overflow_recovers_with_pages_and_recall(tmp_path):
    script = [call(("read_file", {"path": p})) for p in FILES] + [call(("recall_messages", {"ids": "#3"})),
                                                                  answer("final answer")]
    hook = SnapglyphHook(tmp_path, budget=100_000)
    history = [{"role": "system", "content": "Read files."}, {"role": "user", "content": "Read all files."}]
    with Simulator(script, provider="openai", context_window=4000) as sim:
        for _ in range(10):                               # the caller's own tool loop, keeping the whole history
            msg = completion_with_recovery(hook, **_kwargs(sim, history)).choices[0].message
            history.append(msg.model_dump(exclude_none=True))
            if not msg.tool_calls:
                break
            for c in msg.tool_calls:
                args = json.loads(c.function.arguments)
                out = (FILES[args["path"]] if c.function.name == "read_file"
                       else hook.recall_text(history, args["ids"]))
                history.append({"role": "tool", "tool_call_id": c.id, "content": out})
        statuses = [e.get("status") for e in sim.log]
        bodies = [json.loads(e["raw"]) for e in sim.log]
    assert history[-1]["content"] == "final answer"
    assert statuses == [200] * 5 + [400] + [200] * 3   # the 6th call overflowed and its retry went through
    (comp,) = hook.conversations.held()
    assert comp.window == 4000                          # the window the simulator's error body named
    assert comp.last is not None and len(comp.last.pages) == 1
    assert comp.last.middle_ids == list(range(2, comp.last.tail_ids[0]))
    sent = bodies[-1]["messages"]
    rounds = (len(sent) - 3) // 2
    assert rounds >= 2 and [m["role"] for m in sent] == ["system", "user", "user"] + ["assistant", "tool"] * rounds
    assert sent[2]["content"][0]["type"] == "image_url"
    assert sent[2]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert sent[-1]["content"] == "#3: " + FILES["f0.txt"]   # recalled exactly, from the on-disk store
    assert [m["content"] for m in history if m["role"] == "tool"][:6] == list(FILES.values())
    (path,) = tmp_path.glob("*.store.jsonl")
    assert len(SourceStore(path)) == len(comp.store) >= 10


def _long_history():
    msgs = [{"role": "system", "content": "Read files."}, {"role": "user", "content": "Read all files."}]
    for i, (name, text) in enumerate(FILES.items()):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{i}", "type": "function", "function": {"name": "read_file",
                                                                 "arguments": json.dumps({"path": name})}}]})
        msgs.append({"role": "tool", "tool_call_id": f"call_{i}", "content": text})
    return msgs


def test_proxy_hook_compacts_what_would_overflow(tmp_path):
    history = _long_history()
    kept = copy.deepcopy(history)
    hook = SnapglyphHook(tmp_path, budget=4000)

    async def run(sim):
        with pytest.raises(ContextWindowExceededError):   # as the client sent it, the request overflows
            await litellm.acompletion(**_kwargs(sim, history))
        data = _kwargs(sim, history)
        out = await hook.async_pre_call_hook(UserAPIKeyAuth(api_key="sk-test"), DualCache(), data, "completion")
        assert out is data and data["messages"] is not history
        return await litellm.acompletion(**data)

    with Simulator([answer("final answer")], provider="openai", context_window=4000) as sim:
        reply = asyncio.run(run(sim))
        statuses = [e.get("status") for e in sim.log]
        sent = json.loads(sim.log[-1]["raw"])["messages"]
    assert reply.choices[0].message.content == "final answer"
    assert statuses == [400, 200]
    assert [m["role"] for m in sent] == ["system", "user", "user", "assistant", "tool", "assistant", "tool"]
    assert sum(1 for p in sent[2]["content"] if p["type"] == "image_url") == 1
    assert [sent[4]["content"], sent[6]["content"]] == [FILES["f4.txt"], FILES["f5.txt"]]   # the tail, verbatim
    assert history == kept                               # the client's list was not touched
    (comp,) = hook.conversations.held()
    assert comp.last.middle_ids == list(range(2, 10)) and len(comp.store) == len(history)
    # an embedding call is not a chat completion: passed through untouched
    emb = {"model": "x", "input": ["a"]}
    assert asyncio.run(hook.async_pre_call_hook(None, None, emb, "aembedding")) == {"model": "x", "input": ["a"]}


async def _loop(hook, sim, k, **keys):
    """The caller's own tool loop for conversation ``k`` (its files, its recall), all opening with the same words."""
    history = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": OPENING}]
    for _ in range(12):
        reply = await acompletion_with_recovery(hook, **_kwargs(sim, history), **keys)
        msg = reply.choices[0].message
        history.append(msg.model_dump(exclude_none=True))
        if not msg.tool_calls:
            return msg.content
        for c in msg.tool_calls:
            args = json.loads(c.function.arguments)
            out = (files(k)[args["path"]] if c.function.name == "read_file"
                   else hook.recall_text({"messages": history, **keys}, args["ids"]))
            history.append({"role": "tool", "tool_call_id": c.id, "content": out})
    return None


@pytest.mark.parametrize("n", [2, 50])
def test_many_users_are_kept_apart(tmp_path, n):
    hook = SnapglyphHook(tmp_path, budget=100_000, max_conversations=8)
    # half the conversations keyed by `user`, half by metadata["session_id"]: every one opens with the same words
    keys = [{"user": f"u{k:02d}"} if k % 2 else {"metadata": {"session_id": f"s{k:02d}"}} for k in range(n)]

    async def every(sim):
        return await asyncio.gather(*(_loop(hook, sim, k, **keys[k]) for k in range(n)))

    with Simulator(script, provider="xai", context_window=WINDOW) as sim:
        finals = asyncio.run(every(sim))
        log = list(sim.log)
    assert finals == [f"done {marker(k)}" for k in range(n)]        # each recalled its own first file
    assert sorted(check_apart(log, tmp_path)) == [marker(k) for k in range(n)]
    assert sorted(recall_answers(log, "openai")) == sorted("#3: " + files(k)["f0.txt"] for k in range(n))
    assert sum(e.get("kind") == "overflow" for e in log) == n        # one overflow each, recovered at once
    assert all(e.get("status") == 200 for e in log if e.get("kind") != "overflow")
    assert len(list(tmp_path.glob("*.store.jsonl"))) == n and len(hook.conversations) == min(n, 8)


def test_sdk_helper_answers_recall_itself(tmp_path):
    """The caller offers only its own tool: after the overflow the compacted requests offer recall_messages, and
    the helper answers the model's call of it from the store; the caller's loop never sees that call."""
    script = [call(("read_file", {"path": p})) for p in FILES] + [call(("recall_messages", {"ids": "#3"})),
                                                                  answer("final answer")]
    hook = SnapglyphHook(tmp_path, budget=100_000)
    history = [{"role": "system", "content": "Read files."}, {"role": "user", "content": "Read all files."}]
    seen = []
    with Simulator(script, provider="openai", context_window=4000) as sim:
        for _ in range(10):
            kwargs = {**_kwargs(sim, history), "tools": [READ]}
            msg = completion_with_recovery(hook, **kwargs).choices[0].message
            history.append(msg.model_dump(exclude_none=True))
            if not msg.tool_calls:
                break
            for c in msg.tool_calls:
                seen.append(c.function.name)
                history.append({"role": "tool", "tool_call_id": c.id,
                                "content": FILES[json.loads(c.function.arguments)["path"]]})
        statuses = [e.get("status") for e in sim.log]
        bodies = [json.loads(e["raw"]) for e in sim.log]
        base = sim.base_url + "/v1"
    assert history[-1]["content"] == "final answer" and seen == ["read_file"] * 6
    assert statuses == [200] * 5 + [400] + [200] * 3
    names = [[t["function"]["name"] for t in b.get("tools", [])] for b in bodies]
    assert names[:6] == [["read_file"]] * 6                          # sent as the caller sent them, overflow included
    assert names[6:] == [["read_file", "recall_messages"]] * 3       # compacted: recall offered
    follow = bodies[-1]["messages"]
    assert follow[-2]["tool_calls"][0]["function"]["name"] == "recall_messages"
    whole, got = "#3: " + FILES["f0.txt"], follow[-1]["content"]    # a 4,000-token window: cut to the room, said
    cut = re.fullmatch(r"(?s)(.*)\n\[recall_messages: cut to the room the budget leaves, (\d+) of (\d+) "
                       r"characters not shown; ask for fewer ids\]", got)
    assert follow[-1]["role"] == "tool" and cut and int(cut[3]) == len(whole)
    assert whole.startswith(cut[1]) and len(cut[1]) + int(cut[2]) == len(whole) and len(cut[1]) > len(whole) // 2
    assert follow[:-2] == bodies[-2]["messages"]                      # the follow-up is the request sent, extended
    (book,) = tmp_path.glob("windows.json")
    learned = json.loads(book.read_text())[f"{base} openai/gpt-4o"]
    assert learned["window"] == 4000 and 0 < learned["accepted"] < learned["refused"]


def test_a_renamed_tool_is_renamed_in_tools_too(tmp_path):
    """Issue 31 item 6: a tool name the provider refuses is repaired in data["tools"] as in the messages."""
    bad = "read.file"                                                 # a dot: OpenAI's pattern refuses it
    history = _long_history()
    for m in history:
        for c in m.get("tool_calls") or []:
            c["function"]["name"] = bad
    tool = {"type": "function", "function": {**READ["function"], "name": bad}}
    data = {"model": "openai/gpt-4o", "messages": history, "tools": [tool], "max_tokens": 200}
    hook = SnapglyphHook(tmp_path, budget=4000)
    out = asyncio.run(hook.async_pre_call_hook(None, None, data, "completion"))
    (name,) = [t["function"]["name"] for t in out["tools"]]
    called = {c["function"]["name"] for m in out["messages"] for c in m.get("tool_calls") or []}
    assert name != bad and re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name) and called == {name}
    assert tool["function"]["name"] == bad                            # the caller's own definition untouched


def test_recall_is_left_to_the_caller_for_a_stream_or_its_own_tool(tmp_path):
    hook = SnapglyphHook(tmp_path)
    data = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    assert hook.answers_recall(data) and hook.answers_recall({**data, "tools": [READ]})
    assert not hook.answers_recall({**data, "stream": True})
    assert not hook.answers_recall({**data, "tools": [READ, recall_tool("openai")]})
    assert not SnapglyphHook(tmp_path, recall=False).answers_recall(data)
