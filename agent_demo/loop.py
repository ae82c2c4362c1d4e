"""The agent loop: turns of rounds against a provider, with offline recovery from "context too long".

A user message starts a turn; each round sends the conversation and either runs the requested tool calls or ends
the turn with the answer. Before each request the loop estimates the prompt (calibrated against the usage the
provider reported) and compacts ahead of time above ``threshold`` (85%) of the window; when the provider answers
with a context overflow (:func:`snapglyph.providers.overflow.detect`) it compacts and retries, shrinking further if the retry
overflows too, and stops with a clear message if no valid cut remains. With ``check_truncation`` a 200 reply whose
reported prompt count shows the server silently dropped part of the prompt (Ollama) is handled the same way, and
never calibrates the estimates. Compaction is a pluggable ``compact_fn`` (by default :func:`snapglyph_compact`:
head verbatim, the old middle as pages, the newest rounds verbatim). After the first compaction the loop also offers
``recall_messages`` (:func:`snapglyph.recall_tool`), answered from the compaction's source store.

The transcript (:class:`snapglyph_agent_demo.transcript.Transcript`) gets the original messages of each finished turn; the
request context may hold a snapshot message instead of the middle. The system prompt is rebuilt at start.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import snapglyph
from snapglyph.errors import BudgetError, InputError, ProviderError, StoreError
from snapglyph.providers.overflow import OverflowResult, check_silent_truncation, detect
from snapglyph.compaction.recall import RECALL_TOOL_NAME, parse_ids
from snapglyph.model.message_ids import format_ranges

from .clients import CallFailed, Reply
from .context import estimate_body, snapglyph_compact, strip_reasoning, trim_to_boundary
from .tools import ToolResult, Workspace, tool_definitions
from .transcript import Transcript

__all__ = ["Agent", "AgentStop", "Counters", "LoopConfig", "RECALL_TOOL", "snapglyph_compact"]

#: Name of the recall tool the loop offers once it has compacted (:func:`snapglyph.recall_tool`).
RECALL_TOOL = RECALL_TOOL_NAME

WRAP_UP = ("You have reached the limit of tool rounds for this turn. Do not call tools. Reply now in plain text "
           "with your answer so far: what you found, what is unfinished, and what you would do next.")


class AgentStop(ProviderError):
    """The loop cannot go on: no valid cut remains, the overflow persists, or the turn cap was reached."""


@dataclass
class LoopConfig:
    """Settings of the loop.

    Attributes
    ----------
    context_window : int
        The model's window in provider tokens.
    max_tokens : int
        Output tokens requested per round (reserved inside the window).
    threshold : float
        Fraction of the window above which the loop compacts before sending (0.85).
    target : float
        Fraction of the window a compaction aims for (the budget given to ``compact_fn``).
    max_rounds : int
        Rounds per turn; then one wrap-up request without tools.
    max_turns : int
        Turns per session.
    overflow_retries : int
        Compact-and-retry attempts after overflows in one request, each with a budget 0.6x the previous.
    transient_retries : int
        Retries of 429/5xx/connection failures, with exponential backoff from ``backoff`` seconds.
    backoff : float
        First backoff delay, seconds.
    profile : str
        snapglyph reader profile for estimates and pages (default: ``openai`` or ``claude`` by dialect).
    check_truncation : bool
        Check every reply for silent truncation (Ollama) and treat it as an overflow: learn the window from the
        reported count, compact, and resend. A reply is judged truncated when the reported prompt count fell
        short of the growth the estimate predicts since the last complete reply (the count stays pinned while
        the conversation grows), or by :func:`snapglyph.providers.overflow.check_silent_truncation` on the estimate of what
        was sent. A reply judged truncated is never used for calibration. Off by default: a server whose reported
        count is not the whole prompt (one that leaves out cached tokens, say) would look truncated.
    """

    context_window: int = 128_000
    max_tokens: int = 1024
    threshold: float = 0.85
    target: float = 0.5
    max_rounds: int = 12
    max_turns: int = 50
    overflow_retries: int = 3
    transient_retries: int = 3
    backoff: float = 0.5
    profile: str | None = None
    check_truncation: bool = False


@dataclass
class Counters:
    """Rounds (per session), turns and sessions, plus overflows, silent truncations, compactions and recall calls
    seen this session; ``history`` holds one dict per compaction (reason, tokens before and after, pages)."""

    rounds: int = 0
    turns: int = 0
    sessions: int = 0
    overflows: int = 0
    compactions: int = 0
    truncations: int = 0
    recalls: int = 0
    history: list[dict] = field(default_factory=list)


class Agent:
    """One agent session.

    Parameters
    ----------
    client : object
        Has ``send(body: dict) -> Reply`` raising :class:`~snapglyph_agent_demo.clients.CallFailed` on an HTTP error
        (see :mod:`snapglyph_agent_demo.clients`).
    dialect : str
        ``"openai"`` or ``"anthropic"``: the wire format of the stored and sent messages.
    model : str
        Model name sent in each request.
    workspace : Workspace
        The tools' folder.
    transcript : Transcript, optional
        Where finished turns are written; ``None`` keeps the session in memory only.
    system_prompt : str
        Rebuilt at start, never stored.
    config : LoopConfig
    compact_fn : callable, optional
        ``compact_fn(body, budget=int, store=obj) -> result`` with ``.request``, ``.store``, ``.pages``,
        ``.tokens_before``, ``.tokens_after``; default :func:`snapglyph_compact` for the profile and dialect.
        Raises :class:`~snapglyph.errors.BudgetError` when nothing fits.
    log : callable
        Receives one line of progress text at a time (default ``print``).
    """

    def __init__(self, client: Any, *, dialect: str, model: str, workspace: Workspace,
                 transcript: Transcript | None = None, system_prompt: str = "You are a careful coding agent.",
                 config: LoopConfig | None = None, compact_fn: Callable[..., Any] | None = None,
                 log: Callable[[str], None] = print) -> None:
        if dialect not in ("openai", "anthropic"):
            raise ValueError(f"dialect must be 'openai' or 'anthropic', not {dialect!r}")
        self.client, self.dialect, self.model, self.workspace = client, dialect, model, workspace
        self.transcript, self.system_prompt = transcript, system_prompt
        self.config = config or LoopConfig()
        self.profile = self.config.profile or ("openai" if dialect == "openai" else "claude")
        self.compact_fn = compact_fn or snapglyph_compact(self.profile, dialect)
        self.log = log
        self.tools = tool_definitions(dialect)
        self.context: list[dict] = []                     # what is sent (may hold a snapshot message)
        self.store: Any = None
        self.counters = Counters()
        self.ratio = 1.0                                  # provider tokens per estimated token (calibration)
        self._ratio_n = 0
        self._epoch = 0                                   # bumped whenever the context is replaced, not appended
        self._ref: tuple[int, int, int] | None = None     # (epoch, raw estimate, reported) of the last whole reply
        self._started = False

    # -- session -----------------------------------------------------------------------------------------------
    def start(self, *, resume: bool = False) -> None:
        """Start the session: with ``resume``, load the transcript's finished turns (recovering a torn end)."""
        if self.transcript is not None:
            loaded = self.transcript.load()
            if loaded.set_aside:
                self.log(f"transcript: set aside {loaded.set_aside} bytes of an unfinished turn or torn line")
            self.counters.sessions = loaded.sessions + 1
            if resume and not loaded.turns:
                self.log(f"resume: nothing to resume: {self.transcript.path} "
                         + ("holds no finished turn" if self.transcript.path.exists() else "does not exist yet")
                         + "; starting a new conversation")
            elif resume:
                self.context = list(loaded.messages)
                self.counters.turns = loaded.turns
                self.log(f"resume: {loaded.turns} turns, {len(self.context)} messages restored")
            self.transcript.start_session(self.counters.sessions, dialect=self.dialect, model=self.model)
        else:
            self.counters.sessions = 1
        self._started = True

    def run_turn(self, user_text: str) -> str:
        """Run one turn: the user message, rounds of tool calls, the final answer (or a wrap-up). Returns the
        answer text.

        Raises
        ------
        AgentStop
            If the turn cap is reached, or an overflow cannot be recovered (no valid cut remains).
        ProviderError
            If the provider fails in a way that is not an overflow (after retries for transient errors).
        """
        if not self._started:
            self.start()
        if self.counters.turns >= self.config.max_turns:
            raise AgentStop(f"turn cap reached ({self.config.max_turns} turns per session)")
        turn: list[dict] = []

        def add(msg: dict) -> None:
            turn.append(msg)
            self.context.append(msg)

        add({"role": "user", "content": user_text})
        answer = ""
        for r in range(1, self.config.max_rounds + 1):
            reply = self._request(tools=True)
            self.counters.rounds += 1
            add(reply.message)
            if not reply.tool_calls:
                answer = reply.text
                self.log(f"round {self.counters.rounds}: answer ({reply.prompt_tokens} prompt tokens)")
                break
            results = []
            for call_id, name, args in reply.tool_calls:
                res = self.run_tool(name, args)
                self.log(f"round {self.counters.rounds}: {name}({_short(args)}) -> {len(res.text)} chars"
                         + (" [error]" if res.is_error else "") + f" ({reply.prompt_tokens} prompt tokens)")
                results.append((call_id, name, res))
            for msg in self._result_messages(results):
                add(msg)
        else:
            reply = self._request(tools=False, extra=WRAP_UP)
            self.counters.rounds += 1
            add(reply.message)
            answer = reply.text
            self.log(f"round {self.counters.rounds}: round cap ({self.config.max_rounds}) reached, wrap-up answer")
        self.counters.turns += 1
        if self.transcript is not None:
            self.transcript.append_turn(turn, turn=self.counters.turns)
        return answer

    # -- tools -------------------------------------------------------------------------------------------------
    def run_tool(self, name: str, arguments: Any) -> ToolResult:
        """Run one tool call; never raises.

        ``recall_messages`` (offered once the loop has compacted) answers from the source store with
        :func:`snapglyph.recall`: the exact text of each requested message, under a ``#id`` line, capped like
        the workspace tools. An unknown id, a malformed id list or a call before any compaction becomes an error
        result. Every other name goes to :meth:`snapglyph_agent_demo.tools.Workspace.run`.

        Parameters
        ----------
        name : str
            Tool name from the model's call.
        arguments : dict or str
            The call's arguments, or their JSON text.
        """
        if name != RECALL_TOOL or not any(_tool_name(t) == RECALL_TOOL for t in self.tools):
            return self.workspace.run(name, arguments)
        self.counters.recalls += 1
        try:
            args = json.loads(arguments or "{}") if isinstance(arguments, str) else arguments
            ids = args.get("ids") if isinstance(args, dict) else None
        except ValueError as e:
            return ToolResult(f"error: arguments are not valid JSON: {e}", True)
        if not isinstance(ids, (str, int)) or isinstance(ids, bool) or str(ids).strip() == "":
            return ToolResult('error: recall_messages needs "ids", e.g. {"ids": "12"} or {"ids": "#3-#9, 12"}',
                              True)
        try:
            found = snapglyph.recall(self.store, str(ids))
        except InputError as e:
            return ToolResult(f"error: {e}", True)
        except StoreError:
            wanted = parse_ids(str(ids))
            missing = [i for i in wanted if i not in self.store]
            known = format_ranges(sorted(self.store)) if len(self.store) else "none"
            return ToolResult(f"error: no message {format_ranges(missing or wanted)} to recall; recallable ids: "
                              f"{known}", True)
        text = "\n\n".join(f"#{i}\n{t}" for i, t in found.items())
        return ToolResult(self.workspace.cap(text))

    # -- messages ----------------------------------------------------------------------------------------------
    def _result_messages(self, results: list) -> list[dict]:
        if self.dialect == "openai":
            return [{"role": "tool", "tool_call_id": cid, "content": res.text} for cid, _, res in results]
        blocks = [{"type": "tool_result", "tool_use_id": cid, "content": res.text or "(empty)",
                   **({"is_error": True} if res.is_error else {})} for cid, _, res in results]
        return [{"role": "user", "content": blocks}]

    def body(self, *, tools: bool = True, extra: str | None = None) -> dict:
        """The request body for the current context (reasoning of earlier turns stripped; ``extra`` is a
        one-request instruction, never stored)."""
        msgs = strip_reasoning(self.context, self.dialect)
        if extra:
            msgs = list(msgs)
            last = msgs[-1]
            if self.dialect == "anthropic" and last.get("role") == "user":
                content = last["content"] if isinstance(last["content"], list) else [
                    {"type": "text", "text": last["content"]}]
                msgs[-1] = {**last, "content": content + [{"type": "text", "text": extra}]}
            else:
                msgs.append({"role": "user", "content": extra})
        body: dict = {"model": self.model, "max_tokens": self.config.max_tokens}
        if self.dialect == "openai":
            body["messages"] = [{"role": "system", "content": self.system_prompt}] + msgs
            if tools:
                body["tools"] = self.tools
        else:
            body["system"] = self.system_prompt
            body["messages"] = msgs
            body["tools"] = self.tools                    # Anthropic wants tools defined when tool blocks exist
            if not tools:
                body["tool_choice"] = {"type": "none"}
        return body

    # -- budget ------------------------------------------------------------------------------------------------
    def estimate(self, body: dict) -> int:
        """Calibrated estimate, in provider tokens, of a request: prompt plus the reserved output."""
        reserved = body.get("max_tokens") or body.get("max_completion_tokens") or body.get("max_output_tokens")
        return int(estimate_body(body, self.profile) * self.ratio) + int(reserved or 0)

    def _calibrate(self, reported: int, raw: int) -> None:
        if reported > 0 and raw > 0:
            self._ratio_n += 1
            self.ratio += (reported / raw - self.ratio) / self._ratio_n if self._ratio_n > 1 else \
                reported / raw - self.ratio

    def compact(self, *, reason: str, target: float | None = None) -> Any:
        """Compact the context now to ``target`` x window (default ``config.target``); returns the result.

        Raises
        ------
        BudgetError
            From ``compact_fn`` when no valid cut fits.
        """
        cfg = self.config
        frac = cfg.target if target is None else target
        budget = max(1, int((frac * cfg.context_window - cfg.max_tokens) / max(self.ratio, 1e-3))) + cfg.max_tokens
        body = self.body(tools=True)
        saved = self.context
        before = self.estimate(body)
        t0 = time.perf_counter()
        res = self.compact_fn(body, budget=budget, store=self.store)
        ms = (time.perf_counter() - t0) * 1000
        self.store = res.store
        msgs = res.request["messages"]
        self.context = [m for m in msgs if m.get("role") != "system"]
        after = self.estimate(self.body(tools=True))
        if after >= before:
            self.context = saved
            raise BudgetError(f"compaction did not shrink the request (~{before} -> ~{after} tokens)",
                              needed=after, budget=budget)
        self.counters.compactions += 1
        self._epoch += 1
        if self.store is not None and not any(_tool_name(t) == RECALL_TOOL for t in self.tools):
            self.tools = self.tools + [snapglyph.recall_tool(self.dialect)]
            self.log(f"tools: {RECALL_TOOL} offered from now on (exact text of messages shown as pages, by id)")
        info = {"reason": reason, "before": before, "after": after, "pages": len(getattr(res, "pages", []) or []),
                "budget": budget, "ms": round(ms, 1), "messages": len(self.context)}
        self.counters.history.append(info)
        self.log(f"compaction ({reason}): ~{before} -> ~{after} tokens (calibrated estimate), "
                 f"{info['pages']} pages, {len(self.context)} messages kept, {ms:.0f} ms")
        if hasattr(res, "summary"):
            self.log("  " + res.summary())
        return res

    def _request(self, *, tools: bool, extra: str | None = None) -> Reply:
        cfg = self.config
        body = self.body(tools=tools, extra=extra)
        if self.estimate(body) > cfg.threshold * cfg.context_window:
            self._compact_or_stop("proactive, above %d%% of the window" % round(cfg.threshold * 100), cfg.target)
            body = self.body(tools=tools, extra=extra)
        frac = cfg.target
        for attempt in range(cfg.overflow_retries + 1):
            raw = estimate_body(body, self.profile)
            try:
                reply = self._send(body)
            except CallFailed as e:
                ov = detect(e.status, e.body)
                if ov is None:
                    raise ProviderError(f"provider error {e.status}: {str(e.body)[:500]}") from None
                self.counters.overflows += 1
                self._learn_from_overflow(ov, raw)
                self.log(f"overflow: {ov.provider} says {ov.message[:160]!r}")
                if attempt == cfg.overflow_retries:
                    break
                self._compact_or_stop("overflow" if attempt == 0 else f"overflow again, retry {attempt + 1}", frac)
                frac *= 0.6
                body = self.body(tools=tools, extra=extra)
                continue
            trunc = self._truncation(raw, reply.prompt_tokens) if cfg.check_truncation else None
            if trunc is not None:
                self.counters.truncations += 1
                self.log(f"silent truncation: {trunc.message}")
                if trunc.limit and trunc.limit < cfg.context_window:
                    self.log(f"the server evaluated at most {trunc.limit} tokens (configured {cfg.context_window}); "
                             f"using it as the window")
                    cfg.context_window = trunc.limit
                if attempt == cfg.overflow_retries:
                    break
                self._compact_or_stop("silent truncation" if attempt == 0 else
                                      f"silent truncation again, retry {attempt + 1}", frac)
                frac *= 0.6
                body = self.body(tools=tools, extra=extra)
                continue
            if reply.prompt_tokens:
                self._calibrate(reply.prompt_tokens, raw)
                self._ref = (self._epoch, raw, reply.prompt_tokens)
            return reply
        raise AgentStop(f"the request still overflows (or is truncated) after {cfg.overflow_retries} compactions; "
                        f"giving up")

    def _truncation(self, raw: int, reported: int | None, *, min_gap: int = 64) -> OverflowResult | None:
        """Whether a 200 reply looks silently truncated; ``raw`` is the uncalibrated estimate of what was sent.

        Two signals, in tokens, neither trusting the calibration (it may have learned from a truncated count, and
        a ratio learned on the first, schema-heavy requests mispredicts file contents):

        - growth: since the last reply judged whole (the context only appended to since), the uncalibrated
          estimate grew by ``added``; when the reported count grew by less than half of that (and by ``min_gap``
          less), the server dropped part of the prompt (Ollama's count stays pinned at its window while the
          conversation grows);
        - size: :func:`snapglyph.providers.overflow.check_silent_truncation` of the lower of the uncalibrated and the
          calibrated estimate against the reported count (reported below half of it, or an estimate above the
          configured window reported within it). Profiles that overestimate on purpose (a safety factor) make a
          tighter ratio flag whole prompts.

        Returns an :class:`~snapglyph.providers.overflow.OverflowResult` whose ``limit`` is the reported count (the most the
        server evaluated), or ``None``.
        """
        if not reported or raw <= 0:
            return None
        ref = self._ref
        if ref is not None and ref[0] == self._epoch and raw > ref[1]:
            added, grew = raw - ref[1], reported - ref[2]
            if added >= min_gap and added - grew >= max(min_gap, 0.5 * added):
                return OverflowResult("ollama", raw, reported, (
                    f"prompt count {reported} grew by {grew} since the last reply ({ref[2]}), but about {added} "
                    f"tokens were added: the server dropped part of the prompt"), 200)
        sent = min(raw, int(raw * self.ratio))
        res = check_silent_truncation(sent, reported, context_window=self.config.context_window, ratio=0.5,
                                      min_gap=min_gap)
        if res is None:
            return None
        return OverflowResult(res.provider, res.prompt_tokens, reported, res.message, res.status)

    def _learn_from_overflow(self, ov: OverflowResult, raw: int) -> None:
        cfg = self.config
        if ov.limit and ov.limit < cfg.context_window:
            self.log(f"provider reports a window of {ov.limit} tokens (configured {cfg.context_window}); using it")
            cfg.context_window = ov.limit
        if ov.prompt_tokens:
            self._calibrate(ov.prompt_tokens, raw)
        elif raw > 0:
            # No size in the body: the prompt was at least window - max_tokens + 1; never estimate below that.
            floor = (cfg.context_window - cfg.max_tokens + 1) / raw
            if floor > self.ratio:
                self.ratio = floor

    def _compact_or_stop(self, reason: str, frac: float) -> None:
        # Aim for ``frac`` of the window; if nothing fits that, accept up to the threshold; then, as a last resort
        # (still no model call), keep only the newest messages from a valid boundary; else stop.
        last = None
        for f in dict.fromkeys((frac, max(frac, self.config.threshold * 0.95))):
            try:
                self.compact(reason=reason, target=f)
                return
            except BudgetError as e:
                last = e
        limit = self.config.threshold * 0.95 * self.config.context_window
        sys_ = self.body()["messages"][:1] if self.dialect == "openai" else []
        kept = trim_to_boundary(self.context, self.dialect,
                                lambda msgs: self.estimate({**self.body(), "messages": sys_ + msgs}) <= limit)
        if kept is None:
            raise AgentStop(f"cannot recover from the overflow: no valid cut remains ({last})") from None
        self.log(f"compaction failed ({last}); kept the newest {len(kept)} messages from a valid boundary")
        self.context = kept
        self._epoch += 1

    def _send(self, body: dict) -> Reply:
        delay = self.config.backoff
        for attempt in range(self.config.transient_retries + 1):
            try:
                return self.client.send(body)
            except CallFailed as e:
                if not e.transient or attempt == self.config.transient_retries:
                    raise
                self.log(f"transient failure ({e.status}), retrying in {delay:.1f} s")
                time.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")


def _tool_name(tool: dict) -> str:
    return tool.get("name") or (tool.get("function") or {}).get("name", "")


def _short(args: Any, n: int = 60) -> str:
    s = args if isinstance(args, str) else json.dumps(args)
    return s if len(s) <= n else s[: n - 3] + "..."
