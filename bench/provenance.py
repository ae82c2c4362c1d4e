"""Which code a bench measured (the commit, and whether the files measured differ from it), and where its table
goes (:func:`write_section`, the one writer of bench/RESULTS.md's sections).

Every table a bench writes into bench/RESULTS.md names the commit it measured. A commit hash alone can mislead: a
checkout whose files were left behind when its branch moved (a second worktree of a branch committed elsewhere, say)
reports the new commit while it runs the old files. :func:`commit_label` says so in the label.
"""

from __future__ import annotations

import re
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


RESULTS = ROOT / "bench" / "RESULTS.md"


def write_section(key: str, text: str, *, before: str | None = None, path: Path = RESULTS) -> None:
    r"""Put ``text`` into ``path`` between ``<!-- key:start -->`` and ``<!-- key:end -->``, replacing what was there;
    where the markers are absent, the block goes before the first line holding ``before`` (if given and found),
    else at the end.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "R.md"
    >>> _ = p.write_text("# Results\n\n## Next\n", encoding="utf-8")
    >>> write_section("a", "one\n", before="## Next", path=p); write_section("a", "two", path=p)
    >>> print(p.read_text(encoding="utf-8"))
    # Results
    <BLANKLINE>
    <!-- a:start -->
    two
    <!-- a:end -->
    <BLANKLINE>
    ## Next
    <BLANKLINE>
    """
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    start, end = f"<!-- {key}:start -->", f"<!-- {key}:end -->"
    block = f"{start}\n{text.rstrip(chr(10))}\n{end}"
    new, n = re.subn(re.escape(start) + ".*?" + re.escape(end), lambda _: block, old, count=1, flags=re.DOTALL)
    if not n:
        at = old.find(before) if before else -1
        new = old[:at] + block + "\n\n" + old[at:] if at >= 0 else old.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(new, encoding="utf-8")
