"""Streaming render (issue 13): text files read piece by piece, PNGs encoded on a thread pool, deflate choice.

Every check compares exact bytes or pixels against the whole-text, serial path.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zlib

import numpy as np
import pytest
from PIL import Image

from snapglyph import Document, InputError, load, render
from snapglyph._config import SPLIT
from snapglyph.raster import encode
from snapglyph.raster.encode import png_bytes
from snapglyph.raster.pool import encode_ahead, resolve_workers
from snapglyph.raster.render import iter_pages
from snapglyph.readers.textfile import TextFileDocument, is_plain_text_file

# More than two SPLIT pieces: a line longer than half a SPLIT (no newline to cut at), CRLF, tabs, wide and astral
# characters, an undecodable byte and a BOM: the streamed pieces must cut and decode exactly like the whole text.
_LINE = "row\tcol  Grüße 漢字 \U0001F600 0O1lI\r\n"
_BODY = (_LINE * 9000).encode() + b"\xff\xfe bad bytes\n" + ("x" * (SPLIT // 2 + 5000) + "\n").encode()
RAW = b"\xef\xbb\xbf" + _BODY + (_LINE * 9000).encode() + b"no newline at the end"


def _pngs(pages) -> list[bytes]:
    return [p.png for p in pages]


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("stream") / "big.txt"
    path.write_bytes(RAW)
    return path


def test_streamed_file_pages_are_the_whole_text_pages(text_file):
    t = load(text_file)
    assert t.format == "text" and t.meta["decode_errors"] == 2
    whole = Document.from_text(t.meta["text"])
    doc = TextFileDocument(text_file)
    pieces = [s.text for s in doc.segments]
    assert len(pieces) >= 3 and all(len(p) <= SPLIT for p in pieces)
    assert "".join(pieces) == t.meta["text"] and doc.n_chars == len(t.meta["text"])
    streamed = _pngs(iter_pages(doc))
    assert len(streamed) > 30  # 39 claude pages with SPLIT = 1 << 16
    assert streamed == _pngs(iter_pages(whole))


def test_plain_text_detection(tmp_path):
    cases = {
        "notes.txt": (b"just words\n", True),
        "data.json": (b"plain words\n", False),  # a JSON extension is never streamed as text
        "list.txt": (b"  \n [1, 2]\n", False),
        "history.md": (b"intro\n" * 20000 + b"# aider chat started at 2024-08-05 19:33:02\n#### hi\n", False),
        "blob.txt": (bytes(range(256)) * 64, False),
    }
    for name, (raw, plain) in cases.items():
        (tmp_path / name).write_bytes(raw)
        assert is_plain_text_file(tmp_path / name) is plain, name
    assert is_plain_text_file(tmp_path / "missing.txt") is False
    assert is_plain_text_file(tmp_path) is False


def test_pool_encodes_the_serial_bytes_in_order():
    text = ("def f(x):\n\treturn x  # Grüße 漢字\n" * 3000)
    serial = render(text, workers=1)
    pooled = render(text, workers=3)
    assert [p.index for p in pooled] == list(range(len(serial))) and len(serial) == 7  # as flow (11 in bands)
    assert _pngs(pooled) == _pngs(serial)
    ahead = list(encode_ahead(iter_pages(Document.from_text(text)), workers=2, window=1))
    assert _pngs(ahead) == _pngs(serial)
    assert all("png" in p.__dict__ for p in ahead)


def test_pool_passes_errors_through_and_checks_arguments():
    def pages():
        yield from iter_pages(Document.from_text("abc " * 9000))
        raise InputError("boom")

    with pytest.raises(InputError, match="boom"):
        list(encode_ahead(pages(), workers=2))
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(InputError, match="workers"):
            resolve_workers(bad)
    with pytest.raises(InputError, match="window"):
        list(encode_ahead([], workers=2, window=0))


def test_png_decodes_exactly_with_each_deflate():
    page = render("Grüße 漢字 \x1b[1mbold\x1b[0m 0O1lI\n" * 400, workers=1)[0]
    fast = png_bytes(page.pixels)
    std = png_bytes(page.pixels, level=1)
    assert fast == page.png and fast == png_bytes(page.pixels.copy())
    for png in (fast, std):
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(png)).convert("L")), page.pixels)
    # level=1 is the standard library's zlib: the IDAT payload is exactly zlib's output
    idat = std[33 + 8:-12 - 4]
    assert idat == zlib.compress(zlib.decompress(idat), 1)
    assert encode.DEFLATE in ("isal", "zlib")


def test_cli_render_streams_a_text_file_with_any_workers(tmp_path, text_file):
    outs = []
    for w in ("1", "2"):
        out = tmp_path / f"w{w}"
        r = subprocess.run([sys.executable, "-m", "snapglyph.cli", "render", str(text_file), "--out", str(out),
                            "--workers", w], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        man = json.loads((out / "manifest.json").read_text())
        outs.append([(out / p["file"]).read_bytes() for p in man["pages"]])
    assert outs[0] == outs[1] == _pngs(iter_pages(TextFileDocument(text_file)))
    r = subprocess.run([sys.executable, "-m", "snapglyph.cli", "render", str(text_file), "--workers", "0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--workers: must be 1 or more, not 0" in r.stderr
    r = subprocess.run([sys.executable, "-m", "snapglyph.cli", "render", str(text_file), "--workers", "abc"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--workers: must be a whole number, 1 or more, not 'abc'" in r.stderr


def test_progress_ticks_once_per_kept_page_and_stays_quiet_off_a_terminal(tmp_path):
    from snapglyph.raster.lazy import render_packed
    from snapglyph.raster.pool import PROGRESS

    ticks = []
    token = PROGRESS.set(ticks.append)
    try:
        pages = render_packed("abc " * 9000, workers=2)
    finally:
        PROGRESS.reset(token)
    assert ticks == [1, 1, 1] and len(pages) == 3
    assert render_packed("abc", workers=1) and PROGRESS.get() is None
    req = tmp_path / "req.json"
    pi = __import__("conftest").ROOT / "examples" / "pi-session" / "large-session.jsonl"
    r = subprocess.run([sys.executable, "-m", "snapglyph.cli", "compact", str(pi), "--budget", "30000",
                        "--out", str(req)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()  # no bar (stderr is no terminal): the notes, then the one summary line
    assert "\r" not in r.stderr and lines[-1].startswith("snapglyph: head ")
    assert lines[:-1] == ["snapglyph: note: profile claude and dialect anthropic, from the session: pi format, model "
                          "claude-sonnet-4-5 (" + __import__("snapglyph").providers.profiles.family_reason(
                              "claude-sonnet-4-5") + ")"]


def test_packed_page_text_is_the_drawn_page_text():
    """A page kept as its PNG keeps its characters and line ends, not the layout's arrays, and joins the same text."""
    from snapglyph.raster.pool import PackedPage
    text = ("prose " * 200 + "\n" + "\n".join(f"    line_{i} = {i}  # code" for i in range(300)) + "\n") * 3
    pages = list(iter_pages(Document.from_text(text)))
    assert len(pages) > 1 and any("\u21aa" in p.text or "line_299" in p.text for p in pages)
    for page in pages:
        packed = PackedPage(page)
        assert isinstance(packed.reading[0], str) and packed.text == page.text and packed.text


