"""A compacted request answered with a refusal or nothing: one text-only retry, and the memory that pages are refused.

When a request ``serve`` sent with page images is answered HTTP 200 with a refusal or an empty answer
(:func:`snapglyph.providers.refusal.refusal`), the same conversation is sent once more without page images: the
text tiers, the snapshot text with the ids shown, and ``recall_messages`` answered by the proxy
(:func:`snapglyph.serve.rewrite.compact_body` with ``pages=False``). At most one text-only retry per compacted
request: its answer is relayed whatever it is. The upstream and model are remembered in the state folder
(``refused_pages.json``, :class:`RefusedPages`), listed in ``/snapglyph/status`` (``refused_pages``) and cleared by
``serve --clear-refused``: every later compaction for that model is text-only. One log line says so.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from typing import Any

from .._files import write_atomic
from ..compaction.budget import estimate
from ..providers.params import output_reserve

__all__ = ["RefusedPages", "cap_images", "page_limits", "text_only"]


class RefusedPages:
    """Upstreams and models that refused a request carrying pages, kept in ``<state>/refused_pages.json``.

    Parameters
    ----------
    folder : str or Path
        The state folder (it exists).

    Examples
    --------
    >>> import tempfile
    >>> book = RefusedPages(tempfile.mkdtemp())
    >>> book.add("http://up", "claude-opus-4-7", "refusal (stop_reason refusal, category cyber)")
    >>> book.get("http://up", "claude-opus-4-7"), book.get("http://up", "other")
    ('refusal (stop_reason refusal, category cyber)', '')
    >>> RefusedPages(book.path.parent).get("http://up", "claude-opus-4-7") != "", book.clear(), book.all()
    (True, 1, [])
    """

    def __init__(self, folder: "str | Path") -> None:
        self.path = Path(folder) / "refused_pages.json"
        self._lock = threading.Lock()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self._rows = {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self._rows = {}

    @staticmethod
    def _key(upstream: str, model: str) -> str:
        return f"{upstream} {model}"

    def get(self, upstream: str, model: str) -> str:
        """Why pages are refused for this upstream and model, or ``""``."""
        return str(self._rows.get(self._key(upstream, model or ""), {}).get("why", ""))

    def add(self, upstream: str, model: str, why: str) -> None:
        """Remember that this upstream and model refused a request carrying pages (``why``: the refusal)."""
        with self._lock:
            self._rows[self._key(upstream, model or "")] = {"upstream": upstream, "model": model or "", "why": why,
                                                           "since": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                  time.gmtime())}
            self._save()

    def clear(self) -> int:
        """Forget every entry (``serve --clear-refused``); returns how many there were."""
        with self._lock:
            n = len(self._rows)
            self._rows = {}
            self._save()
        return n

    def all(self) -> list[dict]:
        """Every entry, for ``/snapglyph/status``."""
        return [dict(v) for _, v in sorted(self._rows.items())]

    def _save(self) -> None:
        write_atomic(self.path, json.dumps(self._rows, ensure_ascii=True, sort_keys=True).encode())


def page_limits(planner: Any, model: Any, conv: Any) -> dict:
    """The ``pages`` and ``max_images`` keyword arguments of :func:`~snapglyph.serve.rewrite.compact_body` for a
    conversation (a :class:`~snapglyph.serve.state.ConversationRecord`, or its key) of ``model``: no pages where the
    planner's upstream and that model refused them, at most the image cap an image-count refusal named.

    Examples
    --------
    >>> import tempfile
    >>> from types import SimpleNamespace
    >>> p = SimpleNamespace(refused=RefusedPages(tempfile.mkdtemp()), config=SimpleNamespace(upstream="http://up"),
    ...                     states=SimpleNamespace(get=lambda key: None))
    >>> page_limits(p, "m", None)
    {'pages': True, 'max_images': None}
    >>> p.refused.add("http://up", "m", "refusal"); page_limits(p, "m", "0123456789abcdef")
    {'pages': False, 'max_images': None}
    """
    conv = planner.states.get(conv) if isinstance(conv, str) else conv
    model = model if isinstance(model, str) else ""
    return {"pages": not planner.refused.get(planner.config.upstream, model),
            "max_images": getattr(conv, "image_cap", None)}


def text_only(planner: Any, key: str, dialect: str, body: dict, profile: str, why: str, *,
              model: str | None = None) -> Any:
    """The conversation's request compacted once more without pages, after the one sent with pages got ``why``
    (a refusal or an empty answer); the upstream and model are remembered (:class:`RefusedPages`). Returns the
    planner's :class:`~snapglyph.serve.planner.Outcome` (``error`` set where no text-only request fits)."""
    named = model or (body.get("model") if isinstance(body.get("model"), str) else "")
    planner.refused.add(planner.config.upstream, named, why)
    with planner._lock:
        conv = planner.states.get(key, create=True)
        conv.cut, conv.pending, conv.text_retries = None, True, conv.text_retries + 1
        planner.states.save(conv)
    out = planner.before(key, dialect, body, profile, model=model)
    return out


def cap_images(planner: Any, key: str, dialect: str, body: dict, profile: str, limit: int, *,
               model: str | None = None) -> Any:
    """The request compacted to carry at most ``limit`` images (an image-count refusal), the client's own counted
    (the oldest become placeholders); a conversation compacted before gets a new cut under the cap. Returns the
    planner's ``Outcome``.

    Raises
    ------
    SnapglyphError
        When no request under the cap can be made (the caller relays the refusal as it came).
    """
    from .rewrite import compact_body
    with planner._lock:
        conv = planner.states.get(key, create=True)
        conv.image_cap = limit
        compacted = conv.compacted
        if compacted:
            conv.cut, conv.pending = None, True
        planner.states.save(conv)
    if compacted:
        return planner.before(key, dialect, body, profile, model=model)
    room = estimate(body, profile) + output_reserve(None, body)
    new, res, cut = compact_body(body, dialect, profile=profile, budget=room, model=model, max_images=limit)
    return planner._outcome(new, res, cut, "recovered")
