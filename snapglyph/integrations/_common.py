"""What the adapters share: the conversations one adapter serves, each with its own on-disk source store and learned
budget, compaction of a request body to that budget, the next budget after an overflow, and ``recall_messages``.

:class:`Conversations` is the one registry every adapter holds: a :class:`ConversationCompactor` per conversation,
picked by :func:`snapglyph.compaction.keys.conversation_id` (dialect, the caller's own key where the framework has
one, system prompt, first user turn), at most ``limit`` of them in memory (the least recently used is dropped; its
store and learned budget are on disk and are read again on its next request). Files in the folder, per key:
``<key>.store.jsonl`` (the source store) and ``<key>.budget.json`` (the learned budget), each written with
:func:`snapglyph._files.write_atomic` (or the store's own atomic save).

Imports no agent framework (each adapter module imports only its own).
"""
from __future__ import annotations

import json
import logging
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterable

from snapglyph import SourceStore, recall, recall_tool
from snapglyph._config import CONVERSATIONS_IN_MEMORY, STORM_CUTS, STORM_REQUESTS
from snapglyph._files import write_atomic
from snapglyph.compaction.budget import Budget, estimate
from snapglyph.compaction.growth import grown
from snapglyph.compaction.keys import conversation_id
from snapglyph.compaction.windows import WindowBook, capped_profile, learned_budget, over_image_cap, recovery_budget
from snapglyph.integrations._faults import fault_of
from snapglyph.errors import InputError, SnapglyphError, StoreError
from snapglyph.providers.limits import request_bytes
from snapglyph.providers.overflow import OverflowResult

from ._cuts import CutKeeping

_log = logging.getLogger("snapglyph")

__all__ = ["ConversationCompactor", "Conversations", "overflow_of", "recall_spec"]

_CALLS_PER_CONVERSATION = 64     # tool-call ids remembered per conversation held (to answer recall_messages)


def overflow_of(exc: BaseException) -> OverflowResult | None:
    """The context overflow an SDK exception reports, read from its HTTP status and body; ``None`` when it is none.

    Looks at ``exc.status_code`` and, in order, ``exc.response.text``, ``exc.body``, ``exc.message`` and
    ``str(exc)`` (what the OpenAI, Anthropic, LiteLLM and pydantic-ai errors carry), then at ``exc.__cause__``.

    Examples
    --------
    >>> class E(Exception):
    ...     status_code = 400
    ...     body = {"error": {"message": "This model's maximum context length is 4000 tokens. However, you "
    ...             "requested 4100 tokens (3900 in the messages, 200 in the completion).",
    ...             "code": "context_length_exceeded"}}
    >>> overflow_of(E()).limit
    4000
    >>> overflow_of(ValueError("no")) is None
    True
    """
    return fault_of(exc, None, "openai", None).overflow


def recall_spec() -> dict:
    """Name, description and JSON-schema parameters of the ``recall_messages`` tool.

    Examples
    --------
    >>> recall_spec()["name"], recall_spec()["parameters"]["required"]
    ('recall_messages', ['ids'])
    """
    spec = recall_tool("responses")
    return {"name": spec["name"], "description": spec["description"], "parameters": spec["parameters"]}