@pytest.mark.parametrize("fail_in", ["drawing", "writing"])
def test_a_failed_render_leaves_the_earlier_run_whole(tmp_path, monkeypatch, fail_in):
    """A render that fails part way (a full disk, say) removes the temporary folder it wrote its pages to and
    leaves the earlier run's pages and manifest as they were (issue 31: files whole or absent); the user's other
    files stay."""
    from snapglyph.raster import page_folder
    from snapglyph.raster.page_folder import write_pages
    out = tmp_path / "p"
    text = "a line of text for several pages\n" * 6000
    first, _ = write_pages(out, render(text, mode="dense"), "claude", workers=2)
    assert len(first) >= 4
    (out / "notes.txt").write_text("mine")

    def pages():
        for i, p in enumerate(iter_pages(Document.from_text(text + "more\n"), mode="dense")):
            if fail_in == "drawing" and i == 2:
                raise OSError(28, "No space left on device")
            yield p
    if fail_in == "writing":
        real, written = page_folder.write_atomic, []

        def full_disk(path, data, **kw):
            if len(written) == 2:
                raise OSError(28, "No space left on device")
            written.append(path)
            return real(path, data, **kw)
        monkeypatch.setattr(page_folder, "write_atomic", full_disk)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(OSError):
        write_pages(out, pages(), "claude", workers=2)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize("workers", [1, 2])
