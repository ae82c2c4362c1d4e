"""Which code a bench measured: the commit, and whether the files measured differ from it.

Every table a bench writes into bench/RESULTS.md names the commit it measured. A commit hash alone can mislead: a
checkout whose files were left behind when its branch moved (a second worktree of a branch committed elsewhere, say)
reports the new commit while it runs the old files. :func:`commit_label` says so in the label.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WRITTEN = ("bench/RESULTS.md",)
"""Files the benches themselves write: a change to them does not make the measured code differ."""


def commit_label(root: Path = ROOT) -> str:
    """The short commit of ``root``, with ``+ uncommitted changes (N files)`` where tracked files differ from it.

    Returns ``?`` outside a git checkout.

    Examples
    --------
    >>> label = commit_label()
    >>> label == "?" or len(label.split()[0]) >= 7
    True
    """
    def git(*args: str) -> str:
        r = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
        return r.stdout if r.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD").strip()
    if not commit:
        return "?"
    changed = [ln[3:] for ln in git("status", "--porcelain", "--untracked-files=no").splitlines()
               if ln[3:] not in WRITTEN]
    return f"{commit} + uncommitted changes ({len(changed)} files)" if changed else commit
