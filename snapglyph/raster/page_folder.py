"""A folder of rendered pages: ``page-NNNN.png`` files listed by ``manifest.json`` (what ``snapglyph render`` writes).

A second render into the same folder replaces the pages; pages of the earlier run that the new one did not write
are removed, so the folder never holds a page its manifest does not list. Only files the earlier manifest names
are touched; anything else in the folder stays.

Files are whole or absent: the pages and the manifest are first written into a temporary folder inside the output
folder (``.snapglyph-render-PID-*``, same file system; each file through :func:`snapglyph._files.write_atomic`, the
pages without an fsync each, since no reader looks into that folder: 1,386 fsyncs were 0.37 s of a 10 M character
render, measured 2026-12-08), and moved in place only once every page is written: the earlier manifest goes first, then the pages, the earlier run's
stale pages, and the new manifest last. A render that fails while writing (a full disk, a drawing error) removes
its temporary folder and leaves the earlier run as it was; one that fails while moving leaves neither pages nor
manifest. A temporary folder a killed run left behind is removed by the next render.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterable

from .. import _files
from .._files import write_atomic

__all__ = ["PAGE_NAME", "clear_stale_pages", "page_name", "render_folder", "write_pages"]

PAGE_NAME = re.compile(r"page-\d{4,}\.png")
"""The file names of pages (``page-0001.png``); a manifest entry of another shape is never deleted."""


def page_name(index: int) -> str:
    """Return the file name of page ``index`` (0-based).

    Examples
    --------
    >>> page_name(0), page_name(11)
    ('page-0001.png', 'page-0012.png')
    """
    return f"page-{index + 1:04d}.png"


def clear_stale_pages(folder: str | Path, written: Iterable[str], *, dry_run: bool = False) -> list[str]:
    """Remove the pages an earlier run's ``manifest.json`` lists that this run did not write.

    Call it after writing the new pages and before writing the new manifest (the earlier one is read here);
    ``dry_run``: only name them.

    Parameters
    ----------
    folder : str or path
        The output folder.
    written : iterable of str
        File names of the pages this run wrote.

    Returns
    -------
    list of str
        The file names removed, sorted. Empty when there is no earlier manifest (or it is not readable JSON:
        then nothing is removed, since nothing says which files were pages).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for n in ("page-0001.png", "page-0002.png", "notes.txt"):
    ...     _ = (d / n).write_bytes(b"x")
    >>> _ = (d / "manifest.json").write_text(json.dumps({"pages": [{"file": "page-0001.png"},
    ...                                                           {"file": "page-0002.png"}]}))
    >>> clear_stale_pages(d, ["page-0001.png"])
    ['page-0002.png']
    >>> sorted(p.name for p in d.iterdir())
    ['manifest.json', 'notes.txt', 'page-0001.png']
    """
    folder = Path(folder)
    try:
        earlier = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        names = {p["file"] for p in earlier["pages"] if isinstance(p, dict) and isinstance(p.get("file"), str)}
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return []
    keep = set(written)
    removed = []
    for name in sorted(names - keep):
        if PAGE_NAME.fullmatch(name) and (folder / name).is_file():
            if not dry_run:
                (folder / name).unlink()
            removed.append(name)
    return removed


def write_pages(folder: str | Path, pages: Iterable, profile_name: str,
                workers: int | None = 1, buffers=None) -> tuple[list[dict], list[str]]:
    """Write each page as ``folder/page-NNNN.png`` and its entry of ``manifest.json`` as it comes, then clear stale
    pages. The manifest is ``{"profile": ..., "pages": [...]}``, one entry a line.

    Parameters
    ----------
    folder : str or path
        The output folder (made when missing).
    pages : iterable of Page
        Encoded pages in order (``page.png`` bytes, ``width``, ``height`` in pixels, ``chars``, ``first_id``,
        ``last_id``); consumed one at a time, so a page generator keeps memory flat.
    profile_name : str
        The profile named in the manifest.
    workers : int or None
        Threads that encode the pages not encoded yet and write the files
        (:func:`snapglyph.raster.pool.encode_ahead`; None: one per core). Files and manifest are the same for any
        count.
    buffers : PageBuffers or None
        The :class:`snapglyph.raster.pool.PageBuffers` the pages were drawn with
        (``iter_pages(..., buffers=buffers)``): each page's buffer is given back once its file is written, so the
        pages must not be read by anyone else.

    Returns
    -------
    (list of dict, list of str)
        The manifest's page entries, and the names of the earlier run's pages removed (:func:`clear_stale_pages`).

    Raises
    ------
    OSError, SnapglyphError
        What writing or drawing raised (a full disk, say). The pages are written into a temporary folder first:
        a failure there leaves the folder as the earlier run left it (that folder removed); a failure while
        moving them in leaves neither pages nor manifest (other files stay), so no manifest ever lists a page of
        another run and no page is torn.

    Examples
    --------
    >>> import tempfile
    >>> from snapglyph import render
    >>> folder = tempfile.mkdtemp()
    >>> entries, stale = write_pages(folder, render("hello"), "claude")
    >>> [e["file"] for e in entries], stale, sorted(p.name for p in Path(folder).iterdir())
    (['page-0001.png'], [], ['manifest.json', 'page-0001.png'])
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    from .pool import PROGRESS, encode_ahead

    tick = PROGRESS.get()  # a progress bar's update (the command line's on a terminal), one call a page
    _remove_orphans(out)
    tmp = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{os.getpid()}-", dir=out))

    def write(page) -> None:  # no fsync: the folder is seen by no one until every file in it is whole
        write_atomic(tmp / page_name(page.index), page.png, fsync=False)
        if buffers is not None:
            buffers.give(page.pixels)

    entries: list[dict] = []
    encoded = encode_ahead(pages, workers, then=write)
    try:
        with _files.atomic_writer(tmp / "manifest.json", text=True) as man:  # written as the pages come
            man.write(f'{{"profile": {json.dumps(profile_name)}, "pages": [')
            for page in encoded:
                entry = {"file": page_name(page.index), "width": page.width, "height": page.height,
                         "chars": page.chars, "first_id": page.first_id, "last_id": page.last_id}
                man.write(("\n" if not entries else ",\n") + _ENTRY(entry))
                entries.append(entry)
                if tick is not None:
                    tick(1)
            man.write("\n]}\n")
    except BaseException:
        encoded.close()  # its threads have finished: no page is written after this
        shutil.rmtree(tmp, ignore_errors=True)  # the earlier run stays as it was
        raise
    return entries, _move_in(out, tmp, [e["file"] for e in entries])


