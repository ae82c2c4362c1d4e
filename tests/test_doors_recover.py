"""Every door recovers from every overflow body on the first retry (issue 29, item 2).

Two parts:

- the rule, in process: for every overflow body the simulator knows (``PROVIDERS`` but Ollama, which truncates
  silently instead of refusing), every window from 8k to 200k tokens and every dialect a door speaks, a conversation
  grown turn by turn until the simulator refuses it is answered with that body; the door's own recovery (the
  adapters' :class:`~snapglyph.integrations._common.ConversationCompactor`, ``serve``'s
  :meth:`~snapglyph.serve.planner.Planner.recover`) makes the retry, and the simulator must take it;
- one end-to-end run per adapter and body kind through the real framework classes (and one per body kind through
  ``serve``, a real proxy in front of the simulator, as tests/test_serve.py starts it), at an 8k window: the
  simulator must see exactly one overflow, then the retry answered.

Compactions are cached by the budget the rule gives (bodies naming the same numbers give the same budget), so the
file stays under a minute.

Last, a grep of the doors (``snapglyph/serve``, ``snapglyph/integrations``, ``agent_demo``) for budget, reserve,
estimate and file-write rules of their own (issue 28, item 1), so a copy cannot come back.
"""
from __future__ import annotations

import ast
import asyncio
import functools
import io
import json
import re
import sys
import tokenize
from pathlib import Path

import pytest

from snapglyph.compaction.budget import estimate, next_budget
from snapglyph.integrations._common import ConversationCompactor
from snapglyph.providers.overflow import detect
from snapglyph.testing import PROVIDERS, Simulator, answer

BODIES = [p for p in PROVIDERS if p != "ollama"]      # Ollama answers 200 with the prompt cut: no body to read
WINDOWS = [8_000, 32_000, 128_000, 200_000]
MODELS = {"openai": "gpt-4.1", "responses": "gpt-4.1", "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-pro"}
PROFILES = {"openai": "openai", "responses": "openai", "anthropic": "claude", "gemini": "gemini"}
RESERVE = 1024                                         # the output each request asks for
SYSTEM = "You are a coding agent. Read files, run tests, report."


