"""The ahead-of-time build of the kernels (snapglyph.raster.native) against numba's JIT: the same pages, byte for
byte; its argument checks; its wrappers releasing the GIL; a fresh process that renders without importing numba."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from snapglyph import Document, InternalError, RenderError, load
from snapglyph.raster import native
from snapglyph.raster.render import iter_pages

ROOT = Path(__file__).resolve().parent.parent

_MIXED = ("def f(x):\n\treturn x  # Grüße 漢字 \U0001F600 → ✅\n" * 900 + "\x1b[31mred\x1b[0m\r\n" * 50
          + "| a | b |\n|---|---|\n| 1 | 2 |\n" * 40 + "plain prose that wraps " * 400 + "\u200bzw\u2028x\t" * 60)


@pytest.fixture(scope="module")
def build():
    """The build's kernels and the JIT's, side by side (the build made here where warm-up has not made it)."""
    try:
        native.build()
    except RenderError as e:  # no C compiler, or a numba without pycc: the JIT is what runs here
        pytest.skip(str(e))
    made = native._load_build()
    assert made is not None and made.source == "build"
    return made, native._jit()


def _pages(monkeypatch, kernels, doc, **kw):
    monkeypatch.setattr(native, "_loaded", kernels)
    return [(p.png, p.text, p.chars, p.first_id, p.last_id) for p in iter_pages(doc, **kw)]


@pytest.mark.parametrize("mode", ["auto", "dense", "lines"])
@pytest.mark.parametrize("cell", ["6x12", "5x8", "8x16"])
def test_build_draws_the_jit_pages_byte_for_byte(build, monkeypatch, mode, cell):
    made, jit = build
    doc = Document.from_text(_MIXED)
    got = _pages(monkeypatch, made, doc, mode=mode, cell=cell)
    want = _pages(monkeypatch, jit, doc, mode=mode, cell=cell)
    assert len(got) >= 3 and got == want


def test_build_draws_a_real_session_like_the_jit(build, monkeypatch):
    from snapglyph.model.document import document_for
    doc = document_for(load(ROOT / "examples" / "pi-session" / "large-session.jsonl").messages, "auto")
    made, jit = build
    assert _pages(monkeypatch, made, doc) == _pages(monkeypatch, jit, doc)


def test_build_checks_its_array_arguments(build):
    made, _ = build
    page = np.full((4, 8), 255, np.uint8)
    out = np.empty(4 * 3, np.uint8)
    assert made.pack_rows(page, 4, 2, out) == 12
    for bad, why in [(page.astype(np.int32), "int32 2-d"), (np.full((4, 16), 255, np.uint8)[:, ::2], "strided"),
                     (page[0], "uint8 1-d")]:
        with pytest.raises(InternalError, match=f"pack_rows: argument 0 .*{why}"):
            made.pack_rows(bad, 4, 2, out)
    frozen = out.copy()
    frozen.flags.writeable = False
    with pytest.raises(InternalError, match="argument 3 must be a C-contiguous writable uint8 array.*read-only"):
        made.pack_rows(page, 4, 2, frozen)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        made.pack_rows(page, 4, 2)
    swapped = page.astype(">u1").view(np.uint8).astype(np.dtype("uint8").newbyteorder(">"))
    assert made.pack_rows(swapped, 4, 2, out) == 12  # uint8 has no byte order: numpy's own dtype either way


def test_build_releases_the_gil(build):
    """Another thread runs while one is inside a kernel call: it sees the output buffer part written (the first
    row's filter byte set, the last row's last byte not yet), a state that only exists inside the call. With the GIL
    held the watching thread could look only before the call or after it, in every one of the calls tried. No clock
    is read."""
    made, _ = build
    rows, width = 30000, 4000
    page = np.full((rows, width), 255, np.uint8)
    seen = []
    for _ in range(20):  # one sighting proves it; a loaded machine may not run the watcher in every call
        out = np.full(rows * (1 + width // 4), 0x55, np.uint8)
        worker = threading.Thread(target=made.pack_rows, args=(page, rows, 2, out))
        partial = False
        worker.start()
        while worker.is_alive() and not partial:
            partial = out[0] != 0x55 and out[-1] == 0x55
        worker.join()
        assert out[0] == 0 and out[-1] == 0xFF   # the call finished: every row written (filter 0, white at depth 2)
        seen.append(partial)
        if partial:
            break
    assert any(seen), "the watching thread never ran while the kernel was running, in 20 calls"


def _fresh(code: str, **env) -> str:
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT), **env),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.split()


_RENDER = ("import sys; import snapglyph as s; from snapglyph.raster import native; "
           "pages = s.render('x = 1\\n' * 5000 + '\\U0001F600 Gr\\u00fc\\u00dfe\\n' * 3000, workers=2); "
           "print(len(pages), native.kernels().source, 'numba' in sys.modules)")


def test_a_fresh_process_renders_with_the_build_without_numba(build):
    assert _fresh(_RENDER) == ["4", "build", "False"]


def test_the_jit_can_be_forced(build):
    assert _fresh(_RENDER, SNAPGLYPH_KERNELS="jit") == ["4", "jit", "True"]


def test_a_build_is_named_by_its_sources_numba_and_machine(monkeypatch, tmp_path):
    key = native.build_key()
    assert len(key) == 16 and native.build_key() == key
    monkeypatch.setattr(native, "_numba_version", lambda: b"another numba")
    assert native.build_key() != key
    monkeypatch.setattr(native, "_cpu_tag", lambda: "another processor")
    other = native.build_key()
    assert other != key
    monkeypatch.setenv("SNAPGLYPH_KERNEL_DIR", str(tmp_path))
    assert native.build_dir() == tmp_path / f"kernels-{other}"
    monkeypatch.delenv("SNAPGLYPH_KERNEL_DIR")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert native.build_dir() == tmp_path / "numba" / "snapglyph" / f"kernels-{other}"


def test_no_build_in_the_folder_means_the_jit(monkeypatch, tmp_path):
    monkeypatch.setenv("SNAPGLYPH_KERNEL_DIR", str(tmp_path))
    assert native._load_build() is None
    (tmp_path / native.build_dir().name).mkdir()
    assert native._load_build() is None  # a folder without a module (a build that failed part way)


def _count_span(codes, srcw, a, b, narrow, wide):
    """count_span's counts by numpy: source characters, and those replaced (a replacement glyph or a label's first
    letter)."""
    w, c = srcw[a:b], codes[a:b]
    return int(np.count_nonzero(w)), int(np.count_nonzero(((c == narrow) | (c == wide)) & (w > 0)) + (w == 2).sum())


def test_a_pages_counts_by_kernel_equal_numpy(build):
    """count_span (the build's and the JIT's) against numpy's counts on random spans of codes with replacement
    glyphs and label letters."""
    from snapglyph.raster.atlas import REPL_NARROW, REPL_WIDE
    made, jit = build
    rng = np.random.default_rng(5)
    codes = rng.choice(np.array([REPL_NARROW, REPL_WIDE, -1, 0, 5, 77], np.int32), 5000)
    srcw = rng.choice(np.array([0, 1, 1, 2], np.uint8), 5000)
    spans = [(0, 5000), (0, 0), (4999, 5000)] + [tuple(sorted(rng.integers(0, 5000, 2).tolist())) for _ in range(50)]
    for a, b in spans:
        want = _count_span(codes, srcw, a, b, REPL_NARROW, REPL_WIDE)
        assert made.count_span(codes, srcw, a, b, REPL_NARROW, REPL_WIDE) == want
        assert jit.count_span(codes, srcw, a, b, REPL_NARROW, REPL_WIDE) == want
    assert _count_span(codes, srcw, 0, 5000, REPL_NARROW, REPL_WIDE)[1] > 1000  # both kinds of replaced counted


def test_without_a_build_the_kernels_are_the_jits(tmp_path):
    code = ("import sys; from snapglyph.raster import native; import snapglyph as s; "
            "pages = s.render('hello\\n' * 50, workers=1); "
            "print(len(pages), native.kernels().source, 'numba' in sys.modules)")
    assert _fresh(code, SNAPGLYPH_KERNEL_DIR=str(tmp_path)) == ["1", "jit", "True"]


def test_a_numba_without_pycc_falls_back_to_the_jit_and_says_so_once(monkeypatch, tmp_path):
    import warnings
    monkeypatch.setenv("SNAPGLYPH_KERNEL_DIR", str(tmp_path))  # no build here
    monkeypatch.delenv("SNAPGLYPH_KERNELS", raising=False)
    monkeypatch.setattr(native, "_pycc_present", lambda: False)
    monkeypatch.setattr(native, "_warned", False)
    for _ in range(3):
        monkeypatch.setattr(native, "_loaded", None)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert native.kernels().source == "jit"
        said = [w for w in seen if issubclass(w.category, RuntimeWarning) and "no numba.pycc" in str(w.message)]
        assert len(said) == (1 if _ == 0 else 0)
    monkeypatch.setattr(native, "_warned", False)
    monkeypatch.setattr(native, "_loaded", None)
    monkeypatch.setenv("SNAPGLYPH_KERNELS", "jit")  # the JIT asked for: nothing to say
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert native.kernels().source == "jit"
    assert not [w for w in seen if "no numba.pycc" in str(w.message)]


def test_no_build_says_how_to_make_one_once(monkeypatch, tmp_path):
    import warnings
    monkeypatch.setenv("SNAPGLYPH_KERNEL_DIR", str(tmp_path))  # no build here, though numba.pycc is present
    monkeypatch.delenv("SNAPGLYPH_KERNELS", raising=False)
    monkeypatch.setattr(native, "_warned", False)
    said = []
    for _ in range(2):
        monkeypatch.setattr(native, "_loaded", None)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert native.kernels().source == "jit"
        said += [str(w.message) for w in seen if issubclass(w.category, RuntimeWarning)]
    assert len(said) == 1 and "python -m snapglyph.raster.warm" in said[0]


def test_this_numba_has_pycc():
    """The installed numba (pyproject.toml pins the versions the build is tested with) has its ahead-of-time
    compiler, found without importing numba."""
    assert native._pycc_present()


def test_a_build_that_cannot_be_made_is_a_render_error_and_warm_says_why(monkeypatch, tmp_path, capsys):
    from snapglyph.raster import warm
    monkeypatch.setitem(sys.modules, "numba.pycc", None)  # a numba without its ahead-of-time compiler
    with pytest.raises(RenderError, match="numba has no ahead-of-time compiler.*the JIT kernels are used"):
        native.build(tmp_path / "kernels-x")
    monkeypatch.setenv("SNAPGLYPH_KERNEL_DIR", str(tmp_path))
    assert warm.main() == 0
    assert "snapglyph: note: numba has no ahead-of-time compiler" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing half-built left behind


def test_a_build_that_is_not_whole_is_not_loaded_and_warm_up_makes_it_again(build, tmp_path):
    """A truncated module (a full disk, a cache restored in part) would end the process with a bus error on
    import: its size and SHA-256 are checked against build.json first; warm-up replaces it."""
    import shutil
    made, _ = build
    folder = tmp_path / native.build_dir().name
    shutil.copytree(made.path.parent, folder)
    env = {"SNAPGLYPH_KERNEL_DIR": str(tmp_path)}
    probe = "from snapglyph.raster import native; import snapglyph; snapglyph.render('hi'); print(native.kernels().source)"
    assert _fresh(probe, **env) == ["build"]
    so = folder / made.path.name
    so.write_bytes(so.read_bytes()[:100_000])
    assert _fresh(probe, **env) == ["jit"]
    r = subprocess.run([sys.executable, "-m", "snapglyph.raster.warm"], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), **env), timeout=600)
    assert r.returncode == 0 and r.stderr == ""
    assert _fresh(probe, **env) == ["build"]


def test_warm_up_in_a_folder_it_cannot_write_says_why_and_exits_0(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    r = subprocess.run([sys.executable, "-m", "snapglyph.raster.warm"], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), SNAPGLYPH_KERNEL_DIR=str(blocker / "kernels")),
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("snapglyph: note: the ahead-of-time build of the kernels failed (")
    assert r.stderr.count("\n") == 1


def test_an_unknown_kernels_choice_is_an_input_error(monkeypatch):
    from snapglyph import InputError
    monkeypatch.setenv("SNAPGLYPH_KERNELS", "aot")
    with pytest.raises(InputError, match="SNAPGLYPH_KERNELS must be auto or jit, not 'aot'"):
        native._load_build()
    monkeypatch.setenv("SNAPGLYPH_KERNELS", " JIT ")
    assert native._load_build() is None


def test_build_checks_its_scalar_arguments(build):
    made, _ = build
    codes, srcw = np.zeros(4, np.int32), np.ones(4, np.uint8)
    assert made.count_span(codes, srcw, np.int64(0), 4, 3, 7) == (4, 0)
    for bad in ("0", 2.9, None):
        with pytest.raises(InternalError, match="count_span: argument 2 must be int or integer"):
            made.count_span(codes, srcw, bad, 4, 3, 7)
