"""The doors and the conversation of bench/wild.py: ``serve`` in each dialect (the official SDKs where installed,
else httpx; streams over httpx) and each adapter with its framework's own classes, all in front of one simulator.

Each door is ``f(sim, behavior, conv, state) -> [text or Ended per client request]``; ``conv`` says what the client
sends (:class:`Conv`, made into each dialect's body by :func:`wire_body`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

WINDOW, RESERVE = 8000, 512
STORM_TURN = 2_400
"""Tokens of each user turn a storm adds, at its 6,000-token window: the tail cannot hold two, so every request
needs a new cut."""
MODELS = {"openai": "gpt-4.1", "responses": "gpt-4.1", "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-pro"}
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages", "responses": "/v1/responses",
         "gemini": "/v1beta/models/gemini-2.5-pro:generateContent"}
STREAM_PATHS = {**PATHS, "gemini": "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"}
HEADERS = {"authorization": "Bearer x", "x-api-key": "x", "anthropic-version": "2023-06-01"}
SERVE_DOORS = ("serve anthropic", "serve openai chat", "serve responses", "serve gemini")
ADAPTERS = ("LangChain", "LiteLLM", "pydantic-ai", "Agents SDK")
DIALECT = {"serve anthropic": "anthropic", "serve openai chat": "openai", "serve responses": "responses",
           "serve gemini": "gemini", "LangChain": "openai", "LiteLLM": "openai", "pydantic-ai": "openai",
           "Agents SDK": "responses"}



# -- the conversation ------------------------------------------------------------------------------------------------
def png() -> str:
    """A valid 8x8 grey PNG, base64 (a client's own image)."""
    raw = b"".join(b"\x00" + bytes([128] * 8) for _ in range(8))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 0, 0, 0, 0))
                            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")).decode()


