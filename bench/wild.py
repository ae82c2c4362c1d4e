"""Issue 35's goal table: every behavior of the wild recovered on the first retry through every door.

Method: for each behavior (a simulator setting, :mod:`snapglyph.testing`) and each door (``snapglyph serve`` over
HTTP in each dialect, driven by the official SDK where installed, else httpx; each adapter with its framework's own
classes), one client request is sent to a fresh simulator (and a fresh ``serve`` or adapter state folder), and the
cell is read from the simulator's log: the upstream requests that client request made (``kinds``, in order) and what
the client got. A cell says ``recovered`` where the client got an answer with text and the upstream saw exactly the
requests of one recovery (the refused request, then the retry; for a refusal or an empty answer after a compaction:
the overflow, the compacted request refused, the one text-only retry), ``ended`` where the behavior must end with an
error and it did with the one the issue names (the output reserve alone: the provider's 400 relayed, one upstream
request; a storm: ``CompactionStormError``'s line), ``FAILED`` with what happened otherwise, ``n/a`` with the reason
where a door cannot meet the behavior.

Goal (issue 35): every behavior recovered on the first retry through every door; at most one text-only retry per
refused compaction.

``python bench/wild.py`` prints the section; ``--write`` puts it into bench/RESULTS.md between
``<!-- wild:start -->`` and ``<!-- wild:end -->``; ``--tiny`` a quick subset (``serve`` in two dialects, two
behaviors and the LangChain adapter); ``--json`` prints the cells as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import platform
import re
import struct
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import commit_label  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
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


# -- behaviors -------------------------------------------------------------------------------------------------------
EMPTY = {"anthropic": {"id": "msg_empty", "type": "message", "role": "assistant", "model": MODELS["anthropic"],
                       "content": [], "stop_reason": "end_turn", "stop_sequence": None,
                       "usage": {"input_tokens": 4000, "output_tokens": 0}},
         "openai": {"id": "chatcmpl-empty", "object": "chat.completion", "created": 0, "model": MODELS["openai"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "", "refusal": None},
                                 "logprobs": None, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 4000, "completion_tokens": 0, "total_tokens": 4000}},
         "responses": {"id": "resp_empty", "object": "response", "created_at": 0, "status": "completed",
                       "model": MODELS["responses"], "output": [], "parallel_tool_calls": True, "tool_choice": "auto",
                       "tools": [], "usage": {"input_tokens": 4000, "output_tokens": 0, "total_tokens": 4000,
                                              "input_tokens_details": {"cached_tokens": 0},
                                              "output_tokens_details": {"reasoning_tokens": 0}}},
         "gemini": {"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 4000, "candidatesTokenCount": 0,
                                      "totalTokenCount": 4000}, "modelVersion": MODELS["gemini"]}}
"""An answer with no text and no tool call, per dialect (HTTP 200)."""


def _empty_after_overflow(sim, dialect):
    """The simulator's overflow for the client's request, then an empty answer for the compacted one (injected:
    the simulator's scripted model always says something)."""
    from snapglyph.testing.provider_errors import overflow_body
    sim.inject(*overflow_body("openai", prompt=WINDOW + 600, output=RESERVE, window=WINDOW))
    sim.inject(200, EMPTY[dialect])


@dataclass
class Behavior:
    """One behavior of the wild: the simulator's settings, the conversation, what the door must do."""
    name: str
    provider: str = "openai"
    window: int = WINDOW
    setup: Callable[[Any, str], None] = lambda sim, dialect: None
    conv: Callable[[], Conv] = lambda: Conv(grown(WINDOW))
    expect: tuple = ("overflow", "ok")             # the upstream kinds of a recovery on the first retry
    ends: str = ""                                 # "reserve" / "storm": must end with that error
    script: Any = None
    serve_kw: dict = field(default_factory=dict)
    only: tuple = ()                               # doors that can meet it (others n/a)
    why_na: str = ""


def _refuse(sim, dialect):
    sim.refuse_images = True


def _after_200(sim, dialect):
    sim.overflow_after_200 = True


def _cap3(sim, dialect):
    sim.max_images = 3


def _other_wording(sim, dialect):
    """The image-count wording the simulator does not use for ``dialect``, injected; the cap then holds."""
    from snapglyph.testing.provider_errors import image_count_body
    sim.max_images = 3
    _, body = image_count_body("openai" if dialect == "anthropic" else "anthropic", 5, 3)
    sim.inject(400, body)


def _body_cap(sim, dialect):
    sim.max_body_bytes = 40_000


def _region(sim, dialect):
    sim.model_windows = {MODELS[dialect]: 6_000}


def behaviors() -> list[Behavior]:
    """Every behavior of issue 35, in the table's order."""
    stream_only = SERVE_DOORS
    gem = ("serve gemini",)
    return [
        Behavior("refusal after a compaction", setup=_refuse, expect=("overflow", "refused", "ok")),
        Behavior("empty answer after a compaction", setup=_empty_after_overflow,
                 expect=("injected", "injected", "ok")),
        Behavior("overflow as the first event after a 200", provider="sglang", setup=_after_200,
                 conv=lambda: Conv(grown(WINDOW), stream=True), expect=("overflow_after_200", "ok"),
                 only=stream_only, why_na="the adapter is driven without streaming here"),
        Behavior("sglang 'The input (N tokens) is longer'", provider="sglang"),
        Behavior("vLLM 'at least N input tokens'", provider="vllm-at-least"),
        Behavior("Ollama 500 'no user query found'", provider="ollama-no-user"),
        Behavior("OpenRouter 'tool input'", provider="openrouter"),
        Behavior("Gemini 'invalid argument' at the wall (window known)", provider="gemini-invalid-argument",
                 serve_kw={"window": WINDOW}, only=gem, why_na="a Gemini body: only the Gemini door meets it"),
        Behavior("image-count cap, the dialect's wording", window=100_000, setup=_cap3,
                 conv=lambda: Conv([("user", "five images")], images=5), expect=("limit", "ok")),
        Behavior("image-count cap, the other wording", window=100_000, setup=_other_wording,
                 conv=lambda: Conv([("user", "five images")], images=5), expect=("injected", "ok")),
        Behavior("413 body cap (40,000 bytes)", provider="native", window=200_000, setup=_body_cap,
                 conv=lambda: Conv(grown(20_000, 700)), expect=("body_cap", "ok")),
        Behavior("a region's smaller window (6,000 of 200,000)", provider="native", window=200_000, setup=_region,
                 conv=lambda: Conv(grown(6_000))),
        Behavior("output reserve alone over the window", window=32_768,
                 conv=lambda: Conv([("user", "hi " * 1200)], max_out=32_000), expect=("overflow",), ends="reserve"),
        Behavior("a storm (each turn a new cut)", window=6_000,
                 conv=lambda: Conv(grown(6_000), rounds=12), expect=(), ends="storm"),
    ]


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

    def run(sim, b: Behavior, c: Conv, state: Path) -> list:
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
    def run(sim, b: Behavior, c: Conv, state: Path) -> list:
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
    last = user(len(c.turns) - 1, c.turns[-1][1]).content
    return agent.run_sync(last, message_history=history).output or ""


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


# -- one cell --------------------------------------------------------------------------------------------------------
def cell(b: Behavior, door: str, run: Callable) -> dict:
    """Run behavior ``b`` through ``door``; the cell: ``verdict`` (recovered / ended / FAILED / n/a), ``how``."""
    from snapglyph.testing import Simulator
    if b.only and door not in b.only:
        return {"verdict": "n/a", "how": b.why_na, "kinds": []}
    gone = missing(door)
    if gone:
        return {"verdict": "n/a", "how": f"{gone} not installed", "kinds": []}
    dialect = DIALECT[door]
    script = b.script or (lambda d, body: __import__("snapglyph.testing", fromlist=["answer"]).answer("recovered"))
    c = b.conv()
    _MEMO.clear()
    with tempfile.TemporaryDirectory() as tmp, Simulator(script, provider=b.provider,
                                                         context_window=b.window) as sim:
        b.setup(sim, dialect)
        t0 = time.monotonic()
        try:
            got = run(sim, b, c, Path(tmp) / "state")
        except Exception as e:                                            # noqa: BLE001 - the cell says what
            got = [Ended(None, f"{type(e).__name__}: {e}")]
        kinds = [e["kind"] for e in sim.log]
    return {**judge(b, got, kinds), "kinds": kinds, "seconds": round(time.monotonic() - t0, 2)}


def judge(b: Behavior, got: list, kinds: list) -> dict:
    """The verdict of a cell from what the client got and the upstream kinds."""
    from snapglyph._config import STORM_CUTS
    last = got[-1] if got else Ended(None, "no request made")
    up = f"{len(kinds)} upstream ({', '.join(kinds) or '-'})"
    if b.ends == "reserve":
        ok = isinstance(last, Ended) and last.status == 400 and len(kinds) == 1
        return {"verdict": "ended" if ok else "FAILED",
                "how": f"the provider's 400 relayed, {up}" if ok else f"{_said(last)}; {up}"}
    if b.ends == "storm":
        ok = isinstance(last, Ended) and "cannot be kept under the window" in last.text
        return {"verdict": "ended" if ok else "FAILED",
                "how": (f"storm error at client request {len(got)} (the rule: {STORM_CUTS} new cuts), {up}" if ok else f"{len(got)} requests, last: {_said(last)}; {up}")}
    if isinstance(last, str) and last and tuple(kinds) == b.expect:
        return {"verdict": "recovered", "how": up}
    return {"verdict": "FAILED", "how": f"{_said(last)}; {up}"}


def _said(x) -> str:
    if isinstance(x, Ended):
        return f"error {x.status}: {' '.join(x.text.split())[:160]}"
    return f"answer {x[:40]!r}" if x else "an empty answer or a refusal relayed"


# -- the run and the section -----------------------------------------------------------------------------------------
TINY = (("refusal after a compaction", "sglang 'The input (N tokens) is longer'"),
        ("serve anthropic", "serve openai chat", "LangChain"))


def run(tiny: bool = False, only_doors: tuple = (), only_behaviors: tuple = ()) -> dict:
    """Every cell: ``{"cells": {(behavior, door): cell}, "seconds": ...}``."""
    bs = [b for b in behaviors() if (not tiny or b.name in TINY[0]) and
          (not only_behaviors or any(s in b.name for s in only_behaviors))]
    ds = {n: f for n, f in doors().items() if (not tiny or n in TINY[1]) and
          (not only_doors or n in only_doors)}
    t0, cells = time.monotonic(), {}
    for b in bs:
        for name, f in ds.items():
            cells[(b.name, name)] = cell(b, name, f)
    return {"cells": cells, "behaviors": [b.name for b in bs], "doors": list(ds),
            "seconds": time.monotonic() - t0}


def section(res: dict, tiny: bool) -> str:
    """The RESULTS.md section: the matrix and its reading."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    cells = res["cells"].values()
    count = {v: sum(1 for c in cells if c["verdict"] == v) for v in ("recovered", "ended", "FAILED", "n/a")}
    short = {"recovered": "recovered", "ended": "ended", "FAILED": "**FAILED**", "n/a": "n/a"}
    rows = ["| behavior | " + " | ".join(res["doors"]) + " |", "| --- |" + " --- |" * len(res["doors"])]
    for b in res["behaviors"]:
        rows.append(f"| {b} | " + " | ".join(
            f"{short[c['verdict']]}: {c['how']}".replace("|", "/") for c in
            (res["cells"][(b, d)] for d in res["doors"])) + " |")
    met = count["FAILED"] == 0
    return "\n".join([
        "## Recovery in the wild: issue 35's goal table", "",
        f"Generated by `python bench/wild.py{' --tiny' if tiny else ''}` at {commit_label()}, "
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()} {os.cpu_count()} cores, load {load}; "
        f"{res['seconds']:.0f} s (method: the script's docstring). Each cell: the verdict, then the upstream requests "
        f"the client request made, counted from the simulator's log (for a storm: over all its client requests).",
        "", *rows, "",
        f"Cells: {count['recovered']} recovered on the first retry, {count['ended']} ended with the error the issue "
        f"names, {count['FAILED']} failed, {count['n/a']} n/a. Goal (every behavior recovered on the first retry "
        f"through every door, at most one text-only retry per refused compaction): {'met' if met else 'missed'}.",
    ])


def write(text: str) -> None:
    """Put ``text`` into bench/RESULTS.md between the wild markers (appended where they are absent)."""
    path = ROOT / "bench" / "RESULTS.md"
    old = path.read_text(encoding="utf-8")
    block = f"<!-- wild:start -->\n{text}\n<!-- wild:end -->"
    new, n = re.subn(r"<!-- wild:start -->.*?<!-- wild:end -->", lambda m: block, old, flags=re.DOTALL)
    path.write_text(new if n else old.rstrip("\n") + "\n\n" + block + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """The command line (``-h``)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny", action="store_true", help="a quick subset (2 behaviors x 3 doors)")
    ap.add_argument("--write", action="store_true", help="write the section into bench/RESULTS.md")
    ap.add_argument("--json", action="store_true", help="print the cells as JSON")
    ap.add_argument("--door", action="append", default=[], help="only this door (repeatable)")
    ap.add_argument("--behavior", action="append", default=[], help="only behaviors naming this (repeatable)")
    args = ap.parse_args(argv)
    res = run(args.tiny, tuple(args.door), tuple(args.behavior))
    if args.json:
        print(json.dumps({f"{b} @ {d}": c for (b, d), c in res["cells"].items()}, indent=1))
    text = section(res, args.tiny)
    print(text)
    if args.write:
        write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
