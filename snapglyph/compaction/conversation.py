"""Step 1 of :func:`~snapglyph.compaction.compactor.compact`: the input read, its snapshots expanded, normalized and
priced.

:func:`prepare` turns whatever the caller passed (messages, a transcript, a request body) into a
:class:`Conversation`: the source (every earlier snapshot replaced by the stored source it stands for), the
dialect's normalized messages, and the token cost of each.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..errors import InputError
from ..model.messages import Message
from ..model.snapshot_text import snapshot_text
from ..providers import dialects
from ..providers.profiles import Profile
from ..providers.request_model import request_model
from .digest import MessageDigests
from .estimate import MESSAGE_OVERHEAD, TokenCosts
from .guide import reading_guide
from .image_fit import fit_image_limits
from .second_pass import conversation_key, expand_snapshots
from .store import SourceStore

if TYPE_CHECKING:  # pragma: no cover
    from ..raster.render import Page

__all__ = ["Conversation", "join_counts", "prepare", "reader_notes", "resolve_dialect", "to_messages"]


def resolve_dialect(prof: Profile, dialect: str | None) -> str:
    """The dialect to write: ``dialect`` if given (checked), else the profile's own.

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> resolve_dialect(profile("claude"), None), resolve_dialect(profile("claude"), "responses")
    ('anthropic', 'responses')
    """
    dialect = dialect or getattr(prof, "dialect", None) or ("anthropic" if prof.name.startswith("claude")
                                                            else "openai")
    if dialect not in dialects.DIALECTS:
        raise InputError(f"unknown dialect {dialect!r}; known dialects: {', '.join(dialects.DIALECTS)}")
    return dialect


def to_messages(source: Any) -> tuple[list[Message], list[dict], str | None, dict]:
    """``(messages, tool definitions, model, settings)`` of a list of Message, a Transcript or a request body.

    ``settings`` is ``{"params": {...}, "dialect": ..., "reader_notes": [...]}``: the source request's parameters
    other than its content (empty for messages and for transcripts that are no request), the dialect they are
    written in (``None`` when there is none), and what the reader repaired or skipped (:func:`reader_notes`).

    Raises
    ------
    InputError
        For anything else.

    Examples
    --------
    >>> msgs, tools, model, settings = to_messages({"model": "gpt-4o", "temperature": 0,
    ...                                             "messages": [{"role": "user", "content": "hi"}]})
    >>> [(m.id, m.role, m.text()) for m in msgs], model, settings
    ([(0, 'user', 'hi')], 'gpt-4o', {'params': {'temperature': 0}, 'dialect': 'openai', 'reader_notes': []})
    """
    if isinstance(source, (dict, list)) and (not source or not isinstance(source, list)
                                             or not isinstance(source[0], Message)):
        from ..readers.registry import from_request
        source = from_request(source)
    if hasattr(source, "messages") and hasattr(source, "tools"):
        meta = getattr(source, "meta", None) or {}
        fmt = getattr(source, "format", None)
        settings = {"params": dict(meta.get("params") or {}),
                    "dialect": fmt if fmt in dialects.DIALECTS else None, "reader_notes": reader_notes(source)}
        return list(source.messages), list(source.tools), getattr(source, "model", None), settings
    if not isinstance(source, (list, tuple)):
        raise InputError(f"compact() takes a list of snapglyph.Message, a Transcript, or a request body (a dict "
                         f"or a list of provider messages), not {type(source).__name__}")
    msgs = list(source)
    if not all(isinstance(m, Message) for m in msgs):
        raise InputError("compact() takes a list of snapglyph.Message, a Transcript, or a request body (a dict "
                         "or a list of provider messages)")
    return msgs, [], None, {"params": {}, "dialect": None, "reader_notes": []}


def reader_notes(transcript: Any) -> list[str]:
    """What the reader of ``transcript`` repaired (its ``notes``: a torn line, records run together, a phantom
    parent crossed...) and, in one sentence, the records it skipped as no message (its ``meta["skipped"]`` counts),
    so that every record of the input is accounted for in the compaction's result.

    Examples
    --------
    >>> from types import SimpleNamespace as T
    >>> reader_notes(T(notes=["line 9 is torn"], meta={"skipped": {"progress": 1117, "system": 4, "x": 0}}))
    ['line 9 is torn', 'the reader skipped 1,121 records that are no message: progress 1117, system 4']
    """
    out = [str(n) for n in getattr(transcript, "notes", None) or []]
    skipped = {k: v for k, v in ((getattr(transcript, "meta", None) or {}).get("skipped") or {}).items()
               if isinstance(v, int) and v > 0}
    if skipped:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(skipped.items(), key=lambda kv: (-kv[1], str(kv[0]))))
        out.append(f"the reader skipped {sum(skipped.values()):,} records that are no message: {kinds}")
    return out


def _recall_name() -> str:
    from .recall import RECALL_TOOL_NAME
    return RECALL_TOOL_NAME


def _with_recall_tool(tools: list[dict]) -> list[dict]:
    from .recall import RECALL_TOOL_NAME, recall_tool
    spec = recall_tool("responses")
    return [t for t in tools if t.get("name") != RECALL_TOOL_NAME] + [
        {"name": spec["name"], "description": spec["description"], "parameters": spec["parameters"]}]


@dataclass(frozen=True)
class Conversation:
    """A conversation ready to be cut: source, normalized messages, their token costs, and the request settings.

    Frozen: the steps of :func:`~snapglyph.compaction.compactor.compact` read it and return what they make (their
    notes and rewrites are joined with this conversation's own in the result).

    Attributes
    ----------
    prof : Profile
    dialect, model : str
    max_tokens : int
        Output tokens reserved inside the budget (the caller's, else the source request's, else
        :data:`~snapglyph._config.DEFAULT_MAX_TOKENS`).
    params : dict
        The source request's other parameters as the dialect takes them (see
        :func:`snapglyph.providers.params.carry_params`); ``limit_key`` is the name the output limit goes by.
    tools : list of dict
        Neutral tool definitions the request carries.
    store : SourceStore
        Bound to this conversation.
    source_in : list of Message
        The input as given (earlier snapshots not expanded).
    source : list of Message
        The source: every earlier snapshot replaced by the messages it stands for.
    norm : list of Message
        ``source`` normalized for the dialect (the messages sent verbatim).
    rewrites : collections.Counter
        What reading the conversation changed, by kind: the dialect's normalization, tool names renamed, images
        made to fit the limits known before the cut (:func:`fit_image_limits` with ``extra=None``).
    costs : TokenCosts
        The token counter of the profile.
    per : list of int
        Estimated tokens of each message of ``norm``.
    fixed : int
        Tokens of the tool definitions plus the reserved output.
    before : int
        Estimated tokens of the input request.
    draw : callable
        ``draw(messages) -> list of Page``: the renderer with the caller's profile, cell, mode and font.
    starts : callable or None
        ``starts(messages) -> list of int``: the first message id of each page ``draw`` would give (-1 for none),
        by layout alone (the compactor's: a lazy render kept for the smaller middles drawn after it,
        :func:`snapglyph.raster.lazy.render_lazy`); None to take them from ``draw``.
    notes : tuple of str
        What the result should say of the reading (a model read by another profile's rules, parameters dropped,
        tools renamed).
    recall_tool : str or None
        Name of the recall tool the request carries.
    renamed_tools : dict
        ``{old: new}`` tool names the dialect refuses, renamed (:mod:`snapglyph.providers.tool_names`).
    reader_notes : tuple of str
        What the input's reader repaired or skipped (:func:`reader_notes`).
    digests : MessageDigests
        The memo of message digests (shared with the page cache's keys).
    limit_key : str or None
        The output limit's name in the dialect (:func:`snapglyph.providers.params.output_limit_key`).

    Examples
    --------
    >>> from snapglyph import Message, Part, profile, render
    >>> msgs = [Message(i, r, [Part("text", text=t)]) for i, (r, t) in enumerate(
    ...     [("system", "be brief"), ("user", "fix parser.py"), ("assistant", "done: 2 tests pass")])]
    >>> conv = prepare(msgs, prof=profile("claude"), dialect="anthropic", store=None, model=None, max_tokens=100,
    ...                tools=None, recall_tool=False, draw=render)
    >>> conv.total, conv.fixed, conv.per
    (127, 100, [7, 8, 12])
    >>> req = conv.request(conv.norm[1:])
    >>> req["model"], req["max_tokens"], [m["role"] for m in req["messages"]]
    ('claude-sonnet-4-5', 100, ['user', 'assistant'])
    """

    prof: Profile
    dialect: str
    model: str
    max_tokens: int
    params: dict
    tools: list[dict]
    store: SourceStore
    source_in: list[Message]
    source: list[Message]
    norm: list[Message]
    rewrites: Counter
    costs: TokenCosts
    per: list[int]
    fixed: int
    before: int
    draw: Callable[[list[Message]], "list[Page]"]
    starts: Callable[[list[Message]], list[int]] | None = None
    notes: tuple[str, ...] = ()
    recall_tool: str | None = None
    renamed_tools: dict[str, str] = field(default_factory=dict)
    reader_notes: tuple[str, ...] = ()
    digests: MessageDigests = field(default_factory=MessageDigests)  # shared with the page cache's keys
    limit_key: str | None = None  # the output limit's name in the dialect (:func:`output_limit_key`)

    @property
    def total(self) -> int:
        """Estimated tokens of the normalized conversation sent whole (tool definitions and output included)."""
        return self.fixed + sum(self.per)

    @functools.cached_property
    def snapshot_text_cost(self) -> int:
        """Tokens charged for the snapshot message's ranges line (its longest usual form), the reading guide and
        the message's framing (the user's words and the ledger are charged apart: :mod:`.notes`)."""
        text = snapshot_text([0, 10**6], [0, 10**6], recall_tool=self.recall_tool,
                             sections=[reading_guide(self.recall_tool)])
        return self.costs.text(text) + MESSAGE_OVERHEAD

    def page_starts(self, messages: list[Message]) -> list[int]:
        """The first message id of each page of ``messages`` drawn (-1 for none): by :attr:`starts` where set (no
        page encoded), else from the pages :attr:`draw` gives."""
        if self.starts is not None:
            return self.starts(messages)
        return [p.first_id if p.first_id is not None else -1 for p in self.draw(messages)]

    def request(self, messages: Sequence[Message]) -> dict:
        """The request body of ``messages`` in this conversation's dialect, model, output reserve and tools."""
        return dialects.to_request(list(messages), dialect=self.dialect, model=self.model,
                                   max_tokens=self.max_tokens, tools=self.tools, params=self.params,
                                   limit_key=self.limit_key)