class ConversationCompactor(CutKeeping):
    """One conversation's compaction state: its source store, its budget (learned from overflows), the last result.

    Parameters
    ----------
    key : str or None
        The conversation's key (16 hex digits); ``None`` for a conversation kept in memory only (no user turn to
        key it by): nothing is written.
    folder : Path or None
        Where the store (``<key>.store.jsonl``) and the learned budget (``<key>.budget.json``) live.
    budget : int
        The configured budget: most tokens one request may cost (reserved output included), in estimated tokens.
    profile, model, max_tokens, recall
        As :class:`Conversations`.
    book : WindowBook, optional
        The windows learned per upstream and model (:mod:`snapglyph.compaction.windows`), shared by the adapter's
        conversations; ``None``: nothing learned beyond this conversation.
    storm_cuts, storm_requests : int
        The storm rule's bounds (:func:`snapglyph.compaction.storms.storm`; ``serve``'s defaults); 0 cuts: no storm.

    Attributes
    ----------
    budget : int
        The budget the next request is compacted to (the configured one until an overflow teaches a smaller one).
    window : int or None
        The provider's window as the last overflow named or implied it, in provider tokens.
    ratio : float
        Provider tokens per estimated token, as the last overflow showed.
    last : CompactResult or None
        The last compaction (``None`` while every request fitted).
    requests, cut_requests, growth
        Requests seen (a retry of the same messages is the same one), the numbers of those that made a new cut
        (:func:`~snapglyph.compaction.storms.note_cut`), the growth per request (estimated tokens); in the budget file.
    The cut is kept, a new one made and counted as ``serve``'s (:mod:`snapglyph.integrations._cuts`); one more new
    cut that would be a storm raises :class:`~snapglyph.errors.CompactionStormError` (through every adapter).

    Raises
    ------
    StoreError
        If the store file exists but is no source store.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> c = ConversationCompactor("0123456789abcdef", pathlib.Path(tempfile.mkdtemp()), budget=50_000)
    >>> body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    >>> c.compact(body, "openai") == (body, None)       # fits: nothing to do
    True
    """

    def __init__(self, key: str | None, folder: Path | None, *, budget: int, profile: str = "openai",
                 model: str | None = None, max_tokens: int | None = None, recall: bool = True,
                 book: WindowBook | None = None, storm_cuts: int = STORM_CUTS,
                 storm_requests: int = STORM_REQUESTS) -> None:
        self.key, self.book = key, book if book is not None else WindowBook(None)   # in memory where none given
        self.storm_cuts, self.storm_requests = int(storm_cuts), int(storm_requests)
        self.requests, self.cut_requests, self.growth = 0, [], 0.0
        self._items = -1                      # items of the last request numbered (a retry sends the same)
        self._before: int | None = None       # the last request's estimate (its growth)
        self._fresh = False                   # the next compaction makes a new cut (its profile changed)
        self._state = folder / f"{key}.budget.json" if key and folder is not None else None
        self.store = SourceStore(folder / f"{key}.store.jsonl" if self._state is not None else None)
        self.configured = self.budget = int(budget)
        self.window: int | None = None
        self.ratio = 1.0
        self.most: int | None = None         # the learned Budget's most (the smallest compaction's bound)
        self.profile, self.model, self.max_tokens, self.recall = profile, model, max_tokens, recall
        self.last = None
        self.lock = threading.RLock()
        self._sent: tuple[dict, int | None] | None = None     # the body compact returned last, and its estimate
        self._size: tuple[dict, int] | None = None           # that body and its size in provider tokens
        self._load()

    def _load(self) -> None:
        if self._state is None or not self._state.exists():
            return
        try:
            data = json.loads(self._state.read_text(encoding="utf-8"))
            budget, window, ratio = int(data["budget"]), data.get("window"), float(data.get("ratio", 1.0))
            most = data.get("most")
            self.requests, self.growth = int(data.get("requests", 0)), float(data.get("growth", 0.0))
            self.cut_requests = [int(n) for n in data.get("cut_requests", [])]
        except (OSError, ValueError, TypeError, KeyError):
            return                                          # a torn or foreign file: the configured budget again
        self.budget = max(1, min(self.configured, budget))
        self.window = int(window) if isinstance(window, int) else None
        self.ratio = ratio
        self.most = int(most) if isinstance(most, int) else None

    def _save(self) -> None:
        if self._state is None:
            return
        data = {"budget": self.budget, "window": self.window, "ratio": self.ratio, "most": self.most,
                "requests": self.requests, "cut_requests": self.cut_requests, "growth": self.growth}
        try:
            write_atomic(self._state, json.dumps(data, sort_keys=True).encode())
        except OSError as e:
            raise StoreError(f"cannot write the learned budget {self._state}: {e.strerror or e}") from None

    def compact(self, body: dict, dialect: str, *, recall: bool | None = None, room: int = 0,
                where: "tuple[str, str] | None" = None) -> tuple[dict, Any]:
        """Compact a request ``body`` in ``dialect`` (``openai``, ``responses``, ...) to the budget; ``recall``:
        offer (and count) the ``recall_messages`` tool this time (default: the conversation's ``recall``); ``room``:
        tokens of the budget left free (for recall answers the caller's loop sends within it); ``where``: the
        ``(upstream, model)`` whose learned window and caps apply, as :meth:`learn` is given it (default: no
        upstream, the body's model).

        The last cut is kept while its tail fits, else a new one keeps its pages first (:mod:`._cuts`). Returns
        ``(body to send, CompactResult)``, or ``(body, None)`` when it fits. Raises what :func:`snapglyph.compact`
        raises, and :class:`~snapglyph.errors.CompactionStormError` instead of a new cut that would be a storm.
        """
        recall = self.recall if recall is None else recall
        with self.lock:
            self._number(body, dialect)
            budget, profile, must = self._learned(body, Budget(max(1, self.budget - room), self.window, self.ratio,
                                                               self.most), room, where)
            res = self._sticky(body, dialect, budget, profile, recall)
            if res is None:
                res = self._run(body, dialect, budget, profile, recall,
                                earlier=self.last.cut if self.last is not None else None)  # its pages kept first
                if not res.passthrough:
                    res = self._new_cut(body, dialect, budget, profile, recall, res)
            self.growth, self._before = grown(self.growth, self._before, res.tokens_before), res.tokens_before
            counted = self.ratio == 1.0          # the compaction's own count is the estimate next_budget takes
            if res.passthrough and not must:           # as it came, unless a learned cap makes it a rewrite
                self._sent, self._size = (body, res.tokens_before if counted else None), (body, res.tokens_before)
                return body, None
            self.last, self._sent = res, (res.request, res.tokens_after if counted else None)
            self._size = (res.request, res.tokens_after)
            if self.store.path is not None:
                self.store.save()
            return res.request, res

    def carried_pages(self, sent: Any) -> bool:
        """Whether ``sent`` (a body, or its items list) is the last compaction's request and it carried pages."""
        res = self.last
        if res is None or not res.pages:
            return False
        if sent is res.request:
            return True
        return _same(res.request, sent if isinstance(sent, dict) else {"messages": sent, "input": sent})

    def _learned(self, body: dict, budget: Budget, room: int,
                 where: "tuple[str, str] | None" = None) -> tuple[Budget, Any, bool]:
        """The budget and profile after what the book learned of the body's model (default :meth:`_where`): a
        smaller window's budget (:func:`snapglyph.compaction.windows.learned_budget`), the image and byte caps
        (:func:`~snapglyph.compaction.windows.capped_profile`); as given where nothing was learned. The third value:
        whether the body is over a learned cap as it is (then even a request that fits its budget is rewritten)."""
        known = self.book.get(*self._where(body, where))
        if not known.limits():
            return budget, self.profile, False
        nbytes = request_bytes(body) if known.byte_aim else None
        must = over_image_cap(known, body) or bool(nbytes and nbytes > known.byte_aim)
        b = learned_budget(known, body, self.profile, nbytes=nbytes, max_tokens=self.max_tokens)
        if b is not None and b.tokens - room < budget.tokens:
            budget = Budget(max(1, b.tokens - room), b.window, b.ratio, b.most)
        return budget, capped_profile(self.profile, images=known.images, body_bytes=known.byte_aim), must

    def _where(self, sent: dict, where: "tuple[str, str] | None") -> tuple[str, str]:
        model = sent.get("model") if isinstance(sent.get("model"), str) else None
        return where or ("", model or self.model or self.profile)

    def answered(self, sent: dict, where: "tuple[str, str] | None" = None) -> None:
        """``sent``, the body :meth:`compact` returned last, was answered: its size is a lower bound of the window
        of ``where`` (``(upstream, model)``; default: no upstream, the body's model), kept in the book."""
        with self.lock:
            size = self._size[1] if self._size is not None and _same(self._size[0], sent) else None
        if size is None and self.ratio == 1.0:      # a copy of what was sent: its estimate is its size
            size = estimate(sent, self.profile, max_tokens=self.max_tokens)
        if size:
            self.book.answered(*self._where(sent, where), size)

    def learn(self, exc: BaseException, sent: dict, *, known: bool = False,
              where: "tuple[str, str] | None" = None) -> bool:
        """After an error answering ``sent`` (the request as it was sent), lower the budget by the one next-budget
        rule (:func:`snapglyph.compaction.windows.recovery_budget`: the numbers the error names, else the size of
        ``sent`` and what the book learned of ``where``, as :meth:`answered`); ``True`` when ``exc`` is an
        overflow. ``known``: the framework already classified ``exc`` as one
        (then it counts even when its body is not recognized). The learned budget is written to disk. When ``sent``
        is the body :meth:`compact` returned last, its size is the compaction's own count of it (not counted again).

        Examples
        --------
        >>> c = ConversationCompactor(None, None, budget=100_000)
        >>> sent = {"model": "gpt-4o", "max_tokens": 200, "messages": [{"role": "user", "content": "w " * 3000}]}
        >>> c.learn(ValueError("Input is too long for requested model."), sent, known=True), c.budget < 3200
        (True, True)
        """
        read = fault_of(exc, sent, self.profile, self.window)
        if read.images is not None or read.body is not None:      # a cap the retry meets (compact reads the book)
            cap = read.body
            self.book.capped(*self._where(sent, where), images=read.images.limit if read.images else None,
                             body_bytes=cap.limit if cap else None, refused_bytes=cap.refused if cap else None)
            return True
        if read.overflow is None and read.note:                    # the output reserve alone fills the window
            _log.warning("snapglyph: %s", read.note)
            return False
        found = read.overflow
        if found is None and not known:
            return False
        with self.lock:
            est = self._sent[1] if self._sent is not None and _same(self._sent[0], sent) else None
            b = recovery_budget(self.book, *self._where(sent, where), found, sent, self.profile, window=self.window,
                                ratio=self.ratio, max_tokens=self.max_tokens, sent_estimate=est)
            self.budget, self.window, self.ratio = min(self.configured, b.tokens), b.window, b.ratio
            self.most = max(self.budget, min(self.configured, b.most)) if b.most else None
            self._save()
        return True

    def recall_text(self, ids: str) -> str:
        """Answer a ``recall_messages`` call: ``#id: text`` blocks from the store, or a one-line error."""
        try:
            found = recall(self.store, ids or "")
        except (SnapglyphError, ValueError) as e:
            return f"error: {e}"
        return "\n\n".join(f"#{i}: {t}" for i, t in sorted(found.items())) or "no such message ids"


