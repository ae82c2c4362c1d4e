"""The agent loop: turns of rounds against a provider, recovering from "context too long" with snapglyph.

A user message starts a turn. Each round sends the conversation and either runs the tool calls the answer asks
for or ends the turn with its text. Every budget rule is the library's, so this loop only decides *when*:

- before a request: when its estimate (:func:`snapglyph.estimate`, scaled by a
  :class:`snapglyph.providers.tokens.Calibration` learned from the usage the provider reported) is above
  ``threshold`` of the window, compact ahead of time to ``target`` of it (:func:`snapglyph.budget_for`);
- after an overflow answer (:func:`snapglyph.providers.overflow.detect`), or a 200 whose prompt was silently cut
  (:func:`snapglyph.providers.overflow.check_silent_truncation`, with ``check_truncation``): compact to
  :func:`snapglyph.next_budget` of the request that overflowed, and resend, a few times at most;
- compaction is :func:`snapglyph.compact` (head verbatim, the old middle as pages, the newest rounds verbatim);
  from the first one on the loop offers ``recall_messages`` and answers it from the compaction's source store.

A failed call is data, not an exception (as in pi-mono's agent loop): :meth:`Agent.run_turn` returns the last
:class:`~snapglyph_agent_demo.clients.Reply`, whose ``error`` says why a turn failed; a failed turn leaves the
conversation as it was before it. Each finished turn is appended to the kill-safe
:class:`~snapglyph_agent_demo.transcript.Transcript` as the original messages (never pages, never the system
prompt, which is rebuilt at start).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import snapglyph
from snapglyph.compaction.budget import Budget
from snapglyph.errors import BudgetError, InputError, SnapglyphError
from snapglyph.providers.overflow import OverflowResult, check_silent_truncation, detect
from snapglyph.providers.params import output_reserve
from snapglyph.providers.tokens import Calibration

from .clients import Reply
from .context import request_body, tool_result_messages
from .tools import ToolResult, Workspace, recall_result, tool_definitions
from .transcript import Transcript

__all__ = ["RECALL_TOOL", "WRAP_UP", "Agent", "AgentStop", "Counters", "LoopConfig"]

RECALL_TOOL = "recall_messages"
"""Name of the tool the loop offers once it has compacted (:func:`snapglyph.recall_tool`)."""

WRAP_UP = ("You have reached the limit of tool rounds for this turn. Do not call tools. Reply now in plain text "
           "with your answer so far: what you found, what is unfinished, and what you would do next.")
"""The one-request instruction of a turn's last round (sent, never stored)."""


class AgentStop(SnapglyphError):
    """The session's turn cap was reached."""


@dataclass
class LoopConfig:
    """Settings of the loop.

    Attributes
    ----------
    context_window : int
        The window the loop assumes, in provider tokens (an overflow that names a smaller one wins).
    max_tokens : int
        Output tokens requested per round (reserved inside the window).
    threshold, target : float
        Compact ahead of time above ``threshold`` of the window, to ``target`` of it (overflows too).
    max_rounds, max_turns : int
        Model calls per turn before one wrap-up request without tools; turns per session.
    overflow_retries : int
        Compact-and-resend attempts for one request.
    profile : str, optional
        snapglyph reader profile for estimates and pages (default: ``openai`` or ``claude`` by dialect).
    check_truncation : bool
        Treat a 200 whose reported prompt count shows the prompt silently cut (Ollama) as an overflow. Off by
        default: a server whose count leaves out cached tokens would look truncated.
    """

    context_window: int = 128_000
    max_tokens: int = 1024
    threshold: float = 0.85
    target: float = 0.5
    max_rounds: int = 12
    max_turns: int = 50
    overflow_retries: int = 3
    profile: str | None = None
    check_truncation: bool = False


