"""Text-versus-image cost of many transcripts at once, in parallel on Dask (``snapglyph cost`` over a corpus).

Each transcript is one task: read it (:func:`snapglyph.readers.registry.load`), draw every message as pages
(:func:`snapglyph.raster.render.iter_pages`; no PNG is encoded: a page's image cost depends on its size only) and
count the same messages as text, per profile. The tasks run on a ``dask.distributed`` cluster: by default a
:class:`distributed.LocalCluster` of worker processes started here (one thread each, no set-up), or an existing
cluster given by its scheduler address. Each worker process loads the kernels, the glyph atlas and the tokenizers
once (a warm-up run on every worker before the first task; they stay cached in the process).

One row per transcript; a transcript that cannot be read or priced is a row with its error, never a crashed run.
"""

from __future__ import annotations

import csv
import glob as _glob
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .errors import InputError, SnapglyphError

__all__ = ["CorpusResult", "check_rows_path", "corpus_cost", "corpus_paths", "price_transcript", "write_rows"]

_GLOB_CHARS = set("*?[")


def corpus_paths(specs: Sequence[str]) -> list[Path]:
    """Expand folders, globs and path lists into the transcript files they name, sorted, without duplicates.

    Parameters
    ----------
    specs : sequence of str
        Each one a folder (every file below it, hidden files and ``LICENSE``/``SOURCE``/``README`` files left
        out), a glob (``data/**/*.jsonl``; ``**`` reaches into subfolders), ``@FILE`` (a file listing one path a
        line; blank lines and ``#`` comments skipped; relative paths are relative to that file's folder; a listed
        file that does not exist is kept, so that its row carries the error), or a file.

    Returns
    -------
    list of pathlib.Path

    Raises
    ------
    InputError
        If a spec names no file (an empty folder, a glob with no match) or a path list cannot be read. A file that
        does not exist is kept, named on the command line or in a list: its row carries the error.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("b.jsonl", "a.json", "LICENSE"):
    ...     _ = (d / name).write_text("{}")
    >>> [p.name for p in corpus_paths([str(d)])]
    ['a.json', 'b.jsonl']
    """
    out: dict[Path, None] = {}
    for spec in specs:
        if spec.startswith("@"):
            listing = Path(spec[1:])
            try:
                lines = listing.read_text(encoding="utf-8").splitlines()
            except OSError as e:
                raise InputError(f"{listing}: cannot read the path list ({e.strerror or e})") from None
            except UnicodeDecodeError:
                raise InputError(f"{listing}: not a path list (a UTF-8 text file of one path a line)") from None
            names = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
            for n in names:
                f = Path(n) if os.path.isabs(n) else listing.parent / n
                # a listed file that is missing stays in: its row carries the error, the run goes on
                found_n = corpus_paths([str(f)]) if f.exists() or _GLOB_CHARS & set(n) else [f]
                for q in found_n:
                    out.setdefault(q, None)
            continue
        p = Path(spec)
        if p.is_dir():
            found = [f for f in sorted(p.rglob("*")) if f.is_file() and not _skipped(f.relative_to(p))]
        elif _GLOB_CHARS & set(spec):
            found = [Path(f) for f in sorted(_glob.glob(spec, recursive=True)) if Path(f).is_file()]
        elif p.is_file() or not p.exists():
            found = [p]  # a missing file stays in, as in a path list: its row carries the error, the run goes on
        else:
            raise InputError(f"{spec}: not a file or a folder")
        if not found:
            raise InputError(f"{spec}: no transcript files there")
        for f in found:
            out.setdefault(f, None)
    return sorted(out)


def _skipped(rel: Path) -> bool:
    return any(part.startswith(".") for part in rel.parts) or rel.name.startswith(("LICENSE", "SOURCE", "README"))


def price_transcript(path: str, profiles: Sequence[str] = ("claude",), mode: str = "auto") -> dict:
    """Price one transcript: a row of the corpus table (never raises: a failure is the row's ``error``).

    Parameters
    ----------
    path : str
        A transcript file (any format :func:`snapglyph.readers.registry.load` reads; plain text counts as one
        message's worth of text).
    profiles : sequence of str
        Profile names.
    mode : str
        Layout mode: ``auto`` (default), ``dense`` or ``lines``.

    Returns
    -------
    dict
        ``path, format, messages, chars, seconds, error`` and, per profile ``P``, ``text_tokens_P``,
        ``image_tokens_P``, ``pages_P`` and ``ratio_P`` (text tokens over image tokens). ``chars`` counts the
        characters drawn on the first profile's pages; on error the numbers are 0 and ``error`` is one line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
    >>> _ = p.write_text("hello world\\n" * 100)
    >>> row = price_transcript(str(p), ["claude"])
    >>> row["format"], row["chars"], row["pages_claude"], row["error"]
    ('text', 1200, 1, '')
    """
    t0 = time.perf_counter()
    row: dict[str, Any] = {"path": str(path), "format": "", "messages": 0, "chars": 0}
    for name in profiles:
        row.update({f"text_tokens_{name}": 0, f"image_tokens_{name}": 0, f"pages_{name}": 0, f"ratio_{name}": 0.0})
    try:
        _price(path, profiles, mode, row)
        row["error"] = ""
    except SnapglyphError as e:
        row["error"] = f"{type(e).__name__}: {e}"
    except Exception as e:  # a corpus run reports every failure as a row, whatever raised it
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
    row["seconds"] = round(time.perf_counter() - t0, 4)
    return row