_TMP_PREFIX = ".snapglyph-render-"
_ENTRY = json.JSONEncoder(ensure_ascii=True, check_circular=False).encode
"""One manifest entry as compact JSON, written as its page comes: 2.7 us an entry, where the whole manifest through
the indenting encoder at the end took 7.6 us an entry, all of them after the last page (29,307 entries, measured 2026-12-08)."""


def _remove_orphans(folder: Path) -> None:
    """Remove the temporary folders of renders into ``folder`` whose process is gone (killed part way)."""
    for d in folder.glob(f"{_TMP_PREFIX}*"):
        pid = d.name[len(_TMP_PREFIX):].split("-")[0]
        if d.is_dir() and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(d, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, or a system without signals: leave its folder alone
        return True
    return True


def _move_in(out: Path, tmp: Path, names: list[str]) -> list[str]:
    """Move the pages and the manifest written in ``tmp`` into ``out`` (the manifest last) and remove the earlier
    run's stale pages; returns those. On a failure, neither pages nor manifest are left."""
    stale = clear_stale_pages(out, names, dry_run=True)
    try:
        (out / "manifest.json").unlink(missing_ok=True)  # no manifest ever lists a page of another run
        for name in names:
            os.replace(tmp / name, out / name)
        for name in stale:
            (out / name).unlink(missing_ok=True)
        os.replace(tmp / "manifest.json", out / "manifest.json")
    except BaseException:
        _remove_partial(out, names + stale)  # those moved and the earlier run's of the same names
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return stale


def render_folder(folder: str | Path, document, profile="claude", *, mode: str = "auto", cell=None,
                  family: str | None = None, workers: int | None = None) -> tuple[list[dict], list[str]]:
    """Render ``document`` into ``folder`` page by page (:func:`snapglyph.raster.render.iter_pages`, then
    :func:`write_pages`): what ``snapglyph render`` does.

    With more than one worker, each page's pixel buffer goes back to a :class:`snapglyph.raster.pool.PageBuffers`
    once its file is written and is drawn over for a later page; with one, every page is drawn into one buffer.

    Parameters
    ----------
    folder : str or path
    document : Document
    profile : str or Profile
    mode, cell, family
        As :func:`snapglyph.raster.render.iter_pages`.
    workers : int or None
        As :func:`write_pages` (None: one per core).

    Returns
    -------
    (list of dict, list of str)
        As :func:`write_pages`.

    Raises
    ------
    InputError, FontError, OSError
        As :func:`snapglyph.raster.render.iter_pages` and :func:`write_pages`.

    Examples
    --------
    >>> import tempfile
    >>> from snapglyph import Document
    >>> entries, stale = render_folder(tempfile.mkdtemp(), Document.from_text("hello"), workers=2)
    >>> [(e["file"], e["chars"]) for e in entries], stale
    ([('page-0001.png', 5)], [])
    """
    from ..providers.profiles import profile as get_profile
    from .pool import PageBuffers, resolve_workers
    from .render import iter_pages

    prof = get_profile(profile)
    n = resolve_workers(workers)
    buffers = PageBuffers() if n > 1 else None
    drawn = iter_pages(document, profile=prof, mode=mode, cell=cell, family=family, reuse_buffer=n == 1,
                       buffers=buffers)
    return write_pages(folder, drawn, prof.name, n, buffers)


def _remove_partial(folder: Path, written: list[str]) -> None:
    """After a failed run: remove the pages it wrote, the earlier run's pages and manifest (best effort)."""
    try:
        for name in written:
            (folder / name).unlink(missing_ok=True)
        clear_stale_pages(folder, [])
        (folder / "manifest.json").unlink(missing_ok=True)
    except OSError:  # the error being raised says more than this one
        pass
