"""The proxy's memory of each conversation it compacted, kept in a state folder so a restart resumes.

One JSON file per conversation, ``<state>/conversations/<key>.json`` (``key`` is snapglyph's conversation key, see
:func:`snapglyph.compaction.second_pass.conversation_key`), written atomically (a temporary file in the same folder,
then ``os.replace``), plus the conversation's source store ``<key>.store.jsonl``. Nothing from request headers is
ever written. The default folder is ``snapglyph/serve`` under the user's cache directory (``platformdirs``, else
``$XDG_CACHE_HOME`` or ``~/.cache``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

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
    pending : bool
        Compact the next request before sending it (set by an overflow inside a stream that had started).
    no_images : str
        Why pages are never sent to this conversation's model (empty when they may be).
    requests, compactions, cuts, pages, tokens_before, tokens_after, last_status : int
        Figures for the status page: requests seen, requests sent compacted, cuts made, pages and estimated
        tokens of the last compacted request, and the last upstream status.
    recalls : int
        Rounds of ``recall_messages`` calls the proxy answered (:mod:`snapglyph.serve.recall_loop`).

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
    history: list = field(default_factory=list)

    @property
    def compacted(self) -> bool:
        """True once a cut was made."""
        return self.cut is not None

    def to_json(self) -> dict:
        """Plain data for the status page and the state file."""
        return asdict(self)


class StateDir:
    """The state folder: one :class:`ConversationRecord` per key, loaded on start and saved on each change.

    Parameters
    ----------
    path : str or Path
        The folder (made if missing).

    Raises
    ------
    ServeError
        If the folder cannot be made or written.

    Examples
    --------
    >>> import tempfile
    >>> d = StateDir(tempfile.mkdtemp())
    >>> c = d.get("0123456789abcdef", create=True); c.cut = 7; d.save(c)
    >>> StateDir(d.path).get("0123456789abcdef").cut
    7
    """

    def __init__(self, path: "str | os.PathLike") -> None:
        self.path = Path(path)
        self.folder = self.path / "conversations"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            probe = self.folder / ".write-test"
            probe.write_text("ok")
            probe.unlink()
        except OSError as e:
            raise ServeError(f"state folder {self.path} cannot be written: {e.strerror or e}") from None
        self._convs: dict[str, ConversationRecord] = {}
        names = {f.name for f in fields(ConversationRecord)}
        for f in sorted(self.folder.glob("*.json")):
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
                conv = ConversationRecord(**{k: v for k, v in data.items() if k in names})
            except (OSError, ValueError, TypeError):
                continue                                    # a torn or foreign file: start that one afresh
            if _KEY.match(conv.key):
                self._convs[conv.key] = conv

    def get(self, key: str, *, create: bool = False) -> ConversationRecord | None:
        """The conversation of ``key``; a new one when ``create`` (not saved until :meth:`save`)."""
        conv = self._convs.get(key)
        if conv is None and create:
            conv = self._convs[key] = ConversationRecord(key)
        return conv

    def store_path(self, key: str) -> Path:
        """Where the conversation's source store lives."""
        return self.folder / f"{key}.store.jsonl"

    def save(self, conv: ConversationRecord) -> None:
        """Write one conversation's state atomically."""
        self._convs[conv.key] = conv
        data = json.dumps(conv.to_json(), ensure_ascii=True, sort_keys=True).encode()
        write_atomic(self.folder / f"{conv.key}.json", data)

    def __len__(self) -> int:
        return len(self._convs)

    def all(self) -> list[ConversationRecord]:
        """Every known conversation, newest key order not guaranteed."""
        return list(self._convs.values())