def _price(path: str, profiles: Sequence[str], mode: str, row: dict) -> None:
    from .compaction.estimate import TokenCosts
    from .model.document import Document, document_for
    from .providers.dialects import normalize
    from .providers.profiles import profile as get_profile
    from .raster.render import iter_pages
    from .readers.registry import load

    t = load(path)
    row["format"] = t.format
    text = t.meta.get("text", "") if t.format == "text" else None
    row["messages"] = len(t.messages)
    for k, name in enumerate(profiles):
        prof = get_profile(name)
        costs = TokenCosts(prof)
        if text is not None:
            doc, tokens = Document.from_text(text), costs.text(text)
        else:
            norm, _ = normalize(t.messages, dialect=prof.dialect)
            doc = document_for(t.messages, mode)
            tokens = sum(costs.message(m) for m in norm)
        img = pages = chars = 0
        for page in iter_pages(doc, profile=prof, mode=mode, reuse_buffer=True):
            img += prof.image_tokens(page.width, page.height)
            pages += 1
            chars += page.chars
        if k == 0:
            row["chars"] = chars
        row[f"text_tokens_{name}"] = tokens
        row[f"image_tokens_{name}"] = img
        row[f"pages_{name}"] = pages
        row[f"ratio_{name}"] = round(tokens / img, 3) if img else 0.0


def _warm(profiles: Sequence[str], mode: str) -> bool:
    """Load kernels, atlas and tokenizers in this worker process (run once per worker before any task)."""
    from .compaction.estimate import TokenCosts
    from .model.document import Document
    from .providers.profiles import profile as get_profile
    from .raster.render import iter_pages
    from .raster.warm import warm

    warm()
    for name in profiles:
        prof = get_profile(name)
        TokenCosts(prof).text("warm up the tokenizer")
        for _ in iter_pages(Document.from_text("warm up x" * 3000), profile=prof, mode=mode):
            pass
    return True


@dataclass
class CorpusResult:
    """Rows of a corpus run and what it took.

    Attributes
    ----------
    rows : list of dict
        One per transcript, in the order of the paths (see :func:`price_transcript`).
    profiles : list of str
    seconds : float
        Wall-clock seconds of the whole run, cluster start-up included.
    workers : int
        Dask workers that ran the tasks.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
    >>> _ = p.write_text("hello world\\n" * 100)
    >>> print(CorpusResult([price_transcript(str(p))], ["claude"], seconds=0.5, workers=1).summary())
    1 transcript (0 failed), 1,200 characters, 1 worker, 0.5 s (0.00 M chars/s)
    claude: text 390 tokens, images 117 tokens, text/image 3.33
    """

    rows: list
    profiles: list
    seconds: float
    workers: int

    def summary(self) -> str:
        """A few lines: transcripts, failures, characters, tokens and ratio per profile, throughput."""
        ok = [r for r in self.rows if not r["error"]]
        chars = sum(r["chars"] for r in ok)
        n, w = len(self.rows), self.workers
        rate = chars / self.seconds / 1e6 if self.seconds else 0
        lines = [f"{n} transcript{'s' * (n != 1)} ({n - len(ok)} failed), {chars:,} characters, "
                 f"{w} worker{'s' * (w != 1)}, {self.seconds:.1f} s ({rate:.2f} M chars/s)"]
        for name in self.profiles:
            text = sum(r[f"text_tokens_{name}"] for r in ok)
            img = sum(r[f"image_tokens_{name}"] for r in ok)
            lines.append(f"{name}: text {text:,} tokens, images {img:,} tokens"
                         + (f", text/image {text / img:.2f}" if img else ""))
        for r in self.rows:
            if r["error"]:
                lines.append(f"failed: {r['path']}: {r['error']}")
        return "\n".join(lines)


