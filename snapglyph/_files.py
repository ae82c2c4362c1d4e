"""Writing a file whole or not at all: the one atomic-write rule of the library and every door.

A file is written into a temporary file in the same folder (so the rename never crosses a file system), flushed and
fsynced, then renamed over the target with ``os.replace`` (atomic on POSIX and Windows); the folder is fsynced after
the rename where the system allows it, so the new name survives a power loss. A failure at any step removes the
temporary file and leaves the earlier file, if any, as it was. Source: POSIX ``rename(2)`` and ``fsync(2)``, and
Python's ``os.replace`` documentation (https://docs.python.org/3/library/os.html#os.replace, read 2026-12-04).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import IO, Iterator

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows: a lock file (the filelock library) instead
    fcntl = None  # type: ignore[assignment]

__all__ = ["atomic_writer", "folder_lock", "same_file", "write_atomic"]


def _fsync_dir(folder: Path) -> None:
    """fsync a folder so a rename in it is durable; a system that cannot open folders (Windows) skips it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_writer(path: "str | os.PathLike", *, text: bool = False, fsync: bool = True) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; on a clean exit it replaces ``path``, on an exception it
    is removed and ``path`` is untouched.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write; its folder is created when absent.
    text : bool
        Yield a UTF-8 text file (newlines written as ``\\n``) instead of a binary one.
    fsync : bool
        Flush the data and the folder to disk before returning (default); ``False`` for files whose loss on a power
        cut costs nothing but a recomputation.

    Raises
    ------
    OSError
        If the folder cannot be created or the file cannot be written or renamed (callers turn it into their own
        error of :mod:`snapglyph.errors`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "sub" / "a.txt"
    >>> with atomic_writer(p, text=True) as f:
    ...     _ = f.write("one\\n")
    >>> p.read_text()
    'one\\n'
    >>> try:
    ...     with atomic_writer(p, text=True) as f:
    ...         _ = f.write("half")
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     pass
    >>> p.read_text(), sorted(x.name for x in p.parent.iterdir())      # the earlier file, no temporary left
    ('one\\n', ['a.txt'])
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with (os.fdopen(fd, "w", encoding="utf-8", newline="\n") if text else os.fdopen(fd, "wb")) as f:
            yield f
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        _fsync_dir(target.parent)


def write_atomic(path: "str | os.PathLike", data: "bytes | str", *, fsync: bool = True) -> Path:
    """Write ``data`` (bytes, or text written as UTF-8) to ``path`` whole or not at all; returns the path.

    Raises
    ------
    OSError
        As :func:`atomic_writer`.
    TypeError
        If ``data`` is neither ``bytes`` nor ``str``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = write_atomic(pathlib.Path(tempfile.mkdtemp()) / "r.json", b'{"a": 1}\\n')
    >>> p.read_bytes()
    b'{"a": 1}\\n'
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"write_atomic takes bytes or str, not {type(data).__name__}")
    with atomic_writer(path, fsync=fsync) as f:
        f.write(data)
    return Path(path)


@contextlib.contextmanager
def folder_lock(path: "str | os.PathLike", *, timeout: float = 60.0) -> Iterator[None]:
    """Hold an exclusive lock tied to the file ``path`` for a read-merge-write (two processes saving one file).

    On POSIX the lock is ``flock(2)`` on the file's folder (opened read-only; no file is left beside ``path``, and
    the lock goes with the process if it dies). Where ``fcntl`` is missing (Windows) it is the ``filelock``
    library's lock file ``PATH.lock``. Sources: POSIX ``flock(2)`` (the Linux man page, read 2026-12-07) and
    https://py-filelock.readthedocs.io (read 2026-12-07).

    Raises
    ------
    TimeoutError
        If another process holds the lock longer than ``timeout`` seconds.
    OSError
        If the folder cannot be created or opened.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "store.jsonl"
    >>> with folder_lock(p):
    ...     _ = write_atomic(p, "x")
    >>> sorted(x.name for x in p.parent.iterdir())
    ['store.jsonl']
    """
    folder = Path(path).parent
    folder.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover
        from filelock import FileLock, Timeout
        try:
            with FileLock(str(path) + ".lock", timeout=timeout):
                yield
        except Timeout:
            raise TimeoutError(f"another process held the lock of {path} for {timeout:.0f} s") from None
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"another process held the lock of {path} for {timeout:.0f} s") from None
                time.sleep(0.005)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def same_file(a: "str | os.PathLike", b: "str | os.PathLike") -> bool:
    """Whether two paths name one file: the same inode where both exist (a hard link, ``./x`` and ``x``), else the
    same resolved path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); (d / "a").write_text("x"); (d / "b").hardlink_to(d / "a")
    1
    >>> same_file(d / "a", d / "." / "a"), same_file(d / "a", d / "b"), same_file(d / "a", d / "new")
    (True, True, False)
    """
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return a.samefile(b)
    except OSError:
        pass
    return a.resolve() == b.resolve()
