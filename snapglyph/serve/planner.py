"""The proxy's decisions for one conversation: when to compact, to what budget, and with which cut.

- After an overflow: the window the error reports (else the one learned, else ``--window``), less a margin, and
  the provider's count against snapglyph's estimate give the budget (:func:`~snapglyph.compaction.budget.next_budget`).
  A new cut aims at ``target`` (60%) of that budget, so the verbatim tail can grow for many turns.
- Later requests of a compacted conversation keep that cut while its tail fits the budget (sticky: the same head
  and byte-identical pages; :func:`snapglyph.compaction.compactor.compact_sticky`); then a new cut is made.
- A second overflow (of a request already compacted) teaches a smaller window and forgets the cut.
- A conversation not compacted yet whose request is over what its upstream and model taught before (a window, an
  image-count cap, a body byte cap: :class:`~snapglyph.compaction.windows.WindowBook`, shared by every conversation)
  is compacted before it is sent (:func:`~snapglyph.compaction.windows.learned_budget`), and every compacted request
  is fitted under the learned caps.

Methods run in worker threads (rendering is CPU work); each conversation is handled by one thread at a time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from .._config import CONVERSATIONS_IN_MEMORY
from ..compaction.sticky import Cut, CutNoLongerFits
from ..errors import BudgetError, SnapglyphError
from ..providers.overflow import OverflowResult
from ..compaction.budget import Budget, budget_for, clamp_ratio, estimate
from ..compaction.windows import WindowBook, learned_budget, over_image_cap, recovery_budget
from ..providers.params import output_reserve
from ..providers.tokens import counted_once
from .refusal import RefusedPages, cap_images, page_limits
from ..compaction.growth import cut_target, grown
from .rewrite import compact_body
from .state import ConversationRecord, StateDir
from .storms import growth_of, record_cut, storm_check

__all__ = ["Outcome", "Planner"]


@dataclass
class Outcome:
    """What the planner did to one request.

    Attributes
    ----------
    data : bytes
        The body to send (compact JSON), empty when ``error`` is set.
    action : str
        ``compacted`` (a new cut), ``sticky`` (the earlier cut) or ``recovered`` (after an overflow).
    tokens_before, tokens_after, pages : int
        snapglyph's estimate of the request as received and as sent, and the pages in it.
    cut : int
        Message id of the first verbatim tail message.
    error : str
        Why nothing was compacted (a compaction error), else empty.
    note : str
        What the compaction says about the request sent (its ``notes``: the middle's reasoning items dropped, a
        client cache breakpoint dropped, ...), for the log line; empty when nothing.

    Examples
    --------
    >>> Outcome(b"{}", "sticky", tokens_before=5200, tokens_after=3100, pages=2, cut=14).summary()
    'sticky: ~5200 -> ~3100 tokens, 2 pages, tail from #14'
    """

    data: bytes = b""
    action: str = "compacted"
    tokens_before: int = 0
    tokens_after: int = 0
    pages: int = 0
    cut: int = 0
    error: str = ""
    note: str = ""
    storm: bool = False

    def summary(self) -> str:
        """One line of figures."""
        return (f"{self.action}: ~{self.tokens_before} -> ~{self.tokens_after} tokens, {self.pages} pages, "
                f"tail from #{self.cut}")


def _dumps(body: dict) -> bytes:
    """The body as UTF-8 JSON; a lone surrogate the client sent (as a JSON escape) is sent back escaped the same way
    (UTF-8 cannot hold it), so a head or tail item goes out as it came."""
    import json
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode("ascii")


class Planner:
    """Compaction decisions over a :class:`~snapglyph.serve.state.StateDir`.

    Parameters
    ----------
    states : StateDir
    config : ServeConfig

    Examples
    --------
    >>> import tempfile
    >>> from snapglyph.serve.app import ServeConfig
    >>> planner = Planner(StateDir(tempfile.mkdtemp()), ServeConfig("http://127.0.0.1:9", window=8000, compact_at=0.5))
    >>> body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [
    ...     {"role": "assistant" if i % 2 else "user", "content": f"step {i} " + "word " * 300} for i in range(12)]}
    >>> out = planner.before("0123456789abcdef", "anthropic", body, "claude")    # past half the window
    >>> out.action, out.pages, 0.5 * 8000 < out.tokens_before, out.tokens_after < out.tokens_before
    ('compacted', 1, True, True)
    >>> again = planner.before("0123456789abcdef", "anthropic", body, "claude")       # the same cut again
    >>> again.action, again.cut == out.cut, again.data == out.data
    ('sticky', True, True)
    """

    def __init__(self, states: StateDir, config: Any) -> None:
        self.states = states
        self.config = config
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._stores: OrderedDict[str, Any] = OrderedDict()   # source stores, least recently used first
        self.max_stores = CONVERSATIONS_IN_MEMORY
        self.book = WindowBook(states.path)      # windows learned per upstream and model (state folder)
        self.refused = RefusedPages(states.path)   # upstreams and models that refused pages (serve.refusal)
        self._unsaved: set[str] = set()                        # keys whose store a recovery left to save_store

    def _key_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def _store(self, key: str) -> Any:
        """The conversation's source store: held, else read from the state folder (a torn one is written afresh);
        past ``max_stores`` (:data:`~snapglyph._config.CONVERSATIONS_IN_MEMORY`) the least recently used whose
        conversation is not being handled (its lock is free) is saved and dropped, to be read again when it returns."""
        from ..compaction.store import SourceStore
        with self._lock:
            store = self._stores.get(key)
            if store is not None:
                self._stores.move_to_end(key)
                return store
        try:
            store = SourceStore(self.states.store_path(key))
        except SnapglyphError:
            store = SourceStore()
            store.path = self.states.store_path(key)     # a torn store is written afresh
        with self._lock:
            store = self._stores.setdefault(key, store)
            self._stores.move_to_end(key)
            dropped = self._drop_stores(key)
        for old, lock in dropped:
            try:
                old.save()                                 # what a sticky compaction added since the last save
            except (OSError, SnapglyphError):
                pass                                       # the store is for recall; the cut is saved
            finally:
                lock.release()
        return store

    def _drop_stores(self, keep: str) -> list:
        """Take the least recently used stores past ``max_stores`` out (with ``self._lock`` held), each with its
        conversation's lock acquired (a busy conversation keeps its store for now); returns ``(store, lock)``."""
        out = []
        for key in list(self._stores):
            if len(self._stores) <= self.max_stores:
                break
            lock = self._key_locks.setdefault(key, threading.Lock())
            if key == keep or not lock.acquire(blocking=False):
                continue
            out.append((self._stores.pop(key), lock))
        return out

    def learned(self, model: str | None, raw: bytes | None = None) -> bool:
        """Whether the upstream and ``model`` taught a window or a cap that a request (its ``raw`` body, where
        given) may meet (then a new conversation's request is read and estimated before it is sent, :meth:`before`;
        a text request far under them is not: :meth:`~snapglyph.compaction.windows.Learned.surely_under`)."""
        known = self.book.get(self.config.upstream, model or "")
        return known.limits() and not (raw is not None and known.surely_under(raw, known.ratio or 1.0,
                                                                              self.config.margin))

    def _limits(self, model: Any, conv: Any) -> dict:
        """:func:`~snapglyph.serve.refusal.page_limits` with the caps the book learned for the upstream and model:
        the smaller image cap, and the byte cap's aim (:attr:`~snapglyph.compaction.windows.Learned.byte_aim`)."""
        out = page_limits(self, model, conv)
        known = self.book.get(self.config.upstream, model if isinstance(model, str) else "")
        caps = [c for c in (out["max_images"], known.images) if c is not None]
        return {**out, "max_images": min(caps) if caps else None, "max_bytes": known.byte_aim}

    def _learned(self, body: dict, profile: str, model: str | None) -> Budget | None:
        """The budget a request not compacted yet is compacted to, from what the book learned (``None``: it fits)."""
        named = model or (body.get("model") if isinstance(body.get("model"), str) else "")
        known = self.book.get(self.config.upstream, named)
        if not known.limits():
            return None
        try:
            return learned_budget(known, body, profile, nbytes=len(_dumps(body)) if known.byte_aim else None,
                                  margin=self.config.margin)
        except SnapglyphError:
            return None

    def _image_capped(self, key: str, dialect: str, body: dict, profile: str, model: str | None) -> Outcome | None:
        """A request with more images than the image-count cap the book learned for its model, sent under that cap
        (:func:`~snapglyph.serve.refusal.cap_images`: the oldest become placeholders); ``None`` where it is under."""
        named = model or (body.get("model") if isinstance(body.get("model"), str) else "")
        known = self.book.get(self.config.upstream, named)
        try:
            if not over_image_cap(known, body):
                return None
            out = cap_images(self, key, dialect, body, profile, known.images, model=model)
        except SnapglyphError as e:
            return Outcome(error=f"cannot fit the image cap {known.images}: {e}")
        with self._lock:
            self.states.save(self._conv(key, dialect, body, profile, model))      # its model, for the book
        out.action = "compacted"
        return out

    def cap_bytes(self, key: str, dialect: str, body: dict, profile: str, cap: Any, *,
                  model: str | None = None) -> Outcome | None:
        """The request again after a body byte cap (``cap``: a :class:`~snapglyph.compaction.error_read.BodyCap`): the
        cap kept in the book, then compacted under it (a conversation compacted before gets a new cut); ``None``
        where nothing was learned to compact by."""
        named = model or (body.get("model") if isinstance(body.get("model"), str) else "")
        self.book.capped(self.config.upstream, named, body_bytes=cap.limit,
                         refused_bytes=None if cap.limit else cap.refused)
        with self._lock:
            conv = self.states.get(key)
            if conv is not None and conv.compacted:
                conv.cut, conv.pending = None, True
                self.states.save(conv)
        out = self.before(key, dialect, body, profile, model=model)
        if out is not None and not out.error:
            out.action = "recovered"
        return out

    def _conv(self, key: str, dialect: str, body: dict, profile: str, model: str | None) -> ConversationRecord:
        conv = self.states.get(key, create=True)
        conv.dialect = dialect
        conv.model = model or (body.get("model") if isinstance(body.get("model"), str) else "")
        conv.profile = profile
        return conv

    # -- entry points ------------------------------------------------------------------------------------------
    def before(self, key: str, dialect: str, body: dict, profile: str, *, dry: bool = False,
               model: str | None = None) -> Outcome | None:
        """Compact a request before it is sent, or ``None`` to send it as it came. With ``dry`` nothing is
        remembered; ``model``: where the body names none (Gemini: the path's)."""
        with self._key_lock(key), counted_once():
            conv = self.states.get(key)
            if conv is not None and conv.compacted and not conv.pending:
                out = self._sticky(conv, dialect, body, profile, save=not dry, model=model)
                if out is not None:
                    return out
            if conv is not None and (conv.compacted or conv.pending):
                window = conv.window or self.config.window
                try:
                    est = estimate(body, profile)
                except SnapglyphError as e:
                    return Outcome(error=f"cannot read the request: {e}")
                ceiling = Budget(conv.budget, window, conv.ratio) if conv.budget else budget_for(
                    est, output_reserve(None, body), window=window, ratio=conv.ratio, margin=self.config.margin)
                return self._new_cut(key, dialect, body, profile, ceiling, "compacted", dry=dry, model=model)
            learned = self._learned(body, profile, model)
            if learned is not None:                      # over what this upstream and model taught before
                return self._new_cut(key, dialect, body, profile, learned, "compacted", dry=dry, model=model)
            capped = None if dry else self._image_capped(key, dialect, body, profile, model)
            if capped is not None:                       # more own images than a cap learned before
                return capped
            window = (conv.window if conv is not None else None) or self.config.window
            if self.config.compact_at is None or not window:
                return None
            try:
                est = estimate(body, profile)
            except SnapglyphError:
                return None
            ratio = conv.ratio if conv is not None else 1.0
            if est * ratio <= self.config.compact_at * window:
                return None
            ceiling = budget_for(est, output_reserve(None, body), window=window, ratio=ratio, margin=self.config.margin)
            return self._new_cut(key, dialect, body, profile, ceiling, "compacted", dry=dry, model=model)

    def recover(self, key: str, dialect: str, body: dict, profile: str, ov: OverflowResult, *,
                dry: bool = False, model: str | None = None, later: bool = False) -> Outcome:
        """Compact a request the upstream refused as too long, to the window its answer reports (``model`` as in
        :meth:`before`). The request is counted once: its estimate's counts serve the compaction. ``later``: the
        source store is written by :meth:`save_store`, after the retry went out (the cut is saved at once)."""
        with self._key_lock(key), counted_once():
            conv = self.states.get(key)
            try:
                est = estimate(body, profile)
            except SnapglyphError as e:
                return Outcome(error=f"cannot read the request: {e}")
            window = (conv.window if conv is not None else None) or self.config.window
            ratio = conv.ratio if conv is not None else 1.0
            named = model or (body.get("model") if isinstance(body.get("model"), str) else "")
            ceiling = recovery_budget(None if dry else self.book, self.config.upstream, named, ov, body, profile,
                                      window=window, ratio=ratio, margin=self.config.margin, sent_estimate=est)
            return self._new_cut(key, dialect, body, profile, ceiling, "recovered", dry=dry, model=model,
                                 save=not later)

    def save_store(self, key: str) -> None:
        """Write the source store :meth:`recover` left unsaved (``later=True``), if it is still held (a store let go
        was saved then); a store that cannot be written is left as it is (it is for recall; the cut is saved)."""
        with self._key_lock(key):
            with self._lock:
                store = self._stores.get(key) if key in self._unsaved else None
                self._unsaved.discard(key)
            if store is not None:
                try:
                    store.save()
                except (OSError, SnapglyphError):
                    pass

    def second_overflow(self, key: str, ov: OverflowResult, sent: Outcome | None) -> None:
        """The compacted request overflowed too: learn the smaller window and make a new cut next time."""
        with self._key_lock(key), self._lock:
            conv = self.states.get(key)
            if conv is None:
                return
            if sent is not None and sent.tokens_after:
                # what was sent was counted at conv.ratio already: what the overflow proves multiplies it
                # a window learned earlier at or above what just overflowed is disproven (a body naming no numbers)
                known = conv.window if conv.window and conv.window < sent.tokens_after else None
                seen = self.book.get(self.config.upstream, conv.model)
                b = budget_for(sent.tokens_after, 0, overflow=ov, window=known, ratio=1.0, margin=self.config.margin,
                               accepted=seen.accepted, refused=seen.refused)
                conv.ratio, conv.window = clamp_ratio(conv.ratio * b.ratio), b.window
                conv.budget = min(conv.budget or b.tokens, b.tokens)
                self.book.refused(self.config.upstream, conv.model, sent.tokens_after, window=ov.limit)
            conv.cut, conv.pending = None, True
            self.states.save(conv)

    def mark_pending(self, key: str, dialect: str, profile: str) -> None:
        """An overflow inside a stream that had started: compact the conversation's next request first."""
        with self._lock:
            conv = self.states.get(key, create=True)
            conv.dialect, conv.profile, conv.pending, conv.cut = dialect or conv.dialect, profile, True, None
            self.states.save(conv)

    def refuse_images(self, key: str, why: str) -> None:
        """Never send pages to this conversation again (its model does not read images)."""
        with self._lock:
            conv = self.states.get(key, create=True)
            conv.no_images, conv.cut, conv.pending = why, None, False
            self.states.save(conv)

    def count(self, key: str, status: int, sent: Outcome | None, *, recalls: int = 0) -> None:
        """Count one relayed request of a known conversation (unknown ones are not recorded), and the recall rounds
        the proxy answered for it."""
        with self._lock:
            conv = self.states.get(key)
            if conv is None:
                return
            conv.requests += 1
            conv.recalls += recalls
            conv.last_status = status
            if sent is not None and not sent.error:
                if status < 400 and conv.model:            # answered: the window holds what was sent
                    self.book.answered(self.config.upstream, conv.model, sent.tokens_after)
                conv.compactions += 1
                conv.growth = grown(conv.growth, conv.tokens_before or None, sent.tokens_before)
                conv.pages, conv.tokens_before, conv.tokens_after = sent.pages, sent.tokens_before, sent.tokens_after
            self.states.save(conv)

    # -- compaction --------------------------------------------------------------------------------------------
    def _outcome_error(self, error: str) -> Outcome:
        return Outcome(error=error)

    def _outcome(self, new_body: dict, res: Any, cut: Cut | None, action: str) -> Outcome:
        return Outcome(_dumps(new_body), action, res.tokens_before, res.tokens_after, len(res.pages),
                       cut.first_tail if cut is not None else 0, note="; ".join(res.notes))

    def _sticky(self, conv: ConversationRecord, dialect: str, body: dict, profile: str, *,
                save: bool, model: str | None = None) -> Outcome | None:
        """The earlier cut, when its tail still fits the budget and the messages before it are unchanged."""
        cut = Cut(conv.cut, conv.prefix, conv.kept, conv.cut_user) if conv.cut is not None else None
        try:
            budget = Budget(conv.budget, conv.window, conv.ratio)
            new_body, res, _ = compact_body(body, dialect, profile=conv.profile or profile, budget=budget,
                                            store=self._store(conv.key), cut=cut, model=model,
                                            recall_tool=self.config.recall_rounds > 0,
                                            **self._limits(model or conv.model, conv))
        except CutNoLongerFits:
            return None
        except SnapglyphError:
            return None
        return self._outcome(new_body, res, cut, "sticky")

    def _new_cut(self, key: str, dialect: str, body: dict, profile: str, ceiling: Budget, action: str, *,
                 dry: bool, model: str | None = None, save: bool = True) -> Outcome:
        """A new cut aiming at ``target`` of the ceiling (the ceiling itself when nothing fits the target); the
        source store written unless ``save`` is false (then :meth:`save_store` writes it)."""
        mt = output_reserve(None, body)
        stormed = storm_check(self, key, dialect, body, profile) if not dry else None
        if stormed is not None:
            return stormed                                  # no more rewrites: one clear error (serve.storms)
        target = cut_target(ceiling.tokens, mt, growth_of(self, key), share=self.config.target)
        fixed = cut_target(ceiling.tokens, mt, 0.0, share=self.config.target)  # where the growth's target cannot fit
        store = self._store(key) if not dry else None
        known = self.states.get(key)                        # its cut before: the new one keeps its pages first
        earlier = Cut(known.cut, known.prefix, known.kept, known.cut_user) if known is not None and known.cut is not None else None
        last: Exception | None = None
        for budget in dict.fromkeys((target, max(target, fixed), ceiling.tokens)):
            most = ceiling.most if budget == ceiling.tokens else None     # the smallest compaction: the last try
            try:
                new_body, res, cut = compact_body(body, dialect, profile=profile, store=store,
                                                  budget=Budget(budget, ceiling.window, ceiling.ratio, most),
                                                  model=model, recall_tool=self.config.recall_rounds > 0,
                                                  earlier=earlier,
                                                  **self._limits(model or body.get("model"), key))
            except BudgetError as e:
                last = e
                continue
            except SnapglyphError as e:
                return Outcome(error=f"compaction failed: {e}")
            if res.passthrough:                              # our estimate says it fits; the provider disagrees
                last = BudgetError(f"the request already fits {budget} tokens")
                continue
            break
        else:
            return Outcome(error=f"compaction failed: {last}")
        if not dry:
            with self._lock:
                conv = self._conv(key, dialect, body, profile, model)
                conv.window, conv.ratio, conv.budget = ceiling.window, ceiling.ratio, ceiling.tokens
                conv.cut, conv.prefix, conv.kept, conv.cut_user, conv.pending = (cut.first_tail, cut.prefix, cut.kept,
                                                                    cut.user, False)
                conv.cuts += 1
                record_cut(conv)
                conv.history = (conv.history + [{"cut": cut.first_tail, "tokens_before": res.tokens_before,
                                                 "tokens_after": res.tokens_after, "pages": len(res.pages)}])[-20:]
                self.states.save(conv)
                (self._unsaved.discard if save else self._unsaved.add)(key)
            if save:
                try:
                    store.save()
                except (OSError, SnapglyphError):
                    pass                                   # the source store is for recall; the cut is saved
        return self._outcome(new_body, res, cut, action)