def turn_text(i: int, tokens: int) -> str:
    """About ``tokens`` simulator tokens of test-log lines for turn ``i``."""
    return "".join(f"step {i} line {j}: test_mod_{j % 9}.py::case_{j} status=ok elapsed={j * 7 % 1000}ms\n"
                   for j in range(max(1, tokens // 14)))


def grown(window: int, per: int | None = None) -> list[tuple[str, str]]:
    """User and assistant turns of ``per`` tokens (a twentieth of ``window``) until they overflow it, ending with a
    user turn."""
    from snapglyph.testing import Simulator
    sim, turns, i = Simulator(context_window=10 ** 9), [], 0
    while True:
        turns.append(("user" if i % 2 == 0 else "assistant", turn_text(i, per or window // 20)))
        i += 1
        msgs = [{"role": r, "content": t} for r, t in turns]
        if i % 2 == 1 and sim.count_request("openai", {"messages": msgs}).text > window:
            return turns


@dataclass
class Conv:
    """What a client sends: ``turns`` (role, text), ``images`` on the first user turn, ``max_out`` tokens asked,
    ``stream``, and for a storm ``rounds`` requests each adding a turn of ``per`` tokens."""
    turns: list
    images: int = 0
    max_out: int = RESERVE
    stream: bool = False
    rounds: int = 1


def wire_body(dialect: str, c: Conv) -> dict:
    """``c`` as a request body in ``dialect``."""
    b64 = png()
    img = {"anthropic": {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}},
           "openai": {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}},
           "responses": {"type": "input_image", "image_url": f"data:image/png;base64,{b64}"},
           "gemini": {"inlineData": {"mimeType": "image/png", "data": b64}}}[dialect]

    def content(i: int, role: str, text: str) -> list:
        if dialect == "gemini":
            return [{"text": text}] + [img] * (c.images if i == 0 else 0)
        kind = {"responses": "input_text" if role == "user" else "output_text"}.get(dialect, "text")
        return [{"type": kind, "text": text}] + [img] * (c.images if i == 0 else 0)
    if dialect == "gemini":
        return {"generationConfig": {"maxOutputTokens": c.max_out}, "contents": [
            {"role": "model" if r == "assistant" else "user", "parts": content(i, r, t)}
            for i, (r, t) in enumerate(c.turns)]}
    items = [{"role": r, "content": content(i, r, t)} for i, (r, t) in enumerate(c.turns)]
    if dialect == "responses":
        body = {"model": MODELS[dialect], "max_output_tokens": c.max_out,
                "input": [{"type": "message", **m} for m in items]}
    else:
        body = {"model": MODELS[dialect], "max_tokens": c.max_out, "messages": items}
    if c.stream:
        body["stream"] = True
    return body


# -- doors -----------------------------------------------------------------------------------------------------------
class Ended(Exception):
    """The client got an error: ``status`` (HTTP, or None for an exception of the door) and the text."""

    def __init__(self, status, text):
        super().__init__(text)
        self.status, self.text = status, text


def _text_of(dialect: str, r: dict) -> str:
    from snapglyph.providers.refusal import refusal
    if refusal(dialect, r):
        return ""
    if dialect == "anthropic":
        return "".join(b.get("text", "") for b in r.get("content", []))
    if dialect == "openai":
        return r["choices"][0]["message"].get("content") or ""
    if dialect == "responses":
        return "".join(p.get("text", "") for o in r.get("output", []) for p in o.get("content", []) or [])
    return "".join(p.get("text", "") for c in r.get("candidates", []) for p in c.get("content", {}).get("parts", []))


def _sdk_call(dialect: str, url: str, body: dict) -> str:
    """One request through the official SDK (httpx where it is not installed); the answer's text."""
    import httpx
    try:
        if dialect == "anthropic":
            import anthropic
            cl = anthropic.Anthropic(base_url=url, api_key="x", max_retries=0, timeout=300)
            try:
                return _text_of(dialect, cl.messages.create(**body).model_dump())
            except anthropic.APIStatusError as e:
                raise Ended(e.status_code, e.response.text)
        if dialect in ("openai", "responses"):
            import openai
            cl = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0, timeout=300)
            try:
                r = (cl.chat.completions.create(**body) if dialect == "openai" else cl.responses.create(**body))
                return _text_of(dialect, r.model_dump())
            except openai.APIStatusError as e:
                raise Ended(e.status_code, e.response.text)
        from google import genai
        from google.genai import errors, types
        cl = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=url, api_version="v1beta",
                                                                      timeout=300_000))
        try:
            r = cl.models.generate_content(model=MODELS["gemini"], contents=body["contents"],
                                           config={"max_output_tokens": body["generationConfig"]["maxOutputTokens"]})
            return r.text or ""
        except errors.APIError as e:
            raise Ended(e.code, json.dumps(e.details))
    except ImportError:
        r = httpx.post(url + PATHS[dialect], json=body, headers=HEADERS, timeout=300)
        if r.status_code != 200:
            raise Ended(r.status_code, r.text)
        return _text_of(dialect, r.json())


def _stream_call(dialect: str, url: str, body: dict) -> str:
    """One streamed request over httpx: the raw bytes decoded (the text is looked for in them)."""
    import httpx
    with httpx.Client(timeout=300) as c, c.stream("POST", url + STREAM_PATHS[dialect], json=body,
                                                  headers=HEADERS) as s:
        raw = b"".join(s.iter_raw())
    if s.status_code != 200:
        raise Ended(s.status_code, raw.decode(errors="replace"))
    return "recovered" if b"recovered" in raw or b"done" in raw else ""


def serve_door(door: str) -> Callable:
    """A door function ``f(sim, behavior, conv, state) -> [text or Ended per request]`` for ``serve``."""
    dialect = DIALECT[door]

    def run(sim, b, c: Conv, state: Path) -> list:
        from snapglyph.serve.app import ServeConfig
        from snapglyph.serve.run import Background
        out = []
        with Background(ServeConfig(sim.base_url, state=state, **b.serve_kw)).start() as bg:
            for conv in _rounds(c):
                try:
                    body = wire_body(dialect, conv)
                    out.append(_stream_call(dialect, bg.url, body) if conv.stream else
                               _sdk_call(dialect, bg.url, body))
                except Ended as e:
                    out.append(e)
                    break
        return out
    return run


def _rounds(c: Conv) -> list[Conv]:
    """The requests of ``c``: one, or for a storm one more big user turn each round."""
    if c.rounds == 1:
        return [c]
    out, turns = [], list(c.turns)
    for k in range(c.rounds):
        out.append(Conv(list(turns), c.images, c.max_out, c.stream))
        turns += [("assistant", "noted"), ("user", turn_text(100 + k, STORM_TURN))]
    return out


def _chat_messages(c: Conv) -> list[dict]:
    msgs = []
    for i, (r, t) in enumerate(c.turns):
        imgs = [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png()}"}}] * (
            c.images if i == 0 else 0)
        msgs.append({"role": r, "content": [{"type": "text", "text": t}] + imgs if imgs else t})
    return msgs


def _adapter_loop(one: Callable[[Conv], str]) -> Callable:
    def run(sim, b, c: Conv, state: Path) -> list:
        out = []
        for conv in _rounds(c):
            try:
                out.append(one(sim, conv, state))
            except Ended as e:
                out.append(e)
                break
            except Exception as e:                                        # noqa: BLE001 - the cell says what
                status = getattr(e, "status_code", None) or getattr(e, "status", None)
                out.append(Ended(status if isinstance(status, int) else None,
                                 f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))
                break
        return out
    return run