def corpus_cost(paths: Sequence, *, profiles: Sequence[str] = ("claude",), mode: str = "auto",
                workers: int | None = None, scheduler: str | None = None) -> CorpusResult:
    """Price every transcript of ``paths`` on a Dask cluster.

    Parameters
    ----------
    paths : sequence of str or path-like
        Transcript files (see :func:`corpus_paths` to expand folders, globs and lists).
    profiles : sequence of str
        Profile names (checked before the cluster starts).
    mode : str
        Layout mode.
    workers : int or None
        Worker processes of the local cluster (None: the number of cores). Ignored with ``scheduler``.
    scheduler : str or None
        Address of an existing Dask scheduler (``tcp://host:8786``); None starts a local cluster here.

    Returns
    -------
    CorpusResult

    Raises
    ------
    InputError
        If dask.distributed is not installed (``pip install -e '.[corpus]'`` in the repository), a profile is
        unknown, or the scheduler cannot be reached.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from distributed import LocalCluster
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"
    >>> _ = p.write_text("hello world\\n" * 100)
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:  # in this process
    ...     res = corpus_cost([p], scheduler=cluster.scheduler_address)
    >>> res.workers, [(r["format"], r["chars"], r["text_tokens_claude"], r["image_tokens_claude"]) for r in res.rows]
    (1, [('text', 1200, 390, 117)])
    """
    from .providers.profiles import profile as get_profile
    from .raster.pool import resolve_workers

    for name in profiles:
        get_profile(name)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        from ._extras import extra_hint
        raise InputError(f"a corpus needs {extra_hint('corpus', 'distributed')}") from None
    t0 = time.perf_counter()
    paths = [str(p) for p in paths]
    cluster = None
    try:
        if scheduler:
            client = Client(scheduler, timeout="20s")
        else:
            cluster = LocalCluster(n_workers=resolve_workers(workers), threads_per_worker=1, processes=True,
                                   dashboard_address=None, host="127.0.0.1")
            client = Client(cluster)
    except (OSError, ValueError, TypeError) as e:   # ValueError: an address without a port ("garbage")
        raise InputError(f"cannot reach the Dask scheduler {scheduler or '(local)'}: {e}") from None
    try:
        client.run(_warm, list(profiles), mode)
        n = len(client.scheduler_info()["workers"])
        futures = client.map(price_transcript, paths, profiles=list(profiles), mode=mode, pure=False)
        rows = []
        for path, fut in zip(paths, futures):
            try:
                rows.append(fut.result())
            except Exception as e:  # a worker that died: the row says so
                rows.append(_failed_row(path, profiles, e))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return CorpusResult(rows, list(profiles), time.perf_counter() - t0, n)


def _failed_row(path: str, profiles: Sequence[str], exc: BaseException) -> dict:
    row: dict[str, Any] = {"path": path, "format": "", "messages": 0, "chars": 0}
    for name in profiles:
        row.update({f"text_tokens_{name}": 0, f"image_tokens_{name}": 0, f"pages_{name}": 0, f"ratio_{name}": 0.0})
    row["error"] = f"{type(exc).__name__}: {exc}"[:300]
    row["seconds"] = 0.0
    return row


ROW_FORMATS = (".csv", ".parquet")
"""The file endings :func:`write_rows` writes (besides ``-``, CSV on standard output)."""


def check_rows_path(path: str | os.PathLike) -> Path | None:
    """Make sure :func:`write_rows` can write ``path`` before a long run: a known ending, pyarrow for Parquet, and
    its folder (made when missing, like ``compact --out``).

    Returns
    -------
    pathlib.Path or None
        The path; None for ``-`` (standard output).

    Raises
    ------
    InputError
        For another ending than :data:`ROW_FORMATS`, Parquet without pyarrow, or a folder that cannot be made.

    Examples
    --------
    >>> check_rows_path("-") is None, check_rows_path("rows.csv").name
    (True, 'rows.csv')
    >>> check_rows_path("rows.xlsx")
    Traceback (most recent call last):
    ...
    snapglyph.errors.InputError: rows.xlsx: rows are written as .csv or .parquet (or - for standard output)
    """
    if str(path) == "-":
        return None
    p = Path(path)
    if p.suffix.lower() not in ROW_FORMATS:
        raise InputError(f"{path}: rows are written as .csv or .parquet (or - for standard output)")
    if p.suffix.lower() == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            from ._extras import extra_hint
            raise InputError(f"Parquet output needs {extra_hint('parquet', 'pyarrow')}") from None
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{p.parent}: cannot make the output folder ({e.strerror or e})") from None
    return p


def write_rows(rows: Sequence[dict], path: str | os.PathLike) -> None:
    """Write the rows as CSV (``-``: standard output), or as Parquet where ``path`` ends in ``.parquet``.

    Raises
    ------
    InputError
        For an ending other than :data:`ROW_FORMATS` or Parquet without pyarrow (:func:`check_rows_path`).

    Examples
    --------
    >>> write_rows([{"path": "a.jsonl", "pages_claude": 3}, {"path": "b.jsonl", "pages_claude": 1}], "-")
    path,pages_claude
    a.jsonl,3
    b.jsonl,1
    """
    if not rows:
        raise InputError("no rows to write")
    p = check_rows_path(path)
    cols = list(rows[0])
    if p is None:
        _csv(rows, cols, sys.stdout)
        return
    if p.suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({c: [r[c] for r in rows] for c in cols}), p)
        return
    with open(p, "w", newline="", encoding="utf-8") as f:
        _csv(rows, cols, f)


def _csv(rows: Sequence[dict], cols: list, f) -> None:
    w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
