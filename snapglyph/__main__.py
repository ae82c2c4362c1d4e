"""``python -m snapglyph`` and the ``snapglyph`` console script: the command line, then a fast exit."""

from __future__ import annotations

from ._exit import exit_fast
from .cli import main

__all__ = ["run"]


def run() -> None:
    """Run :func:`snapglyph.cli.main` and end the process with its status (:func:`snapglyph._exit.exit_fast`).

    Raises
    ------
    SystemExit
        Where the interpreter's own exit is taken (see :func:`snapglyph._exit.exit_fast`).

    Examples
    --------
    >>> import subprocess, sys
    >>> subprocess.run([sys.executable, "-m", "snapglyph", "fonts"], capture_output=True).returncode
    0
    """
    exit_fast(main())


if __name__ == "__main__":  # pragma: no cover
    run()