def test_heap_trimmed_every_trim_pages(monkeypatch, workers):
    """encode_ahead returns freed heap pages to the system after every TRIM_PAGES-th page (glibc's malloc_trim);
    the pages are the same bytes as without."""
    from snapglyph._config import TRIM_PAGES
    from snapglyph.raster import pool

    text = "".join(f"line {i} of a long plain text, with words enough to fill rows\n" for i in range(40_000))
    plain = [p.png for p in encode_ahead(iter_pages(Document.from_text(text)), workers=workers)]
    calls = []
    monkeypatch.setattr(pool, "_trim_heap", lambda: calls.append(1))
    trimmed = [p.png for p in encode_ahead(iter_pages(Document.from_text(text)), workers=workers)]
    assert len(plain) > TRIM_PAGES and trimmed == plain
    assert len(calls) == len(plain) // TRIM_PAGES


_PIECES = [b"# aider chat started at 2024-01-01 10:00:00\n", b"# aider chat started at ", b"\n", b"\r\n", b"x",
           b"\xef\xbb\xbf", b"\xff", b"\xe2\x82", b"\xe2\x82\xac", b"\xf0\x9f\x98", b" ", b"## aider chat started at "]


@pytest.mark.parametrize("scan", [7, 64, 1 << 20])
def test_starts_a_line_matches_the_decoded_search(tmp_path, monkeypatch, scan):
    """The byte scan of is_plain_text_file gives the answer of the aider rule on the decoded text (errors="replace",
    a leading BOM dropped), across read boundaries (reads of 7 and 64 bytes: the prefix split between reads)."""
    import random

    from snapglyph.readers import textfile
    from snapglyph.readers.aider import _STARTED_ANY, SESSION_START

    monkeypatch.setattr(textfile, "_SCAN", scan)
    rng = random.Random(scan)
    found = 0
    for case in range(400):
        raw = b"".join(rng.choice(_PIECES) * rng.choice([1, 1, 1, 40]) for _ in range(rng.randint(0, 30)))
        path = tmp_path / f"c{case}.txt"
        path.write_bytes(raw)
        want = bool(_STARTED_ANY.search(raw.decode("utf-8", errors="replace").removeprefix("\ufeff")))
        assert textfile.starts_a_line(path, SESSION_START.encode()) == want, raw
        found += want
    assert 80 < found < 320  # both answers are well exercised


