"""Issue 35 items 1 and 4 in the adapters, each with its framework's own classes in front of the simulator:

- a compacted request answered with a refusal (the simulator refuses every request carrying images) is made once
  more without pages and answered: the Agents SDK (``RecoveringModel``), pydantic-ai (``SnapglyphCapability``) and
  LangChain (``SnapglyphMiddleware``); a model that refuses the text-only retry too is never asked a third time;
- a conversation that needs a new cut every turn ends with the one ``CompactionStormError`` through each adapter,
  and the storm's request never goes upstream.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from snapglyph._config import STORM_CUTS, STORM_REQUESTS
from snapglyph.errors import CompactionStormError
from snapglyph.testing import Simulator, answer, call

WINDOW, RESERVE = 8000, 512
SYSTEM = "Read files."
STORM = (f"snapglyph: this conversation cannot be kept under the window: {STORM_CUTS} new cuts in its last "
         f"{STORM_REQUESTS} requests")


def _turns(window: int = WINDOW) -> list[tuple[str, str]]:
    """User and assistant turns of a twentieth of the window each, past the window, ending with a user turn."""
    sim, turns, i = Simulator(context_window=window), [], 0
    while True:
        role = "user" if i % 2 == 0 else "assistant"
        turns.append((role, f"turn {i}: " + " ".join(f"note{i}_{k}=value{k * 7}" for k in range(window // 60))))
        i += 1
        body = {"model": "gpt-4.1", "messages": [{"role": r, "content": t} for r, t in turns]}
        if i % 2 == 1 and sim.count_request("openai", body).text > window:
            return turns


def _has_pages(raw: bytes) -> bool:
    return b"iVBORw0KGgo" in raw                      # a PNG's base64 start: a page image


def _kinds(sim) -> list[str]:
    return [e["kind"] for e in sim.log]


# big tool results: each turn past the overflow needs a new cut (its tail cannot hold the next result)
FILES = {f"f{i}.txt": "".join(f"line {j} of file {i}: value={j * (i + 1)}\n" for j in range(110)) for i in range(14)}
READS = [call(("read_file", {"path": p})) for p in FILES] + [answer("done")]


# -- OpenAI Agents SDK -----------------------------------------------------------------------------------------------
agents = pytest.importorskip("agents", reason="openai-agents not installed (the `integrations` extra)")


def _agents_run(sim, flt, items, tools=(), max_turns=3):
    from openai import AsyncOpenAI

    from snapglyph.integrations.openai_agents import RecoveringModel
    client = AsyncOpenAI(base_url=sim.base_url + "/v1", api_key="x", max_retries=0)
    model = RecoveringModel(agents.OpenAIResponsesModel(model="gpt-4.1", openai_client=client), flt)
    agent = agents.Agent(name="a", instructions=SYSTEM, model=model, tools=list(tools),
                         model_settings=agents.ModelSettings(max_tokens=RESERVE))
    cfg = agents.RunConfig(call_model_input_filter=flt, tracing_disabled=True)
    return asyncio.run(agents.Runner.run(agent, items, run_config=cfg, max_turns=max_turns))


def test_agents_retries_a_refused_compaction_once_without_pages(tmp_path):
    from snapglyph.integrations.openai_agents import InputFilter
    flt = InputFilter(tmp_path)
    items = [{"role": r, "content": t} for r, t in _turns()]
    with Simulator([answer("ok without pages"), answer("second turn")], provider="openai",
                   context_window=WINDOW) as sim:
        sim.refuse_images = True
        result = _agents_run(sim, flt, items)
        assert result.final_output == "ok without pages"
        assert _kinds(sim) == ["overflow", "refused", "ok"]
        assert _has_pages(sim.log[1]["raw"]) and not _has_pages(sim.log[2]["raw"])
        again = _agents_run(sim, flt, result.to_input_list() + [{"role": "user", "content": "and now?"}])
        assert again.final_output == "second turn" and _kinds(sim)[3:] == ["ok"]   # text-only from then on
        assert not _has_pages(sim.log[3]["raw"])


class _Refusing(agents.Model):
    """A model answering every call with a refusal part (``ResponseOutputRefusal``), counting its calls."""

    def __init__(self):
        self.calls = []

    async def get_response(self, system_instructions, input, *args, **kwargs):
        from openai.types.responses import ResponseOutputMessage, ResponseOutputRefusal
        self.calls.append(json.dumps(input, default=str))
        msg = ResponseOutputMessage(id="m", type="message", role="assistant", status="completed",
                                    content=[ResponseOutputRefusal(type="refusal", refusal="I can't help with that.")])
        return agents.ModelResponse(output=[msg], usage=agents.Usage(), response_id=None)

    async def stream_response(self, *args, **kwargs):  # pragma: no cover - not streamed here
        raise NotImplementedError
        yield


def test_agents_never_retries_a_refusal_twice(tmp_path):
    from snapglyph.integrations.openai_agents import InputFilter, RecoveringModel
    flt = InputFilter(tmp_path, budget=6000)
    inner = _Refusing()
    agent = agents.Agent(name="a", instructions=SYSTEM, model=RecoveringModel(inner, flt),
                         model_settings=agents.ModelSettings(max_tokens=RESERVE))
    cfg = agents.RunConfig(call_model_input_filter=flt, tracing_disabled=True)
    with pytest.raises(agents.exceptions.ModelRefusalError):      # the text-only retry's refusal, as it came
        asyncio.run(agents.Runner.run(agent, [{"role": r, "content": t} for r, t in _turns()], run_config=cfg,
                                      max_turns=3))
    assert len(inner.calls) == 2 and "input_image" in inner.calls[0] and "input_image" not in inner.calls[1]


def test_agents_ends_a_storm_with_the_one_error(tmp_path):
    from snapglyph.integrations.openai_agents import InputFilter

    @agents.function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        return FILES[path]

    flt = InputFilter(tmp_path, max_tokens=200)
    with Simulator(list(READS), provider="openai", context_window=6000) as sim:
        with pytest.raises(CompactionStormError) as e:
            _agents_run(sim, flt, "Read all files.", tools=[read_file], max_turns=30)
        sent = len(sim.log)
    (conv,) = flt.conversations.held()
    assert str(e.value).startswith(STORM) and "; its largest message is input[" in str(e.value)
    assert len(conv.cut_requests) == STORM_CUTS and conv.requests - conv.cut_requests[0] < STORM_REQUESTS
    assert sent == conv.requests - 1 + _kinds(sim).count("overflow")   # the storm's request never went out


# -- pydantic-ai -----------------------------------------------------------------------------------------------------
def _pai():
    return pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim[openai] not installed (the `integrations` extra)")


def _pai_agent(model, tmp_path, **kw):
    _pai()
    from pydantic_ai import Agent

    from snapglyph.integrations.pydantic_ai import SnapglyphCapability, SnapglyphHistory
    hist = SnapglyphHistory(tmp_path, **kw)
    return Agent(model, instructions=SYSTEM, capabilities=[SnapglyphCapability(hist)],
                 model_settings={"max_tokens": RESERVE}), hist


def _pai_history(turns):
    from pydantic_ai import messages as pm
    return [pm.ModelRequest(parts=[pm.UserPromptPart(t)]) if r == "user" else pm.ModelResponse(parts=[pm.TextPart(t)])
            for r, t in turns]


def _pai_chat(sim):
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    client = AsyncOpenAI(base_url=sim.base_url + "/v1", api_key="x", max_retries=0)
    return OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(openai_client=client))


def test_pydantic_ai_retries_a_refused_compaction_once_without_pages(tmp_path):
    _pai()
    turns = _turns()
    with Simulator([answer("ok without pages")], provider="openai", context_window=WINDOW) as sim:
        sim.refuse_images = True
        agent, _ = _pai_agent(_pai_chat(sim), tmp_path)
        result = agent.run_sync(turns[-1][1], message_history=_pai_history(turns[:-1]))
        assert result.output == "ok without pages"
        assert _kinds(sim) == ["overflow", "refused", "ok"]
        assert _has_pages(sim.log[1]["raw"]) and not _has_pages(sim.log[2]["raw"])


def test_pydantic_ai_never_retries_a_refusal_twice(tmp_path):
    _pai()
    from pydantic_ai import messages as pm
    from pydantic_ai.exceptions import UnexpectedModelBehavior
    from pydantic_ai.models.function import FunctionModel
    calls = []

    def refuse(messages, info):
        calls.append(any(isinstance(x, pm.BinaryContent) for m in messages if isinstance(m, pm.ModelRequest)
                         for p in m.parts if isinstance(p, pm.UserPromptPart) and not isinstance(p.content, str)
                         for x in p.content))
        return pm.ModelResponse(parts=[], provider_details={"refusal": "I can't help with that."})

    turns = _turns()
    agent, _ = _pai_agent(FunctionModel(refuse), tmp_path, budget=6000)
    with pytest.raises(UnexpectedModelBehavior):               # the text-only attempt's refusal, as it came
        agent.run_sync(turns[-1][1], message_history=_pai_history(turns[:-1]))
    assert calls[:2] == [True, False] and calls.count(True) == 1  # pages once; never again after the refusal


def test_pydantic_ai_ends_a_storm_with_the_one_error(tmp_path):
    _pai()
    with Simulator(list(READS), provider="openai", context_window=6000) as sim:
        agent, hist = _pai_agent(_pai_chat(sim), tmp_path)

        @agent.tool_plain
        def read_file(path: str) -> str:
            """Read a file."""
            return FILES[path]

        with pytest.raises(CompactionStormError) as e:
            agent.run_sync("Read all files.")
        sent = len(sim.log)
    (conv,) = hist.conversations.held()
    assert str(e.value).startswith(STORM) and "; its largest message is messages[" in str(e.value)
    assert len(conv.cut_requests) == STORM_CUTS and conv.requests - conv.cut_requests[0] < STORM_REQUESTS
    assert sent == conv.requests - 1 + _kinds(sim).count("overflow")   # the storm's request never went out


# -- LangChain -------------------------------------------------------------------------------------------------------
def test_langchain_ends_a_storm_with_the_one_error(tmp_path):
    pytest.importorskip("langchain.agents", reason="langchain>=1 not installed (the `integrations` extra)")
    pytest.importorskip("langchain_openai", reason="langchain-openai not installed (the `integrations` extra)")
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    from snapglyph.integrations.langchain import SnapglyphMiddleware

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return FILES[path]

    mw = SnapglyphMiddleware(tmp_path, max_tokens=200)
    with Simulator(list(READS), provider="openai", context_window=6000) as sim:
        model = ChatOpenAI(model="gpt-4.1", base_url=sim.base_url + "/v1", api_key="x", max_retries=0, max_tokens=200)
        agent = create_agent(model, tools=[read_file], middleware=[mw])
        with pytest.raises(CompactionStormError) as e:
            agent.invoke({"messages": [{"role": "user", "content": "Read all files."}]})
        sent = len(sim.log)
    (conv,) = mw.conversations.held()
    assert str(e.value).startswith(STORM) and "; its largest message is messages[" in str(e.value)
    assert len(conv.cut_requests) == STORM_CUTS and conv.requests - conv.cut_requests[0] < STORM_REQUESTS
    assert sent == conv.requests - 1 + _kinds(sim).count("overflow")   # the storm's request never went out


def test_langchain_never_retries_a_refusal_twice(tmp_path):
    pytest.importorskip("langchain.agents", reason="langchain>=1 not installed (the `integrations` extra)")
    pytest.importorskip("langchain_openai", reason="langchain-openai not installed (the `integrations` extra)")
    from langchain.agents.middleware import ModelRequest
    from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
    from langchain_openai import ChatOpenAI

    from snapglyph.integrations.langchain import SnapglyphMiddleware
    mw = SnapglyphMiddleware(tmp_path, budget=6000, max_tokens=RESERVE)
    msgs = [HumanMessage(t) if r == "user" else AIMessage(t) for r, t in _turns()]
    request = ModelRequest(model=ChatOpenAI(model="gpt-4.1", api_key="x"), messages=msgs, tools=[])
    calls = []

    def refuse(req):
        calls.append("image_url" in json.dumps([m.content for m in req.messages if not isinstance(m, AIMessageChunk)]))
        return AIMessage(content="", additional_kwargs={"refusal": "I can't help with that."})

    out = mw.wrap_model_call(request, refuse)
    assert out.additional_kwargs["refusal"] == "I can't help with that."     # the text-only retry's, as it came
    assert calls == [True, False]                                            # pages once, then text only, no more


def test_litellm_ends_a_storm_with_the_one_error(tmp_path):
    pytest.importorskip("litellm", reason="litellm not installed (the `integrations` extra)")
    from snapglyph.integrations.litellm import SnapglyphHook, completion_with_recovery
    hook = SnapglyphHook(tmp_path, max_tokens=200)
    msgs = [{"role": "user", "content": "Task: read each file I paste."}]
    with Simulator(lambda d, b: answer("noted"), provider="openai", context_window=6000) as sim:
        with pytest.raises(CompactionStormError) as e:
            for text in FILES.values():
                msgs += [{"role": "assistant", "content": "noted"}, {"role": "user", "content": text}]
                completion_with_recovery(hook, model="openai/gpt-4.1", api_base=sim.base_url + "/v1", api_key="x",
                                         messages=list(msgs), max_tokens=200, num_retries=0)
        sent = len(sim.log)
    (conv,) = hook.conversations.held()
    assert str(e.value).startswith(STORM) and "; its largest message is messages[" in str(e.value)
    assert len(conv.cut_requests) == STORM_CUTS and conv.requests - conv.cut_requests[0] < STORM_REQUESTS
    assert sent == conv.requests - 1 + _kinds(sim).count("overflow")   # the storm's request never went out


def test_litellm_retries_a_refused_compaction_once_without_pages(tmp_path):
    pytest.importorskip("litellm", reason="litellm not installed (the `integrations` extra)")
    from snapglyph.integrations.litellm import SnapglyphHook, completion_with_recovery
    hook = SnapglyphHook(tmp_path)
    msgs = [{"role": r, "content": t} for r, t in _turns()]
    with Simulator([answer("ok without pages")], provider="openai", context_window=WINDOW) as sim:
        sim.refuse_images = True
        reply = completion_with_recovery(hook, model="openai/gpt-4.1", api_base=sim.base_url + "/v1", api_key="x",
                                         messages=msgs, max_tokens=RESERVE, num_retries=0)
        assert reply.choices[0].message.content == "ok without pages"
        assert _kinds(sim) == ["overflow", "refused", "ok"]
        assert _has_pages(sim.log[1]["raw"]) and not _has_pages(sim.log[2]["raw"])
