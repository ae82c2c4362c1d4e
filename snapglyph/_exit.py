"""How the ``snapglyph`` command ends its process: flush, then exit without the interpreter's teardown.

Once numba has loaded the kernels, a normal interpreter exit spends a few tenths of a second unloading them
(bench/RESULTS.md, "Speed and memory"). The command has closed every file it wrote and stopped its threads and worker
processes by then, so :func:`exit_fast` flushes standard output and standard error and ends the process at once. It is for the console entry point only:
called in a test or a library, it would end the caller's process.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

__all__ = ["exit_fast"]


def exit_fast(status: int) -> NoReturn:
    """End the process with ``status`` after flushing standard output and standard error.

    Where numba's kernels are not loaded (a command that never rendered), or a child process is still alive,
    this is ``sys.exit(status)``: the interpreter's own exit, with its cleanup. Otherwise it skips the teardown
    (:func:`os._exit`), which is where the time goes (see the module).

    Parameters
    ----------
    status : int
        The exit status (0 ok, 1 interrupted, 2 an expected error).

    Raises
    ------
    SystemExit
        On the ``sys.exit`` path (never returns on the other).

    Examples
    --------
    >>> import subprocess, sys
    >>> code = "from snapglyph._exit import exit_fast; print('done'); exit_fast(3)"
    >>> r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    >>> r.returncode, r.stdout
    (3, 'done\\n')
    """
    if "snapglyph.raster._kernels" not in sys.modules or _children_alive():
        sys.exit(status)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said on it
            if stream is sys.stdout and status == 0:
                status = 1
    os._exit(status)


def _children_alive() -> bool:
    """Whether this process started a child process that is still running (``multiprocessing``, Dask)."""
    mp = sys.modules.get("multiprocessing")
    return bool(mp is not None and mp.active_children())
