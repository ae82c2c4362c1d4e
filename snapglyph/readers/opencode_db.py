"""opencode's SQLite store (``~/.local/share/opencode/opencode.db``): each session's message and part JSON, as
opencode writes them, read into the ``{info, messages: [{info, parts}]}`` shape of ``opencode export`` for
:func:`snapglyph.readers.opencode.read_opencode`.

Schema source: ``packages/opencode/src/session/session.sql.ts`` of github.com/sst/opencode (its copy in
anomalyco/opencode, read 2026-12-07): table ``session`` (``id``, ``title``, ``directory``, ``version``,
``time_created``, ``time_updated``, ...), ``message`` (``id``, ``session_id``, ``time_created``, ``data``: the
message info without ``id`` and ``sessionID``), ``part`` (``id``, ``message_id``, ``session_id``, ``data``: the part
without its ids). Messages are read in ``(time_created, id)`` order and parts in id order, as opencode's own index
orders them. The file is opened read-only; a store holds many sessions: each is one conversation, in the order of
their last update (the one updated last is read by default, ``--conversation N`` another).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ..errors import FormatError

__all__ = ["SQLITE_MAGIC", "db_sessions", "is_opencode_db"]

#: The first 16 bytes of every SQLite 3 database file.
SQLITE_MAGIC = b"SQLite format 3\x00"


def _connect(path: Path) -> sqlite3.Connection:
    try:
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise FormatError(f"{path}: cannot open the SQLite file ({e})", path=str(path)) from None


def is_opencode_db(path: Path) -> bool:
    """Whether the SQLite file at ``path`` has opencode's ``session``, ``message`` and ``part`` tables.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "x.db"
    >>> con = sqlite3.connect(p); _ = con.execute("create table t (a)"); con.close()
    >>> is_opencode_db(p)
    False
    """
    con = _connect(path)
    try:
        names = {r[0] for r in con.execute("select name from sqlite_master where type = 'table'")}
    except sqlite3.Error:
        return False
    finally:
        con.close()
    return {"session", "message", "part"} <= names


def _json(text: Any, where: str, path: Path) -> dict:
    try:
        doc = json.loads(text)
    except (TypeError, ValueError) as e:
        raise FormatError(f"{path}: {where} holds no JSON ({e})", path=str(path)) from None
    if not isinstance(doc, dict):
        raise FormatError(f"{path}: {where} is no JSON object", path=str(path))
    return doc


def db_sessions(path: Path) -> list[tuple[str, dict]]:
    """Every session of the store as ``(label, export document)``, in the order of their last update; the label
    names its id, title and last update.

    Raises
    ------
    FormatError
        A file SQLite cannot read, or a row whose ``data`` is no JSON object.
    """
    con = _connect(path)
    try:
        sessions = con.execute("select id, title, directory, version, time_created, time_updated from session "
                               "order by time_updated, id").fetchall()
        out = []
        for sid, title, directory, version, created, updated in sessions:
            msgs = []
            for mid, data in con.execute("select id, data from message where session_id = ? "
                                         "order by time_created, id", (sid,)):
                info = {"id": mid, "sessionID": sid, **_json(data, f"message {mid}", path)}
                parts = [{"id": pid, "sessionID": sid, "messageID": mid, **_json(pd, f"part {pid}", path)}
                         for pid, pd in con.execute("select id, data from part where message_id = ? order by id",
                                                    (mid,))]
                msgs.append({"info": info, "parts": parts})
            doc = {"info": {"id": sid, "title": title, "directory": directory, "version": version,
                            "time": {"created": created, "updated": updated}}, "messages": msgs}
            out.append((f"session {sid} ({title!r}, updated {updated})", doc))
    except sqlite3.Error as e:
        raise FormatError(f"{path}: not an opencode store SQLite can read ({e})", path=str(path)) from None
    finally:
        con.close()
    return out
