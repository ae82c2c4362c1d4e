"""Issue 31, item 5: `render` on a full disk leaves files whole or absent.

Pages are written to a temporary folder and moved in place once all are whole: a disk that fills part way (a fake
``write`` raising ENOSPC after a number of bytes, and a real 384 KiB tmpfs where this machine may mount one) leaves
the earlier run's pages and manifest as they were, no torn or empty PNG and no temporary folder.
"""

from __future__ import annotations

import contextlib
import errno
import random
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from snapglyph import Document
from snapglyph.raster.page_folder import render_folder

_RND = random.Random(7)
TEXT = "".join(" ".join(_RND.choice(["alpha", "beta", "gamma", "0x3f2a", "delta", "x=17"]) for _ in range(14)) + "\n"
               for _ in range(3000))  # varied words: pages that do not compress to nothing


def _snapshot(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def _whole(folder: Path) -> None:
    """Every page the manifest lists is a complete PNG, and nothing else is a page or a temporary folder."""
    names = sorted(p.name for p in folder.iterdir())
    assert not [n for n in names if n.startswith(".snapglyph-render-")], names
    if "manifest.json" not in names:
        assert not [n for n in names if n.endswith(".png")], names
        return
    listed = [e["file"] for e in json.loads((folder / "manifest.json").read_text())["pages"]]
    assert sorted(listed) == sorted(n for n in names if n.endswith(".png"))
    for n in listed:
        data = (folder / n).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and data.endswith(b"IEND\xaeB`\x82"), n


class _FullDisk:
    """A file whose ``write`` stores what still fits in ``left`` bytes, then raises ENOSPC (a disk filling up)."""

    def __init__(self, f, left: dict) -> None:
        self._f, self._left = f, left

    def write(self, data):
        room = self._left["bytes"]
        if len(data) > room:
            self._f.write(data[:room])
            self._left["bytes"] = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self._left["bytes"] -= len(data)
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)


@pytest.mark.parametrize("budget", [0, 5_000, 60_000, 10**9])
def test_a_disk_that_fills_part_way_leaves_the_earlier_run_whole(tmp_path, monkeypatch, budget):
    from snapglyph import _files
    out = tmp_path / "pages"
    first, _ = render_folder(out, Document.from_text("the earlier run\n" * 3000), workers=1)
    (out / "notes.txt").write_text("mine")
    before = _snapshot(out)
    left = {"bytes": budget}
    real = _files.atomic_writer

    @contextlib.contextmanager
    def filling(path, **kw):
        with real(path, **kw) as f:
            yield _FullDisk(f, left)

    monkeypatch.setattr(_files, "atomic_writer", filling)
    if budget < 10**9:
        with pytest.raises(OSError) as e:
            render_folder(out, Document.from_text(TEXT), workers=2)
        assert e.value.errno == errno.ENOSPC
        assert _snapshot(out) == before            # the earlier run, byte for byte
    else:
        entries, stale = render_folder(out, Document.from_text(TEXT), workers=2)
        assert len(entries) > len(first) and stale == []
    _whole(out)


def _mount_tmpfs(where: Path, size: str) -> bool:
    if sys.platform != "linux" or not shutil.which("mount"):
        return False
    where.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    return r.returncode == 0


def test_render_on_a_small_tmpfs(tmp_path):
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "384k"):
        pytest.skip("this machine does not let the test mount a tmpfs (not root, or no mount)")
    try:
        out = disk / "pages"
        render_folder(out, Document.from_text("the earlier run\n" * 1500), workers=1)
        before = _snapshot(out)
        cmd = [sys.executable, "-m", "snapglyph.cli", "render", "-", "--out", str(out)]
        r = subprocess.run(cmd, input=TEXT * 4, capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
        assert r.returncode != 0 and "No space left on device" in r.stderr and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert _snapshot(out) == before
        _whole(out)
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)