def _settings(settings: dict, dialect: str, model: str,
              max_tokens: int | None) -> tuple[int, dict, str, list[str]]:
    """The output reserve, the parameters to carry, the output limit's name and notes on dropped ones."""
    from ..providers.params import carry_params, output_limit_key, output_reserve

    src = settings.get("params") or {}
    params, dropped = carry_params(src, settings.get("dialect"), dialect)
    same = settings.get("dialect") in (None, dialect)
    limit_key = output_limit_key(dialect, model, src if same else None)
    notes = [f"source request parameters with no place in the {dialect} dialect were dropped: "
             f"{', '.join(dropped)}"] if dropped else []
    return output_reserve(max_tokens, src), params, limit_key, notes


def _rename_tools(norm: list[Message], tools: list[dict], params: dict, dialect: str
                  ) -> tuple[list[Message], list[dict], dict, dict[str, str], Counter, list[str]]:
    """Tool names the dialect refuses renamed alike in calls, results, definitions and the tool choice
    (:func:`snapglyph.providers.tool_names.rename_tools`); with their count and the note naming them."""
    from ..providers.tool_names import rename_tools
    norm, tools, params, renamed = rename_tools(norm, tools, params, dialect)
    if not renamed:
        return norm, tools, params, renamed, Counter(), []
    note = (f"tool names the {dialect} dialect refuses were renamed in calls, results and definitions alike: "
            + ", ".join(f"{a!r} -> {b!r}" for a, b in renamed.items()))
    return norm, tools, params, renamed, Counter({"tool names the dialect refuses renamed": len(renamed)}), [note]