@dataclass
class Counters:
    """Rounds, turns and sessions, plus this session's overflows, silent truncations, compactions and recall calls;
    ``history`` holds one dict per compaction (reason, tokens before and after, pages, budget)."""

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
        Has ``send(body) -> Reply`` (:mod:`snapglyph_agent_demo.clients`); a failure is a reply with ``error`` set.
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
    log : callable
        Receives one line of progress text at a time.

    Raises
    ------
    InputError
        For an unknown dialect.

    Examples
    --------
    >>> from snapglyph_agent_demo.clients import failed
    >>> class Model:                         # answers once, then the connection is gone
    ...     replies = [Reply({"role": "assistant", "content": "hi"}, "hi", prompt_tokens=30),
    ...                failed(None, "Connection error.")]
    ...     def send(self, body):
    ...         return self.replies.pop(0)
    >>> agent = Agent(Model(), dialect="openai", model="m", workspace=Workspace("."), log=lambda line: None)
    >>> agent.run_turn("hello").text
    'hi'
    >>> agent.run_turn("again").error, len(agent.context)     # the failed turn left the conversation as it was
    ('provider error None: Connection error.', 2)
    """

    def __init__(self, client: Any, *, dialect: str, model: str, workspace: Workspace,
                 transcript: Transcript | None = None, system_prompt: str = "You are a careful coding agent.",
                 config: LoopConfig | None = None, log: Callable[[str], None] = print) -> None:
        if dialect not in ("openai", "anthropic"):
            raise InputError(f"dialect must be 'openai' or 'anthropic', not {dialect!r}")
        self.client, self.dialect, self.model, self.workspace = client, dialect, model, workspace
        self.transcript, self.system_prompt, self.log = transcript, system_prompt, log
        self.config = config or LoopConfig()
        self.profile = self.config.profile or ("openai" if dialect == "openai" else "claude")
        self.window = self.config.context_window          # learned down from overflows
        self.calibration = Calibration()                  # provider tokens per estimated token
        self.tools = tool_definitions(dialect)
        self.context: list[dict] = []                     # what is sent (may hold a snapshot message)
        self.store: Any = None                            # the source store of the messages shown as pages
        self.counters = Counters()
        self._whole: tuple[int, int] | None = None        # (estimate, reported) of the last whole prompt
        self._started = False

    def start(self, *, resume: bool = False) -> None:
        """Start the session: with ``resume``, load the transcript's finished turns (recovering a torn end)."""
        self._started, self.counters.sessions = True, 1
        if self.transcript is None:
            return
        loaded = self.transcript.load()
        if loaded.set_aside:
            self.log(f"transcript: set aside {loaded.set_aside} bytes of an unfinished turn or torn line")
        self.counters.sessions = loaded.sessions + 1
        if resume and not loaded.turns:
            self.log(f"resume: nothing to resume: {self.transcript.path} "
                     + ("holds no finished turn" if self.transcript.path.exists() else "does not exist yet")
                     + "; starting a new conversation")
        elif resume:
            self.context, self.counters.turns = list(loaded.messages), loaded.turns
            self.log(f"resume: {loaded.turns} turns, {len(self.context)} messages restored")
        self.transcript.start_session(self.counters.sessions, dialect=self.dialect, model=self.model)

    def run_turn(self, user_text: str) -> Reply:
        """Run one turn: the user message, rounds of tool calls, the final answer (or a wrap-up after
        ``max_rounds``). Returns the last reply; when its ``error`` is set the turn failed and left nothing behind.

        Raises
        ------
        AgentStop
            If the session's turn cap was reached.
        """
        if not self._started:
            self.start()
        if self.counters.turns >= self.config.max_turns:
            raise AgentStop(f"turn cap reached ({self.config.max_turns} turns per session)")
        before = (list(self.context), self.store, self.tools)
        turn = [{"role": "user", "content": user_text}]
        self.context.append(turn[0])
        for r in range(self.config.max_rounds + 1):
            last = r == self.config.max_rounds
            reply = self._request(tools=not last, extra=WRAP_UP if last else None)
            if reply.error is not None:
                self.context, self.store, self.tools = before
                return reply
            self.counters.rounds += 1
            new = [reply.message] + (self._run_calls(reply) if reply.tool_calls and not last else [])
            turn += new
            self.context += new
            if last or not reply.tool_calls:
                self.log(f"round {self.counters.rounds}: " + ("round cap reached, wrap-up answer" if last else
                                                              f"answer ({reply.prompt_tokens} prompt tokens)"))
                break
        self.counters.turns += 1
        if self.transcript is not None:
            self.transcript.append_turn(turn, turn=self.counters.turns)
        return reply

    # -- tools -------------------------------------------------------------------------------------------------
    def _run_calls(self, reply: Reply) -> list[dict]:
        """Run the reply's tool calls; their results as the dialect's messages."""
        results = []
        for call_id, name, args in reply.tool_calls:
            res = self.run_tool(name, args)
            self.log(f"round {self.counters.rounds}: {name}({_short(args)}) -> {len(res.text)} chars"
                     + (" [error]" if res.is_error else "") + f" ({reply.prompt_tokens} prompt tokens)")
            results.append((call_id, res.text, res.is_error))
        return tool_result_messages(self.dialect, results)

    def run_tool(self, name: str, arguments: Any) -> ToolResult:
        """Run one tool call (``arguments`` a dict or its JSON text); never raises. ``recall_messages``, once
        offered, is answered from the source store (:func:`~snapglyph_agent_demo.tools.recall_result`); every other
        name goes to the workspace (:meth:`~snapglyph_agent_demo.tools.Workspace.run`)."""
        if name != RECALL_TOOL or self.store is None:
            return self.workspace.run(name, arguments)
        self.counters.recalls += 1
        res = recall_result(self.store, arguments)
        return ToolResult(self.workspace.cap(res.text), res.is_error)

    # -- requests ----------------------------------------------------------------------------------------------
    def body(self, *, tools: bool = True, extra: str | None = None) -> dict:
        """The request body of the current context (:func:`~snapglyph_agent_demo.context.request_body`)."""
        return request_body(self.dialect, self.context, model=self.model, system=self.system_prompt,
                            tools=self.tools, max_tokens=self.config.max_tokens, offer_tools=tools, extra=extra)

    def estimate(self, body: dict) -> int:
        """Calibrated estimate of a request, in provider tokens: the prompt plus the output it reserves."""
        reserve = output_reserve(None, body)
        return self.calibration.apply(snapglyph.estimate(body, self.profile) - reserve) + reserve

    def _request(self, *, tools: bool, extra: str | None) -> Reply:
        """Send one round's request, compacting before it (above the threshold) and after each overflow."""
        cfg = self.config
        body = self.body(tools=tools, extra=extra)
        if self.estimate(body) > cfg.threshold * self.window:
            why = self._compact(f"proactive, above {cfg.threshold:.0%} of the window", self._budgets(
                snapglyph.budget_for, snapglyph.estimate(body, self.profile), output_reserve(None, body)))
            body = self.body(tools=tools, extra=extra) if why is None else body   # else: send it, it may fit
        for attempt in range(cfg.overflow_retries + 1):
            est = snapglyph.estimate(body, self.profile)
            reply = self.client.send(body)
            ov = self._overflow(reply, est - output_reserve(None, body))
            if ov is None:
                return reply
            if attempt == cfg.overflow_retries:
                break
            budgets = self._budgets(snapglyph.next_budget, ov, body, self.profile, sent_estimate=est)
            self._learn(ov, budgets[0], est - output_reserve(None, body))
            why = self._compact(f"{'silent truncation' if reply.error is None else 'overflow'}"
                                + (f" again, retry {attempt + 1}" if attempt else ""), budgets)
            if why is not None:
                return Reply(error=f"cannot recover from the overflow: {why}", status=reply.status, body=reply.body)
            body = self.body(tools=tools, extra=extra)
        return Reply(error=f"the request still overflows after {cfg.overflow_retries} compactions",
                     status=reply.status, body=reply.body)

    def _budgets(self, rule: Callable[..., Budget], *args: Any, **kwargs: Any) -> list[Budget]:
        """``rule``'s budgets (:func:`snapglyph.budget_for` or :func:`snapglyph.next_budget`) for the window and
        calibration known now: to ``target`` of the window, then to the library's default margin."""
        kwargs.update(window=self.window, ratio=self.calibration.ratio)
        return [rule(*args, margin=1 - self.config.target, **kwargs), rule(*args, **kwargs)]

    def _overflow(self, reply: Reply, prompt_est: int) -> OverflowResult | None:
        """The overflow a reply shows (an error body, or with ``check_truncation`` a silently cut prompt), or
        ``None``; a whole reply's reported usage calibrates the estimate."""
        if reply.error is not None:
            ov = detect(reply.status, reply.body)
            if ov is not None:
                self.counters.overflows += 1
                self.log(f"overflow: {ov.provider} says {ov.message[:160]!r}")
            return ov
        if not reply.prompt_tokens:
            return None
        # uncalibrated (a ratio learned on tool schemas mispredicts file contents); flagged below half of it, as
        # a profile may estimate high on purpose (a safety factor)
        cut = check_silent_truncation(prompt_est, reply.prompt_tokens, ratio=0.5, since=self._whole) \
            if self.config.check_truncation else None
        if cut is None:
            self.calibration = self.calibration.update(reply.prompt_tokens, max(1, prompt_est))
            self._whole = (prompt_est, reply.prompt_tokens)
            return None
        self.counters.truncations += 1
        self.log(f"silent truncation: {cut.message}")
        return OverflowResult(cut.provider, None, reply.prompt_tokens, cut.message, 200)  # the most it evaluated

    def _learn(self, ov: OverflowResult, budget: Budget, prompt_est: int) -> None:
        """Keep what an overflow proves: a smaller window, and the ratio (measured, or raised to a floor)."""
        if budget.window and budget.window < self.window:
            self.log(f"the provider's window is {budget.window} tokens (assumed {self.window}); using it")
            self.window = budget.window
        if ov.prompt_tokens:
            self.calibration = self.calibration.update(ov.prompt_tokens, max(1, prompt_est))
        elif budget.ratio > self.calibration.ratio:
            self.calibration = Calibration(budget.ratio, self.calibration.samples)

    def _compact(self, reason: str, budgets: list[Budget]) -> str | None:
        """Compact the context to the first of ``budgets`` that fits; ``None``, or why none did."""
        body, why = self.body(), "no budget"
        for b in budgets:
            try:
                res = snapglyph.compact(body, profile=self.profile, dialect=self.dialect, budget=b,
                                        store=self.store, max_tokens=output_reserve(None, body),
                                        recall_tool=True, allow_empty_middle=True)   # recall answers the rest
            except BudgetError as e:
                why = str(e)
                continue
            if res.tokens_after >= res.tokens_before:
                why = f"compaction to {b.tokens} tokens did not shrink the request"
                continue
            first, self.store, self._whole = self.store is None, res.store, None
            self.context = [m for m in res.request["messages"] if m.get("role") != "system"]
            if first:
                self.tools = self.tools + [snapglyph.recall_tool(self.dialect)]
                self.log(f"tools: {RECALL_TOOL} offered from now on (exact text of messages shown as pages, by id)")
            self.counters.compactions += 1
            self.counters.history.append({"reason": reason, "before": res.tokens_before, "after": res.tokens_after,
                                          "pages": len(res.pages), "budget": b.tokens})
            self.log(f"compaction ({reason}): ~{res.tokens_before} -> ~{res.tokens_after} tokens, "
                     f"{len(res.pages)} pages, {len(self.context)} messages kept")
            return None
        self.log(f"compaction ({reason}) failed: {why}")
        return why


def _short(args: Any, n: int = 60) -> str:
    s = args if isinstance(args, str) else json.dumps(args)
    return s if len(s) <= n else s[: n - 3] + "..."