def _turn(i: int, tokens: int) -> str:
    """About ``tokens`` simulator tokens of agent-like text (log lines, paths, numbers)."""
    lines = max(1, tokens // 14)
    return "".join(f"step {i} line {j}: test_mod_{j % 9}.py::case_{j} status=ok elapsed={j * 7 % 1000}ms\n"
                   for j in range(lines))


def _body(dialect: str, turns: list[tuple[str, str]]) -> dict:
    """A request in ``dialect`` holding the system prompt and ``turns`` (role, text), asking for ``RESERVE``."""
    model = MODELS[dialect]
    if dialect == "openai":
        return {"model": model, "max_tokens": RESERVE, "messages": [{"role": "system", "content": SYSTEM}] + [
            {"role": r, "content": t} for r, t in turns]}
    if dialect == "anthropic":
        return {"model": model, "max_tokens": RESERVE, "system": SYSTEM,
                "messages": [{"role": r, "content": t} for r, t in turns]}
    if dialect == "responses":
        return {"model": model, "max_output_tokens": RESERVE, "instructions": SYSTEM, "input": [
            {"type": "message", "role": r, "content": [
                {"type": "input_text" if r == "user" else "output_text", "text": t}]} for r, t in turns]}
    return {"systemInstruction": {"parts": [{"text": SYSTEM}]}, "generationConfig": {"maxOutputTokens": RESERVE},
            "contents": [{"role": "model" if r == "assistant" else "user", "parts": [{"text": t}]}
                         for r, t in turns]}


@functools.lru_cache(maxsize=None)
def _grown(dialect: str, window: int) -> str:
    """JSON of the first request of a conversation growing by turns of a twentieth of the window that the simulator
    counts over the window (so every provider refuses it, whether it counts the output or not)."""
    sim = Simulator(context_window=window)
    turns: list[tuple[str, str]] = []
    i = 0
    while True:
        turns.append(("user" if i % 2 == 0 else "assistant", _turn(i, window // 20)))
        i += 1
        if i % 2 == 1:
            body = _body(dialect, turns)
            if sim.count_request(dialect, body).text > window:
                return json.dumps(body)


@functools.lru_cache(maxsize=None)
def _estimate(dialect: str, window: int) -> int:
    return estimate(json.loads(_grown(dialect, window)), PROFILES[dialect])


class _SDKError(Exception):
    """What an SDK raises for an error answer: its status and the body as received."""

    def __init__(self, status: int, body) -> None:
        super().__init__(f"Error code: {status}")
        self.status_code, self.body = status, body


def _overflow(provider: str, dialect: str, window: int) -> tuple[Simulator, dict, int, object]:
    sim = Simulator(provider=provider, context_window=window)
    body = json.loads(_grown(dialect, window))
    status, answer_body = sim.handle(dialect, body)
    assert status >= 400 and sim.log[-1]["kind"] == "overflow", sim.log[-1]
    assert detect(status, answer_body) is not None, answer_body
    return sim, body, status, answer_body


def _retry_fits(sim: Simulator, dialect: str, sent: dict, window: int) -> None:
    status, got = sim.handle(dialect, sent)
    entry = sim.log[-1]
    assert status == 200, (f"the retry overflowed again: {entry.get('prompt_tokens')} prompt tokens "
                           f"(+{RESERVE} output) in a window of {window}: {got}")


# -- the adapters' rule (every adapter calls ConversationCompactor.learn, then compacts) -----------------------------
@functools.lru_cache(maxsize=None)
def _adapter_retry(dialect: str, window: int, budget: int) -> str:
    conv = ConversationCompactor(None, None, budget=budget, profile=PROFILES[dialect])
    sent, res = conv.compact(json.loads(_grown(dialect, window)), dialect)
    assert res is not None
    return json.dumps(sent)


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("dialect", ["openai", "responses"])   # LangChain, LiteLLM, pydantic-ai; the Agents SDK
@pytest.mark.parametrize("provider", BODIES)
def test_adapter_rule_recovers_on_the_first_retry(provider, dialect, window):
    sim, body, status, err = _overflow(provider, dialect, window)
    conv = ConversationCompactor(None, None, budget=10_000_000, profile=PROFILES[dialect])   # far above the prompt
    sent, res = conv.compact(body, dialect)
    assert res is None and sent is body                 # it fitted the configured budget: sent as it came
    assert conv.learn(_SDKError(status, err), sent)
    assert conv.budget < _estimate(dialect, window)     # from the request that overflowed, not the configured one
    _retry_fits(sim, dialect, json.loads(_adapter_retry(dialect, window, conv.budget)), window)


# -- serve's rule (Planner.recover: next_budget, then a cut aimed at its target share) -------------------------------
def _serve_dialects(gemini: bool = True) -> list[str]:
    from snapglyph.serve.rewrite import ROUTES, route
    assert route("/v1beta/models/m:generateContent")[0] == "gemini"      # routed by pattern, not in ROUTES
    return sorted(set(ROUTES.values()) | ({"gemini"} if gemini else set()))



_SERVE_CACHE: dict = {}


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("dialect", _serve_dialects())
@pytest.mark.parametrize("provider", BODIES)
def test_serve_rule_recovers_on_the_first_retry(provider, dialect, window, tmp_path):
    from snapglyph._config import SERVE_MARGIN
    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.planner import Planner
    from snapglyph.serve.state import StateDir
    sim, body, status, err = _overflow(provider, dialect, window)
    ov = detect(status, err)
    # the planner's answer depends on the overflow only through the budget next_budget gives (Planner.recover):
    # bodies naming the same numbers share one compaction
    ceiling = next_budget(ov, body, PROFILES[dialect], margin=SERVE_MARGIN, sent_estimate=_estimate(dialect, window))
    key = (dialect, window, ceiling)
    if key not in _SERVE_CACHE:
        planner = Planner(StateDir(tmp_path / "state"), ServeConfig("http://127.0.0.1:9"))
        out = planner.recover("0123456789abcdef", dialect, body, PROFILES[dialect], ov)
        assert not out.error, out.error
        _SERVE_CACHE[key] = out.data
    _retry_fits(sim, dialect, json.loads(_SERVE_CACHE[key]), window)


# -- end to end: one run per adapter and body kind, through the real framework classes, at 8k ------------------------
E2E_WINDOW = 8_000


def _chat_turns() -> list[dict]:
    msgs = json.loads(_grown("openai", E2E_WINDOW))["messages"]
    return [m for m in msgs if m["role"] != "system"]


def _check_once(sim: Simulator) -> None:
    kinds = [e.get("kind") for e in sim.log]
    assert kinds == ["overflow", "ok"], [(e.get("kind"), e.get("prompt_tokens")) for e in sim.log]


@pytest.mark.parametrize("provider", BODIES)
def test_langchain_recovers_on_the_first_retry(provider, tmp_path):
    pytest.importorskip("langchain.agents", reason="langchain>=1 not installed (the `integrations` extra)")
    pytest.importorskip("langchain_openai", reason="langchain-openai not installed (the `integrations` extra)")
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    from snapglyph.integrations.langchain import SnapglyphMiddleware
    with Simulator([answer("ok")], provider=provider, context_window=E2E_WINDOW) as sim:
        model = ChatOpenAI(model="gpt-4.1", base_url=sim.base_url + "/v1", api_key="x", max_retries=0,
                           max_tokens=RESERVE)
        agent = create_agent(model, tools=[], system_prompt=SYSTEM, middleware=[SnapglyphMiddleware(tmp_path)])
        result = agent.invoke({"messages": _chat_turns()})
        assert result["messages"][-1].content == "ok"
        _check_once(sim)


@pytest.mark.parametrize("provider", BODIES)
def test_litellm_recovers_on_the_first_retry(provider, tmp_path):
    pytest.importorskip("litellm", reason="litellm not installed (the `integrations` extra)")
    from snapglyph.integrations.litellm import SnapglyphHook, completion_with_recovery
    hook = SnapglyphHook(tmp_path)
    with Simulator([answer("ok")], provider=provider, context_window=E2E_WINDOW) as sim:
        reply = completion_with_recovery(hook, model="openai/gpt-4.1", api_base=sim.base_url + "/v1", api_key="x",
                                         messages=[{"role": "system", "content": SYSTEM}] + _chat_turns(),
                                         max_tokens=RESERVE, num_retries=0)
        assert reply.choices[0].message.content == "ok"
        _check_once(sim)


@pytest.mark.parametrize("provider", BODIES)
def test_openai_agents_recovers_on_the_first_retry(provider, tmp_path):
    agents = pytest.importorskip("agents", reason="openai-agents not installed (the `integrations` extra)")
    from openai import AsyncOpenAI

    from snapglyph.integrations.openai_agents import InputFilter, RecoveringModel
    flt = InputFilter(tmp_path)
    items = json.loads(_grown("responses", E2E_WINDOW))["input"]
    with Simulator([answer("ok")], provider=provider, context_window=E2E_WINDOW) as sim:
        client = AsyncOpenAI(base_url=sim.base_url + "/v1", api_key="x", max_retries=0)
        model = RecoveringModel(agents.OpenAIResponsesModel(model="gpt-4.1", openai_client=client), flt)
        agent = agents.Agent(name="a", instructions=SYSTEM, model=model,
                             model_settings=agents.ModelSettings(max_tokens=RESERVE))
        cfg = agents.RunConfig(call_model_input_filter=flt, tracing_disabled=True)
        result = asyncio.run(agents.Runner.run(agent, items, run_config=cfg, max_turns=3))
        assert result.final_output == "ok"
        _check_once(sim)


@pytest.mark.parametrize("provider", BODIES)
def test_pydantic_ai_recovers_on_the_first_retry(provider, tmp_path):
    pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim[openai] not installed (the `integrations` extra)")
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai import messages as pm
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from snapglyph.integrations.pydantic_ai import SnapglyphCapability, SnapglyphHistory
    turns = _chat_turns()
    history = [pm.ModelRequest(parts=[pm.UserPromptPart(m["content"])]) if m["role"] == "user"
               else pm.ModelResponse(parts=[pm.TextPart(m["content"])]) for m in turns[:-1]]
    with Simulator([answer("ok")], provider=provider, context_window=E2E_WINDOW) as sim:
        client = AsyncOpenAI(base_url=sim.base_url + "/v1", api_key="x", max_retries=0)
        model = OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(openai_client=client))
        agent = Agent(model, instructions=SYSTEM, capabilities=[SnapglyphCapability(SnapglyphHistory(tmp_path))],
                      model_settings={"max_tokens": RESERVE})
        result = agent.run_sync(turns[-1]["content"], message_history=history)
        assert result.output == "ok"
        _check_once(sim)


_PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages", "responses": "/v1/responses",
          "gemini": f"/v1beta/models/{MODELS['gemini']}:generateContent"}


@pytest.mark.parametrize("provider", BODIES)
def test_serve_recovers_on_the_first_retry(provider, tmp_path):
    pytest.importorskip("uvicorn")
    import httpx

    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.run import Background
    dialects = _serve_dialects(gemini=False)                           # Gemini: the test below, every body
    dialect = dialects[BODIES.index(provider) % len(dialects)]      # each body once, the dialects in turn
    body = json.loads(_grown(dialect, E2E_WINDOW))
    with Simulator([answer("ok")], provider=provider, context_window=E2E_WINDOW) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state")).start() as bg:
        r = httpx.post(bg.url + _PATHS[dialect], json=body, timeout=60,
                       headers={"authorization": "Bearer x", "x-api-key": "x", "anthropic-version": "2023-06-01"})
        assert r.status_code == 200, r.text
        _check_once(sim)


@pytest.mark.parametrize("provider", BODIES)
def test_serve_recovers_gemini_on_the_first_retry(provider, tmp_path):
    """Every overflow body, the Gemini dialect, through ``serve`` at 8k: the client sees the answer, and the retry is
    the compacted request declaring ``recall_messages`` (answered by serve where the model calls it)."""
    pytest.importorskip("uvicorn")
    import httpx

    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.run import Background
    body = json.loads(_grown("gemini", E2E_WINDOW))
    with Simulator([answer("ok")], provider=provider, context_window=E2E_WINDOW) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state")).start() as bg:
        r = httpx.post(bg.url + _PATHS["gemini"], json=body, timeout=60, headers={"x-goog-api-key": "x"})
        assert r.status_code == 200, r.text
        _check_once(sim)
    retry = json.loads(sim.log[1]["raw"])
    assert [d["name"] for t in retry["tools"] for d in t["functionDeclarations"]] == ["recall_messages"]
    assert r.json()["candidates"][0]["content"]["parts"] == [{"text": "ok"}]


# -- no door keeps a budget, reserve, estimate or atomic-write rule of its own (issue 28 item 1) ---------------------
ROOT = Path(__file__).resolve().parent.parent
OWN_RULES = [
    (re.compile(r"\b(?:max_tokens|max_output_tokens|max_completion_tokens|reserve)\b.*(?:\bor\s+|,\s*)"
                r"(?:1024|2048|4096|8192)\b|\breserve\w*\s*=\s*\d{3,}"),
     "an output-reserve fallback of its own (providers.params.output_reserve)"),
    (re.compile(r"\bDEFAULT_MAX_TOKENS\b"), "the default reserve (providers.params.output_reserve)"),
    (re.compile(r"\*\s*0?\.\d+|\*\s*3\s*//\s*4\b|\bOVERFLOW_UNKNOWN_SHARE\b"),
     "a share of a budget or window (compaction.budget.budget_for / next_budget)"),
    (re.compile(r"\b(?:count_for_profile|count_many_for_profile|TokenCosts|image_tokens)\b"),
     "token counting of its own (compaction.budget.estimate)"),
    (re.compile(r"\bos\.replace\b|\bmkstemp\b|\bNamedTemporaryFile\b"), "a file write of its own (_files.write_atomic)"),
    (re.compile(r"^def (?:estimate|budget_for|next_budget|output_reserve|max_tokens_of|conversation_id)\b|"
                r"\bconversation_key\("),
     "a rule defined again (compaction.budget, providers.params, compaction.keys.conversation_id)"),
]
KNOWN: dict = {}
"""Copies found and left to their owners: the test fails once one is gone (remove it here) or another appears."""


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """The code of a module, line by line, without its comments and docstrings (string statements)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    prose = {n for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Expr)
             and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
             for n in range(node.lineno, node.end_lineno + 1)}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col]
    return [(n, line) for n, line in enumerate(lines, 1) if n not in prose and line.strip()]


def _own_rules(folder: str, skip: tuple[str, ...] = ()) -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in skip:
            continue
        for n, line in _code_lines(path):
            for pattern, what in OWN_RULES:
                if pattern.search(line):
                    found.setdefault((rel, what), []).append(f"{rel}:{n}: {line.strip()}")
    return found


def _check_doors(folder: str, skip: tuple[str, ...] = ()) -> None:
    found = _own_rules(folder, skip)
    new = {k: v for k, v in found.items() if k not in KNOWN}
    stale = [k for k in KNOWN if k[0].startswith(folder + "/") and k not in found]
    assert not new, "rules of their own in the doors:\n" + "\n".join(f"{what}: {line}" for (_, what), lines in
                                                                        new.items() for line in lines)
    assert not stale, f"copies gone, remove them from KNOWN: {stale}"


@pytest.mark.parametrize("folder", ["snapglyph/serve", "snapglyph/integrations"])
def test_the_doors_keep_no_rule_of_their_own(folder):
    _check_doors(folder)


def test_the_agent_demo_keeps_no_rule_of_its_own():
    if not (ROOT / "agent_demo").is_dir():
        pytest.skip("agent_demo/ is not in this checkout")
    _check_doors("agent_demo", skip=("agent_demo/simulator.py", "agent_demo/sim_errors.py"))   # the provider's side


def test_the_rule_check_finds_a_copy(tmp_path, monkeypatch):
    """The check itself: each kind of copy in a door's code is found; the same words in a docstring are not."""
    door = tmp_path / "snapglyph" / "serve"
    door.mkdir(parents=True)
    (door / "copy.py").write_text(
        '"""Uses os.replace and count_for_profile in prose only."""\n'
        "import os\n"
        "def max_tokens_of(body):\n"
        "    return body.get('max_tokens') or 4096\n"
        "def budget(b):\n"
        "    return int(b * 0.75)  # a share\n"
        "def save(p, t):\n"
        "    os.replace(t, p)\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = _own_rules("snapglyph/serve")
    kinds = [what for pattern, what in OWN_RULES]
    assert sorted(what for _, what in found) == sorted(kinds[i] for i in (0, 2, 4, 5))   # not the prose's words
    assert [line.split(": ", 1)[0] for line in found[("snapglyph/serve/copy.py", kinds[4])]] == [
        "snapglyph/serve/copy.py:8"]


# -- the doors' memory is bounded: the least recently used conversation leaves memory, never its files --------------
def test_adapter_conversations_past_the_bound_are_read_again(tmp_path):
    from snapglyph.integrations._common import Conversations
    convs = Conversations(tmp_path, budget=100_000, limit=2)
    bodies = [json.loads(_grown("openai", 8_000)) for _ in range(4)]
    for k, body in enumerate(bodies):
        body["messages"][1]["content"] = f"conversation {k}: " + body["messages"][1]["content"]
    held = [convs.of("openai", b) for b in bodies[:2]]
    for k, (conv, body) in enumerate(zip(held, bodies)):
        sent, res = conv.compact(body, "openai")
        if k == 0:                                   # sent whole, refused: the budget and the model's window learned
            assert res is None and conv.learn(_SDKError(400, {"message": "Input is too long for requested model."}),
                                              sent)
        else:                                        # compacted before it is sent to what the first taught (issue 35)
            assert res is not None and res.tokens_after < res.tokens_before
    learned = [c.budget for c in held]
    for b in bodies[2:]:
        convs.of("openai", b)
    assert len(convs) == 2 and not any(c.key in convs for c in held)          # both dropped from memory
    again = [convs.of("openai", b) for b in bodies[:2]]
    assert [c.budget for c in again] == learned and learned[0] < 100_000        # the learned budgets, from disk
    assert all(a is not c for a, c in zip(again, held))
    for k, (conv, body) in enumerate(zip(again, bodies)):
        assert conv.compact(body, "openai")[1] is not None                     # compacted to the learned budget
    convs.of("openai", bodies[2])
    convs.of("openai", bodies[3])                                              # dropped again: stores on disk
    for k, body in enumerate(bodies[:2]):
        assert convs.of("openai", body).recall_text("#1").startswith(f"#1: conversation {k}: ")   # each its own


def test_serve_state_and_stores_past_the_bound_are_read_again(tmp_path):
    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.planner import Planner
    from snapglyph.serve.state import StateDir
    states = StateDir(tmp_path / "state", limit=2)
    planner = Planner(states, ServeConfig("http://127.0.0.1:9"))
    planner.max_stores = 2
    base = json.loads(_grown("openai", 8_000))
    ov = detect(400, {"message": "Input is too long for requested model."})
    keys = [f"{k:016x}" for k in range(1, 6)]
    for k, key in enumerate(keys):
        body = json.loads(json.dumps(base))
        body["messages"][1]["content"] = f"conversation {k}: " + body["messages"][1]["content"]
        assert not planner.recover(key, "openai", body, "openai", ov).error
    assert states.held() == 2 and len(states) == 5 and sorted(c.key for c in states.all()) == keys
    assert len(planner._stores) == 2 and all(states.store_path(k).exists() for k in keys)
    assert states.get(keys[0]).cut is not None                                 # read again from its file
    from snapglyph import recall
    assert recall(planner._store(keys[0]), "#1")[1].startswith("conversation 0: ")