_MEMO: dict = {}


def _memo(key, make):
    """One adapter object per cell (kept across a storm's rounds: the adapter counts cuts per conversation)."""
    if key not in _MEMO:
        _MEMO[key] = make()
    return _MEMO[key]


def _langchain(sim, c: Conv, state: Path) -> str:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    from snapglyph.integrations.langchain import SnapglyphMiddleware
    mw = _memo(("lc", state), lambda: SnapglyphMiddleware(state))
    model = ChatOpenAI(model="gpt-4.1", base_url=sim.base_url + "/v1", api_key="x", max_retries=0,
                       max_tokens=c.max_out)
    agent = create_agent(model, tools=[], middleware=[mw])
    return agent.invoke({"messages": _chat_messages(c)})["messages"][-1].content or ""


def _litellm(sim, c: Conv, state: Path) -> str:
    from snapglyph.integrations.litellm import SnapglyphHook, completion_with_recovery
    hook = _memo(("ll", state), lambda: SnapglyphHook(state))
    r = completion_with_recovery(hook, model="openai/gpt-4.1", api_base=sim.base_url + "/v1", api_key="x",
                                 messages=_chat_messages(c), max_tokens=c.max_out, num_retries=0)
    return r.choices[0].message.content or ""


def _pydantic_ai(sim, c: Conv, state: Path) -> str:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai import messages as pm
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from snapglyph.integrations.pydantic_ai import SnapglyphCapability, SnapglyphHistory
    hist = _memo(("pai", state), lambda: SnapglyphHistory(state))
    client = AsyncOpenAI(base_url=sim.base_url + "/v1", api_key="x", max_retries=0)
    model = OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(openai_client=client))
    agent = Agent(model, capabilities=[SnapglyphCapability(hist)], model_settings={"max_tokens": c.max_out})

    def user(i, t):
        if i == 0 and c.images:
            return pm.UserPromptPart([t] + [pm.BinaryContent(base64.b64decode(png()), media_type="image/png")]
                                     * c.images)
        return pm.UserPromptPart(t)
    history = [pm.ModelRequest(parts=[user(i, t)]) if r == "user" else pm.ModelResponse(parts=[pm.TextPart(t)])
               for i, (r, t) in enumerate(c.turns[:-1])]
    before = _MEMO.get(("pai-run", state))
    if before is not None:                       # a storm's next round: the run before's messages, as an app does
        history = before.all_messages()
    result = agent.run_sync(user(len(c.turns) - 1, c.turns[-1][1]).content, message_history=history)
    _MEMO[("pai-run", state)] = result
    return result.output or ""


def _agents_sdk(sim, c: Conv, state: Path) -> str:
    import agents
    from openai import AsyncOpenAI

    from snapglyph.integrations.openai_agents import InputFilter, RecoveringModel
    flt = _memo(("ag", state), lambda: InputFilter(state))
    client = AsyncOpenAI(base_url=sim.base_url + "/v1", api_key="x", max_retries=0)
    model = RecoveringModel(agents.OpenAIResponsesModel(model="gpt-4.1", openai_client=client), flt)
    agent = agents.Agent(name="a", model=model, model_settings=agents.ModelSettings(max_tokens=c.max_out))
    cfg = agents.RunConfig(call_model_input_filter=flt, tracing_disabled=True)
    items = wire_body("responses", c)["input"]
    return asyncio.run(agents.Runner.run(agent, items, run_config=cfg, max_turns=3)).final_output or ""


EXTRAS = {"LangChain": ("langchain.agents", "langchain_openai"), "LiteLLM": ("litellm",),
          "pydantic-ai": ("pydantic_ai",), "Agents SDK": ("agents",)}


def doors() -> dict[str, Callable]:
    """Every door by name."""
    out: dict[str, Callable] = {d: serve_door(d) for d in SERVE_DOORS}
    out.update({"LangChain": _adapter_loop(_langchain), "LiteLLM": _adapter_loop(_litellm),
                "pydantic-ai": _adapter_loop(_pydantic_ai), "Agents SDK": _adapter_loop(_agents_sdk)})
    return out


def missing(door: str) -> str:
    """The module a door needs that is not installed, else ``""``."""
    import importlib.util
    need = ("uvicorn",) if door.startswith("serve") else EXTRAS[door]
    for m in need:
        try:
            if importlib.util.find_spec(m) is None:
                return m
        except ModuleNotFoundError:
            return m
    return ""