def test_page_buffers_reused_and_pages_unchanged(tmp_path):
    """Pages drawn into buffers given back (write_pages, render_packed) are byte-identical to pages drawn into
    fresh ones, and a buffer is taken again once its page is written."""
    from snapglyph.raster.page_folder import write_pages
    from snapglyph.raster.lazy import render_packed
    from snapglyph.raster.pool import PageBuffers

    text = "".join(f"row {i}: the quick brown fox jumps over the lazy dog {i * 7919 % 1000}\n" for i in range(9000))
    buffers = PageBuffers()
    taken = []
    real_take = buffers.take
    buffers.take = lambda shape: taken.append(real_take(shape)) or taken[-1]
    doc = Document.from_text(text)
    write_pages(tmp_path / "a", iter_pages(doc, buffers=buffers), "claude", workers=2, buffers=buffers)
    write_pages(tmp_path / "b", iter_pages(doc), "claude", workers=2)
    names = sorted(p.name for p in (tmp_path / "b").iterdir())
    assert len(names) > 7 and names == sorted(p.name for p in (tmp_path / "a").iterdir())
    assert all((tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes() for n in names)
    assert len({id(b) for b in taken}) < len(taken)  # reused, not one new buffer a page
    assert [p.png for p in render_packed(text, workers=2)] == [(tmp_path / "b" / n).read_bytes()
                                                                for n in names if n.endswith(".png")]


@pytest.mark.parametrize("mode", ["auto", "dense", "lines"])
def test_layout_without_drawing_gives_the_drawn_pages_breaks_and_counts(mode):
    """``iter_pages(..., draw=False)`` (the page starts of the compaction planner) lays every page out as the drawn
    render does: same breaks, counts and ids, over a real session with headers, blocks and tool output. Nothing is
    drawn for it: its pages have no text and share one scratch buffer (no white page made for each)."""
    from snapglyph.model.document import document_for
    doc = document_for(load(__import__("conftest").ROOT / "examples" / "pi-session" / "large-session.jsonl").messages,
                       mode)
    fields = ("index", "rows", "chars", "replaced", "zero_width", "removed", "first_id", "last_id", "fill")
    drawn = list(iter_pages(doc, mode=mode))
    laid = list(iter_pages(doc, mode=mode, draw=False))
    assert len(drawn) > 3 and [tuple(getattr(p, f) for f in fields) for p in drawn] == [
        tuple(getattr(p, f) for f in fields) for p in laid]
    assert all(p.text for p in drawn) and not any(p.text for p in laid)
    assert len({id(p.pixels) for p in laid[:-1]}) == 1  # one scratch buffer (the last page is trimmed: a copy)
    some = set(range(1, len(drawn), 2))  # a set: those pages drawn, white where nothing was drawn, the others not
    mixed = list(iter_pages(doc, mode=mode, draw=some))
    for p, q in zip(drawn, mixed):
        assert (p.index in some) == bool(q.text)
        if p.index in some:
            assert q.text == p.text and np.array_equal(q.pixels, p.pixels)


def test_encoded_segment_memo_gives_the_same_streams_and_empties_as_it_is_used():
    """The compaction's memo of encoded segments: a render of the first messages of an earlier one takes their
    segments' arrays from it (equal to encoding afresh, in both engines' normalization), each taken out once used."""
    from snapglyph.model.document import document_for
    from snapglyph.model.messages import Message, Part
    from snapglyph.raster.atlas import atlas
    from snapglyph.raster.stream import chunks
    at = atlas((6, 12))
    code = "".join(f"    x_{i} = f({i})\t# c\n" for i in range(40))
    msgs = [Message(i, "user" if i % 2 else "assistant", [Part("text", text=f"step {i} \u00e9\u0301 \u2705\n" + code
                                                                 + "prose " * 300)]) for i in range(6)]
    for fast in (False, True):
        memo: dict = {}
        part = document_for(msgs[:4], "auto")
        fresh = [(ck.codes.tolist(), ck.srcw.tolist(), ck.zw, ck.rm) for ck in chunks(part, at, fast, 91)]
        list(chunks(document_for(msgs, "auto"), at, fast, 91, memo))
        n = len(memo)
        again = [(ck.codes.tolist(), ck.srcw.tolist(), ck.zw, ck.rm) for ck in chunks(part, at, fast, 91, memo)]
        assert again == fresh and any(-9 < c < -2 for c in again[0][0])  # block codes planned
        assert n > len(memo) > 0  # the four messages' segments taken out, the last two's left


@pytest.mark.parametrize("draw", [None, 0, 1, "01", [1], {"a"}, {1.5}, {True}])
def test_a_bad_draw_is_an_input_error(draw):
    """``draw`` is True, False or a set of page indices; anything else is one InputError before any work (a list,
    a string or None raised a TypeError; a set of other things was taken). Found by a fresh-eyes test."""
    from snapglyph.errors import InputError
    with pytest.raises(InputError, match="draw must be"):
        next(iter_pages(Document.from_text("hello"), draw=draw))


def test_a_file_of_one_long_line_streams_in_bounded_pieces(tmp_path):
    """No newline for many reads: the reader yields a line's bytes as they come (it held the line whole, joined
    again at each read: quadratic, found by a fresh-eyes test), and the segments are still the whole text's."""
    from snapglyph.raster.stream import segments
    from snapglyph.readers import textfile
    line = ("wörd-" * (textfile._READ // 3)) + "漢" * 5000
    path = tmp_path / "one-line.txt"
    path.write_bytes(b"\xef\xbb\xbf" + (line * 3 + "\nend").encode())
    pieces = list(textfile._texts(path))
    assert "".join(pieces) == line * 3 + "\nend"
    assert max(map(len, pieces)) <= textfile._READ and len(pieces) > 6
    want = list(segments(Document.from_text(line * 3 + "\nend")))
    got = list(segments(TextFileDocument(path)))
    assert [g[0] for g in got] == [w[0] for w in want] and len(want) > 4
