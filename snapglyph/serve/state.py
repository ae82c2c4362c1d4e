"""The proxy's memory of each conversation it compacted, kept in a state folder so a restart resumes.

One JSON file per conversation, ``<state>/conversations/<key>.json`` (``key`` is snapglyph's conversation key, see
:func:`snapglyph.compaction.keys.conversation_id`), written atomically (:func:`snapglyph._files.write_atomic`), plus
the conversation's source store ``<key>.store.jsonl``. At most ``SERVE_RECORDS_IN_MEMORY`` records are held in
memory (the least recently used is dropped and read again from its file on its next request). Nothing from request
headers is ever written. The default folder is ``snapglyph/serve`` under the user's cache directory (``platformdirs``, else
``$XDG_CACHE_HOME`` or ``~/.cache``).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from .._config import SERVE_RECORDS_IN_MEMORY
from .._files import write_atomic
from ..errors import ServeError

__all__ = ["ConversationRecord", "StateDir", "default_state_dir"]

_KEY = re.compile(r"^[0-9a-f]{16}$")


def default_state_dir() -> Path:
    """``snapglyph/serve`` under the user's cache directory.

    Examples
    --------
    >>> default_state_dir().parts[-2:]
    ('snapglyph', 'serve')
    """
    try:
        import platformdirs
        return Path(platformdirs.user_cache_dir("snapglyph")) / "serve"
    except ImportError:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "snapglyph" / "serve"


@dataclass
class ConversationRecord:
    """What the proxy knows of one conversation.

    Attributes
    ----------
    key : str
        The conversation key (16 hex digits).
    dialect : str
        ``anthropic``, ``openai`` or ``responses``.
    model, profile : str
        The last request's model and the reader profile its pages are drawn for.
    window : int or None
        The context window in provider tokens (reported by an overflow, or ``--window``).
    ratio : float
        Provider tokens per estimated token, learned from the overflow bodies that report a prompt size.
    budget : int or None
        The most a compacted request may cost, in estimated tokens (reserved output included).
    cut : int or None
        Message id of the first verbatim tail message of the current cut; ``None`` before the first compaction.
    prefix : str
        Fingerprint of the messages before the cut, so a history edited by the client is never given old pages.
    kept : int
        Pages of the cut's middle that are sent (the same while the cut is reused; -1: the cut is not reused).
    cut_user : int
        The cap the cut's user's words were written within (:attr:`snapglyph.compaction.sticky.Cut.user`).
    pending : bool
        Compact the next request before sending it (set by an overflow inside a stream that had started).
    no_images : str
        Why pages are never sent to this conversation's model (empty when they may be).
    requests, compactions, cuts, pages, tokens_before, tokens_after, last_status : int
        Figures for the status page: requests seen, requests sent compacted, cuts made, pages and estimated
        tokens of the last compacted request, and the last upstream status.
    recalls : int
        Rounds of ``recall_messages`` calls the proxy answered (:mod:`snapglyph.serve.recall_loop`).
    image_cap : int or None
        Images one request may carry, the client's own counted, as an image-count refusal named it.
    text_retries : int
        Compacted requests answered with a refusal or nothing and sent once more without pages
        (:mod:`snapglyph.serve.refusal`).
    growth : float
        The conversation's growth per turn in estimated tokens (:func:`snapglyph.compaction.growth.grown`).
    cut_requests : list of int
        The request numbers of the newest new cuts (:func:`snapglyph.compaction.growth.storm` counts them).

    Examples
    --------
    >>> c = ConversationRecord("0123456789abcdef", dialect="anthropic")
    >>> c.compacted, c.to_json()["ratio"], c.to_json()["cut"]
    (False, 1.0, None)
    >>> c.cut = 12
    >>> c.compacted
    True
    """

    key: str
    dialect: str = ""
    model: str = ""
    profile: str = ""
    window: int | None = None
    ratio: float = 1.0
    budget: int | None = None
    cut: int | None = None
    prefix: str = ""
    kept: int = 0
    cut_user: int = -1
    pending: bool = False
    no_images: str = ""
    requests: int = 0
    compactions: int = 0
    cuts: int = 0
    pages: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    last_status: int = 0
    recalls: int = 0
    image_cap: int | None = None
    text_retries: int = 0
    growth: float = 0.0
    cut_requests: list = field(default_factory=list)
    history: list = field(default_factory=list)

    @property
    def compacted(self) -> bool:
        """True once a cut was made."""
        return self.cut is not None

    def to_json(self) -> dict:
        """Plain data for the status page and the state file."""
        return asdict(self)


class StateDir:
    """The state folder: one :class:`ConversationRecord` per key, read when first asked for and saved on each
    change; at most ``limit`` held in memory (least recently used dropped, read again from its file).

    Parameters
    ----------
    path : str or Path
        The folder (made if missing).
    limit : int
        Records held in memory (:data:`snapglyph._config.SERVE_RECORDS_IN_MEMORY`).

    Raises
    ------
    ServeError
        If the folder cannot be made or written, or ``limit`` is below 1.

    Examples
    --------
    >>> import tempfile
    >>> d = StateDir(tempfile.mkdtemp(), limit=1)
    >>> c = d.get("0123456789abcdef", create=True); c.cut = 7; d.save(c)
    >>> e = d.get("fedcba9876543210", create=True); d.save(e)     # the first is dropped from memory
    >>> d.held(), d.get("0123456789abcdef").cut, len(d)           # and read again from its file
    (1, 7, 2)
    """

    def __init__(self, path: "str | os.PathLike", *, limit: int = SERVE_RECORDS_IN_MEMORY) -> None:
        self.path = Path(path)
        self.folder = self.path / "conversations"
        if int(limit) < 1:
            raise ServeError(f"the conversation records held in memory must be 1 or more, not {limit}")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            probe = self.folder / ".write-test"
            probe.write_text("ok")
            probe.unlink()
        except OSError as e:
            raise ServeError(f"state folder {self.path} cannot be written: {e.strerror or e}") from None
        self.limit = int(limit)
        self._convs: OrderedDict[str, ConversationRecord] = OrderedDict()
        self._lock = threading.Lock()

    def _read(self, key: str) -> ConversationRecord | None:
        """The record saved for ``key``, or ``None`` (none saved, or a torn or foreign file: start afresh)."""
        if not _KEY.match(key):
            return None
        try:
            data = json.loads((self.folder / f"{key}.json").read_text(encoding="utf-8"))
            conv = ConversationRecord(**{k: v for k, v in data.items() if k in _FIELDS})
        except (OSError, ValueError, TypeError):
            return None
        return conv if conv.key == key else None

    def _hold(self, conv: ConversationRecord, *, replace: bool = False) -> ConversationRecord:
        """Hold ``conv`` as the most recently used (unless ``replace``, the one already held for its key wins); drop
        the least recently used past the limit."""
        with self._lock:
            if replace:
                self._convs[conv.key] = conv
            conv = self._convs.setdefault(conv.key, conv)
            self._convs.move_to_end(conv.key)
            while len(self._convs) > self.limit:
                self._convs.popitem(last=False)
        return conv

    def get(self, key: str, *, create: bool = False) -> ConversationRecord | None:
        """The conversation of ``key`` (held, else read from its file); a new one when ``create`` (not saved until
        :meth:`save`)."""
        with self._lock:
            conv = self._convs.get(key)
            if conv is not None:
                self._convs.move_to_end(key)
                return conv
        conv = self._read(key)
        if conv is None and not create:
            return None
        return self._hold(conv if conv is not None else ConversationRecord(key))

    def store_path(self, key: str) -> Path:
        """Where the conversation's source store lives."""
        return self.folder / f"{key}.store.jsonl"

    def save(self, conv: ConversationRecord) -> None:
        """Write one conversation's state atomically (and hold it as the most recently used)."""
        self._hold(conv, replace=True)
        data = json.dumps(conv.to_json(), ensure_ascii=True, sort_keys=True).encode()
        write_atomic(self.folder / f"{conv.key}.json", data)

    def held(self) -> int:
        """Records held in memory now."""
        return len(self._convs)

    def _saved_keys(self) -> list[str]:
        return [f.stem for f in sorted(self.folder.glob("*.json")) if _KEY.match(f.stem)]

    def __len__(self) -> int:
        with self._lock:
            held = set(self._convs)
        return len(held | set(self._saved_keys()))

    def all(self) -> list[ConversationRecord]:
        """Every known conversation: those held, and those saved (read from their files, not held), in no
        guaranteed order."""
        with self._lock:
            out = dict(self._convs)
        for key in self._saved_keys():
            if key not in out:
                conv = self._read(key)
                if conv is not None:
                    out[key] = conv
        return list(out.values())


_FIELDS = frozenset(f.name for f in fields(ConversationRecord))