def join_counts(*counters: Counter) -> Counter:
    """A new counter holding the counts of ``counters`` added up, keys in the order they first appear (the inputs
    are not modified; zero counts are kept, unlike ``+``).

    Examples
    --------
    >>> list(join_counts(Counter({"a": 1, "z": 0}), Counter({"b": 2, "a": 1})).items())
    [('a', 2), ('z', 0), ('b', 2)]
    """
    out: Counter = Counter()
    for c in counters:
        out.update(c)
    return out


def prepare(messages: Any, *, prof: Profile, dialect: str, store: SourceStore | None, model: str | None,
            max_tokens: int | None, tools: Sequence[dict] | None, recall_tool: bool,
            draw: Callable[[list[Message]], "list[Page]"],
            starts: Callable[[list[Message]], list[int]] | None = None,
            digests: MessageDigests | None = None) -> Conversation:
    """Read, expand, normalize and price a conversation (see :func:`snapglyph.compact` for the arguments;
    ``digests``: the memo of message digests the page cache uses too, a new one when omitted).

    Raises
    ------
    InputError
        A wrong input type, or no user message after normalization.
    StoreError
        An earlier snapshot whose source the store lacks, or a store of another conversation.

    Examples
    --------
    >>> from snapglyph import Message, Part, profile, render
    >>> msgs = [Message(i, r, [Part("text", text=t)]) for i, (r, t) in enumerate(
    ...     [("system", "be brief"), ("user", "fix parser.py"), ("assistant", "done: 2 tests pass")])]
    >>> conv = prepare(msgs, prof=profile("claude"), dialect="anthropic", store=None, model=None, max_tokens=100,
    ...                tools=None, recall_tool=True, draw=render)
    >>> conv.model, conv.per, conv.fixed, [t["name"] for t in conv.tools]
    ('claude-sonnet-4-5', [7, 8, 12], 247, ['recall_messages'])
    """
    source_in, src_tools, src_model, settings = to_messages(messages)
    all_tools = list(src_tools) + list(tools or [])
    if recall_tool:
        all_tools = _with_recall_tool(all_tools)
    model, notes = request_model(model, src_model, prof)
    max_tokens, params, limit_key, more = _settings(settings, dialect, model, max_tokens)
    key = conversation_key(source_in)
    if store is not None:
        store.bind(key)
    source = expand_snapshots(source_in, store, read_back=isinstance(messages, (dict, list)) and not (
        messages and isinstance(messages, list) and isinstance(messages[0], Message)))
    store = store if store is not None else SourceStore()
    store.bind(key)
    costs = TokenCosts(prof)
    norm, normalized = dialects.normalize(source, dialect=dialect)
    norm, all_tools, params, renamed, renames, renamed_notes = _rename_tools(norm, all_tools, params, dialect)
    norm, fitted = fit_image_limits(norm, prof, extra=None)  # the many-image rule once the count is known
    if not any(m.role in ("user", "tool") for m in norm):
        raise InputError("nothing to send: the conversation has no user message (after removing empty ones)")
    tool_defs = dialects.tool_definitions(all_tools, norm, dialect=dialect)
    fixed = (costs.text(json.dumps(tool_defs, ensure_ascii=False)) if tool_defs else 0) + max_tokens
    costs.prefetch(list(norm) + list(source))  # the tokenizer on every core
    per = [costs.message(m) for m in norm]
    before = fixed + sum(costs.message(m) for m in source)
    return Conversation(prof=prof, dialect=dialect, model=model, max_tokens=max_tokens, params=params,
                        tools=all_tools,
                        store=store, source_in=source_in, source=source, norm=norm,
                        rewrites=join_counts(normalized, renames, fitted), costs=costs, per=per, fixed=fixed,
                        before=before, draw=draw, starts=starts, notes=(*notes, *more, *renamed_notes),
                        recall_tool=_recall_name() if recall_tool else None, renamed_tools=renamed,
                        reader_notes=tuple(settings.get("reader_notes") or ()),
                        digests=digests if digests is not None else MessageDigests(), limit_key=limit_key)