class Conversations:
    """The conversations one adapter serves: a :class:`ConversationCompactor` per conversation key, the least
    recently used dropped from memory past ``limit`` (its files stay and are read again on its next request).

    Parameters
    ----------
    folder : str or os.PathLike
        Folder of the conversations' stores and learned budgets (created when absent).
    budget : int
        Most tokens one request may cost (reserved output included); each conversation's budget is lowered on its
        own overflows.
    profile : str
        Reader profile of the model (``openai``, ``claude``, ...).
    model : str, optional
        Model name used for page costs; default: the profile name.
    max_tokens : int, optional
        Output tokens reserved inside the budget; default: the request's own limit
        (:func:`snapglyph.providers.params.output_reserve`).
    recall : bool
        Name the ``recall_messages`` tool in the snapshot text (and count its definition in the budget); where it
        is answered, a compaction may show no page of the middle (all of it recallable by id), as ``serve`` does.
    limit : int
        Conversations held in memory (:data:`snapglyph._config.CONVERSATIONS_IN_MEMORY`).
    storm_cuts, storm_requests : int
        The storm rule's bounds for each conversation, as :class:`ConversationCompactor`'s.

    Raises
    ------
    InputError
        If ``folder`` is a file or names a ``.jsonl`` file (the adapters took one store file before), or ``limit``
        is below 1.

    Examples
    --------
    >>> import tempfile
    >>> convs = Conversations(tempfile.mkdtemp(), budget=50_000, limit=1)
    >>> a = convs.of("openai", {"messages": [{"role": "user", "content": "fix the bug"}]}, caller="alice")
    >>> b = convs.of("openai", {"messages": [{"role": "user", "content": "fix the bug"}]}, caller="bob")
    >>> a is b, a.key == b.key, len(convs)            # same words, two callers: two conversations, one in memory
    (False, False, 1)
    """

    def __init__(self, folder: "str | os.PathLike", *, budget: int, profile: str = "openai",
                 model: str | None = None, max_tokens: int | None = None, recall: bool = True,
                 limit: int = CONVERSATIONS_IN_MEMORY, storm_cuts: int = STORM_CUTS,
                 storm_requests: int = STORM_REQUESTS) -> None:
        self.folder = Path(folder)
        self.storm_cuts, self.storm_requests = int(storm_cuts), int(storm_requests)
        if self.folder.is_file() or (self.folder.suffix == ".jsonl" and not self.folder.exists()):
            raise InputError(f"{self.folder} is a store file; the adapters keep one store per conversation in a "
                             "folder: give a folder")
        if int(limit) < 1:
            raise InputError(f"the conversations held in memory must be 1 or more, not {limit}")
        self.budget, self.profile, self.model, self.max_tokens, self.recall = int(budget), profile, model, \
            max_tokens, recall
        self.limit = int(limit)
        self._held: OrderedDict[str, ConversationCompactor] = OrderedDict()
        self._calls: OrderedDict[str, str] = OrderedDict()
        self._callers: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self.book = WindowBook(self.folder)          # windows learned per upstream and model, beside the stores

    def __len__(self) -> int:
        return len(self._held)

    def __contains__(self, key: object) -> bool:
        return key in self._held

    def held(self) -> list[ConversationCompactor]:
        """The conversations in memory, least recently used first."""
        with self._lock:
            return list(self._held.values())

    def _new(self, key: str | None) -> ConversationCompactor:
        return ConversationCompactor(key, self.folder if key else None, budget=self.budget, profile=self.profile,
                                     model=self.model, max_tokens=self.max_tokens, recall=self.recall,
                                     book=self.book, storm_cuts=self.storm_cuts, storm_requests=self.storm_requests)

    def get(self, key: str) -> ConversationCompactor:
        """The conversation of ``key``: the one in memory, else read from its files (new when there are none).

        Raises
        ------
        StoreError
            If its store file exists but is no source store.
        """
        with self._lock:
            conv = self._held.get(key)
            if conv is not None:
                self._held.move_to_end(key)
                return conv
        self.folder.mkdir(parents=True, exist_ok=True)
        conv = self._new(key)
        with self._lock:
            conv = self._held.setdefault(key, conv)         # another thread may have read it meanwhile
            self._held.move_to_end(key)
            while len(self._held) > self.limit:
                self._held.popitem(last=False)             # its store and budget are on disk already
        return conv

    def of(self, dialect: str, body: dict, caller: str | None = None) -> ConversationCompactor:
        """The conversation a request ``body`` in ``dialect`` belongs to, keyed by
        :func:`snapglyph.compaction.keys.conversation_id` (with the caller's own key where there is one). A body
        with no user turn gets a conversation of its own kept in memory only (compacted and recovered, not
        remembered)."""
        key = conversation_id(dialect, body, caller=caller)
        if key is None:
            return self._new(None)
        if caller:
            with self._lock:
                _put(self._callers, caller, key, self.limit * 4)
        return self.get(key)

    def note_calls(self, conv: ConversationCompactor, call_ids: Iterable[str]) -> None:
        """Remember which conversation's model answer made the tool calls ``call_ids`` (to answer their
        ``recall_messages`` from that conversation's store)."""
        if conv.key is None:
            return
        with self._lock:
            for cid in call_ids:
                if isinstance(cid, str) and cid:
                    _put(self._calls, cid, conv.key, self.limit * _CALLS_PER_CONVERSATION)

    def for_call(self, call_id: str | None = None, caller: str | None = None) -> ConversationCompactor | None:
        """The conversation whose model made tool call ``call_id`` (else the caller key's last conversation), or
        ``None`` when neither is known: never a guess."""
        with self._lock:
            key = self._calls.get(call_id) if call_id else None
            key = key or (self._callers.get(caller) if caller else None)
        return self.get(key) if key else None

    def recall_text(self, ids: str, call_id: str | None = None, caller: str | None = None) -> str:
        """Answer a ``recall_messages`` call from the store of the conversation that made it (see
        :meth:`for_call`), or a one-line error when that conversation is not known here."""
        conv = self.for_call(call_id, caller)
        if conv is None:
            return ("error: recall_messages: the conversation of this call is not known to snapglyph here (its "
                    "pages came from another process or were made too long ago)")
        return conv.recall_text(ids)


def _same(body: dict, sent: dict) -> bool:
    """``sent`` is ``body``, or a copy of it holding the very same items list (an adapter rebuilding its request)."""
    return body is sent or any(body.get(k) is sent.get(k) is not None for k in ("messages", "input", "contents"))


def _put(table: OrderedDict, key: str, value: str, limit: int) -> None:
    table[key] = value
    table.move_to_end(key)
    while len(table) > limit:
        table.popitem(last=False)
