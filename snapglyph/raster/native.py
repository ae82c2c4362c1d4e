"""The compiled kernels the renderer calls: a build made ahead of time where one matches the sources, else numba's JIT.

The ten kernels on the render path (:data:`KERNELS`: layout and blit, a page's counts, row packing, the two of the
compiled normalization, the two of the block planner and the three of a flow block) are numba functions in
:mod:`snapglyph.raster._kernels`, :mod:`snapglyph.raster._pack_kernels`, :mod:`snapglyph.raster._text_kernels`,
:mod:`snapglyph.raster._line_kernels` and :mod:`snapglyph.raster._flow_kernels`. Called through numba's
dispatcher, a fresh process pays for numba itself before its first page: importing numba and initializing its
compiler for the first cached kernel (about half a second: bench/RESULTS.md, section "Kernel design choices").
:func:`build` compiles the same Python functions with the same numba
(``numba.pycc``, its ahead-of-time compiler) into an extension module of this machine; :func:`kernels` imports it
in about a millisecond, without numba. The machine code comes from the same source through the same LLVM, so the
pages are byte-identical (tested against the JIT); the module's wrappers release the GIL, as ``nogil=True`` does.

A build is named by :func:`build_key` (the kernels' sources, the numba, numpy and Python versions, the machine)
and lives in :func:`build_dir`; a build of other sources is never loaded. Where there is none (no C compiler, a
numba without ``pycc``, a build not made yet), :func:`kernels` returns numba's JIT dispatchers: the same functions,
the same results; where numba has no ``numba.pycc`` (deprecated upstream; pyproject.toml pins the numba versions
the build is tested with), it says so once a process, in a :class:`RuntimeWarning`. ``SNAPGLYPH_KERNELS=jit`` forces the JIT (to run the kernels under ``NUMBA_BOUNDSCHECK=1``,
say; ``auto``, the default, takes the build where there is one); ``python -m snapglyph.raster.warm`` makes the
build, and replaces one that is not whole (``build.json`` records the module's size and SHA-256, checked before it
is loaded: a truncated module would end the process with a bus error).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import importlib.util
import os
import platform
import shutil
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np

__all__ = ["KERNELS", "build", "build_dir", "build_key", "kernels", "ready"]

KERNELS = ("layout_blit", "count_span", "pack_rows", "text_flags", "expand_codes", "line_kinds", "choose_band",
           "flow_indent", "flow_breaks", "block_rows_both")
"""The kernels :func:`kernels` provides, by name."""

_MODULE = "_snapglyph_kernels"
_RECORD = "build.json"
_CHOICES = ("auto", "jit")
_SOURCES = ("_kernels.py", "_pack_kernels.py", "_text_kernels.py", "_line_kernels.py", "_flow_kernels.py", "_codes.py",
            "_line_rule.py", "native.py")
"""The files whose text the build's machine code depends on (its name hashes them)."""
_loaded: SimpleNamespace | None = None
_searched = False
_warned = False


def build_key() -> str:
    """Return the name of the build for this process: 16 hex digits of SHA-256 over the kernels' sources (the
    kernels bake in constants of ``_codes.py`` and ``_line_rule.py``), the numba, numpy and Python versions and the
    machine.

    Examples
    --------
    >>> len(build_key()), build_key() == build_key()
    (16, True)
    """
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in _SOURCES:
        h.update((here / name).read_bytes())
    h.update(_numba_version())
    h.update(f"{np.__version__} {sys.version} {platform.machine()} {_cpu_tag()}".encode())
    return h.hexdigest()[:16]


def _numba_version() -> bytes:
    """numba's version file, read without importing numba (or importlib.metadata: 25 ms)."""
    spec = importlib.util.find_spec("numba")
    if spec is None or not spec.origin:  # pragma: no cover - numba is a dependency
        return b"no numba"
    return (Path(spec.origin).parent / "_version.py").read_bytes()


def _cpu_tag() -> str:
    """The processor the build is made for: its model and feature flags from ``/proc/cpuinfo`` (hashed), or
    ``generic`` where that file is absent (the build is then made for the architecture's baseline)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            head = f.read(1 << 16).split("\n\n")[0]
    except OSError:
        return "generic"
    lines = [x for x in head.splitlines() if x.startswith(("model name", "flags", "Features", "CPU part"))]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16] if lines else "generic"


def build_dir() -> Path:
    """Return the folder of the build named by :func:`build_key`: under ``SNAPGLYPH_KERNEL_DIR``, else under
    ``NUMBA_CACHE_DIR/snapglyph`` (where CI keeps numba's cache), else under ``~/.cache/snapglyph`` (or
    ``XDG_CACHE_HOME/snapglyph``). The folder may not exist.

    Examples
    --------
    >>> build_dir().name == "kernels-" + build_key()
    True
    """
    root = os.environ.get("SNAPGLYPH_KERNEL_DIR")
    if not root and os.environ.get("NUMBA_CACHE_DIR"):
        root = os.path.join(os.environ["NUMBA_CACHE_DIR"], "snapglyph")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "snapglyph")
    return Path(root) / f"kernels-{build_key()}"


def _built(folder: Path) -> Path | None:
    """The extension module file in ``folder`` where it is whole: its size and SHA-256 as the build recorded them
    in ``build.json`` (a truncated module is not loaded: importing one ends the process with a bus error)."""
    try:
        record = json.loads((folder / _RECORD).read_text(encoding="utf-8"))
        path = folder / record["file"]
        if path.name == record["file"] and path.stat().st_size == record["size"] and _sha256(path) == record["sha256"]:
            return path
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _record(folder: Path) -> None:
    """Write ``build.json`` for the module pycc wrote into ``folder``."""
    path = next(folder / f"{_MODULE}{s}" for s in importlib.machinery.EXTENSION_SUFFIXES
                if (folder / f"{_MODULE}{s}").is_file())
    record = {"file": path.name, "size": path.stat().st_size, "sha256": _sha256(path)}
    (folder / _RECORD).write_text(json.dumps(record) + "\n", encoding="utf-8")


def _load_build() -> SimpleNamespace | None:
    """The ahead-of-time build for these sources, imported; None where there is none or the JIT is forced.

    Raises
    ------
    InputError
        ``SNAPGLYPH_KERNELS`` is set to neither ``auto`` nor ``jit``.
    """
    choice = os.environ.get("SNAPGLYPH_KERNELS", "auto").strip().lower() or "auto"
    if choice not in _CHOICES:
        from ..errors import InputError
        raise InputError(f"SNAPGLYPH_KERNELS must be auto or jit, not {os.environ['SNAPGLYPH_KERNELS']!r}")
    if choice == "jit":
        return None
    try:
        path = _built(build_dir())
    except OSError:  # pragma: no cover - a source file not readable
        return None
    if path is None:
        return None
    spec = importlib.util.spec_from_file_location(_MODULE, path)
    try:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except ImportError:  # a build this interpreter cannot load: the JIT
        return None
    return SimpleNamespace(**{name: _guarded(getattr(mod, name), name) for name in KERNELS}, source="build",
                           path=path)


def _jit_modules() -> tuple:
    from . import _flow_kernels, _kernels, _line_kernels, _pack_kernels, _text_kernels
    return _kernels, _pack_kernels, _text_kernels, _line_kernels, _flow_kernels


def _jit() -> SimpleNamespace:
    found = {name: getattr(m, name) for m in _jit_modules() for name in KERNELS if hasattr(m, name)}
    return SimpleNamespace(**found, source="jit", path=None)


def _pycc_present() -> bool:
    """Whether the installed numba has its ahead-of-time compiler (``numba/pycc``), looked up without importing
    numba."""
    spec = importlib.util.find_spec("numba")
    return bool(spec and spec.origin and (Path(spec.origin).parent / "pycc" / "__init__.py").is_file())


def _fall_back() -> SimpleNamespace:
    """The JIT's kernels where no build was loaded, with one :class:`RuntimeWarning` a process where no build can
    ever be made here because numba has no ``numba.pycc`` (``SNAPGLYPH_KERNELS=jit`` asks for the JIT: no warning)."""
    global _warned
    forced = os.environ.get("SNAPGLYPH_KERNELS", "auto").strip().lower() == "jit"
    if not forced and not _warned:
        import warnings
        _warned = True
        if not _pycc_present():
            warnings.warn("snapglyph: this numba has no numba.pycc, so the kernels cannot be built ahead of time; "
                          "they run on numba's JIT (about 0.2 s more start-up a process, and about 20 s once where "
                          "numba's cache is empty; pyproject.toml names the numba versions the build is tested with)",
                          RuntimeWarning, stacklevel=3)
        else:
            warnings.warn("snapglyph: no ahead-of-time build of the kernels; numba's JIT compiles them (about 20 s "
                          "where its cache is empty, then about 1 s a process): run `python -m snapglyph.raster.warm` "
                          "once after installing", RuntimeWarning, stacklevel=3)
    return _jit()


def kernels() -> SimpleNamespace:
    """Return the compiled kernels: the ahead-of-time build for these sources where there is one, else numba's
    JIT dispatchers (importing numba). Resolved once per process.

    Returns
    -------
    types.SimpleNamespace
        One attribute per name in :data:`KERNELS`; ``source`` (``"build"`` or ``"jit"``) and ``path`` (the build's
        file, or None).

    Warns
    -----
    RuntimeWarning
        Once a process where the JIT is used without being asked for (``SNAPGLYPH_KERNELS=jit``): no build was
        found (run ``python -m snapglyph.raster.warm``), or numba has no ``numba.pycc``.

    Examples
    --------
    >>> k = kernels()
    >>> k.source in ("build", "jit"), callable(k.layout_blit)
    (True, True)
    """
    global _loaded
    if _loaded is None:
        _loaded = _load_build() or _fall_back()
    return _loaded


def ready() -> bool:
    """Whether the compiled kernels cost nothing more to call in this process: resolved already, numba's kernels
    imported, or an ahead-of-time build on disk (imported here, about a millisecond). False means the first call
    would import numba (about 0.5 s).

    Examples
    --------
    >>> kernels() is not None and ready()
    True
    """
    global _loaded, _searched
    if _loaded is not None or "snapglyph.raster._kernels" in sys.modules:
        return True
    if not _searched:  # looked for once a process (a build made later is found by kernels())
        _searched = True
        _loaded = _load_build()
    return _loaded is not None


_SIGNATURES = {
    # name: (result, arguments); an array is "dtype:ndim" (C-contiguous), "r" after it: read-only accepted
    "layout_blit": ("i8", ("i4:1", "u1:1", "i8", "i8", "i8:1", "u1:2", "u1:3", "u1:1", "u1:2", "i8", "i8", "i8", "i8",
                           "b1", "i8", "i4:1", "i4:1", "u1:1", "i4:1", "i4:1", "i1:1", "i8")),
    "count_span": ("i8x2", ("i4:1", "u1:1", "i8", "i8", "i8", "i8")),
    "pack_rows": ("i8", ("u1:2", "i8", "i8", "u1:1")),
    "text_flags": ("i8", ("u4:1r",)),
    "expand_codes": ("i8x3", ("u4:1r", "i8:2", "i1:1", "i4:1", "i4:1", "u1:1", "i8", "i8", "i8", "u1:1")),
    "line_kinds": ("none", ("u4:1r", "b1", "u1:1", "i8", "i8", "u1:1", "i4:1", "i4:1")),
    "choose_band": ("i8x2", ("i4:1", "i4:1", "i8", "i8", "i8", "i8", "i8", "i8", "f8")),
    "flow_indent": ("i8x2", ("i4:1r", "i4:1", "i8:1", "i8:1")),
    "flow_breaks": ("i8", ("i4:1", "u1:1r", "u1:1", "i8:1", "i8", "i8", "i4:1", "u1:1")),
    "block_rows_both": ("i8x2", ("i4:1r", "i4:1r", "i8", "i8", "i8")),
}
"""The one signature each kernel is called with: what numba's JIT compiles for the renderer's calls."""

_DTYPES = {"i1": np.int8, "u1": np.uint8, "i4": np.int32, "u4": np.uint32, "i8": np.int64}
_SCALARS = {"i8": (int, np.integer), "b1": (bool, np.bool_), "f8": (int, float, np.integer, np.floating)}
"""What a scalar argument may be (the build's wrappers would take a string for an int and truncate a float)."""


def _numba_signature(name: str):
    """:data:`_SIGNATURES` of ``name`` as a numba signature (imports numba)."""
    from numba import types as t
    scalars = {"i1": t.int8, "u1": t.uint8, "i4": t.int32, "u4": t.uint32, "i8": t.int64, "b1": t.boolean,
               "f8": t.float64, "none": t.none, "i8x2": t.UniTuple(t.int64, 2), "i8x3": t.UniTuple(t.int64, 3)}

    def one(spec: str):
        if ":" not in spec:
            return scalars[spec]
        dtype, dims = spec.split(":")
        return t.Array(scalars[dtype], int(dims.rstrip("r")), "C", readonly=dims.endswith("r"))

    result, args = _SIGNATURES[name]
    return one(result)(*map(one, args))


def _guarded(fn, name: str):
    """``fn`` (a kernel of the build) behind a check of its array arguments: the build's wrappers convert
    arguments without checking them (a wrong dtype crashes the process), the JIT's dispatcher checks them.

    The check is one expression per array, written out for the kernel's own arguments: a loop over them cost
    0.6-0.9 us a call (measured 2026-12-03), a kernel called once a block of a 10 M-character text pays it 10^5
    times."""
    args = _SIGNATURES[name][1]
    params = ", ".join(f"a{i}" for i in range(len(args)))
    tests = [f"(a{i}.__class__ is _nd and (a{i}.dtype is _d{i} or a{i}.dtype == _d{i}) "
             f"and a{i}.ndim == {int(a.split(':')[1].rstrip('r'))} "
             f"and a{i}.flags.c_contiguous{'' if a.endswith('r') else f' and a{i}.flags.writeable'})"
             if ":" in a else f"isinstance(a{i}, _{a})" for i, a in enumerate(args)]
    code = (f"def {name}({params}):\n"
            f"    if not ({' and '.join(tests) or 'True'}):\n"
            f"        _refuse(({params},))\n"
            f"    return _fn({params})\n")
    scope = {"_nd": np.ndarray, "_fn": fn, "_refuse": lambda values: _refuse(name, values), "_i8": _SCALARS["i8"],
             "_b1": _SCALARS["b1"], "_f8": _SCALARS["f8"]}
    scope.update({f"_d{i}": np.dtype(_DTYPES[a.split(":")[0]]) for i, a in enumerate(args) if ":" in a})
    exec(compile(code, f"<snapglyph.raster.native guard of {name}>", "exec"), scope)  # noqa: S102 - our own text
    call = scope[name]
    call.__doc__ = f"The ahead-of-time build of ``{name}`` (its array arguments checked)."
    return call


def _refuse(name: str, values: tuple):
    """Raise the InternalError naming the first argument of ``values`` that kernel ``name`` cannot take."""
    from ..errors import InternalError
    for i, a in enumerate(_SIGNATURES[name][1]):
        if ":" not in a:
            if not isinstance(values[i], _SCALARS[a]):
                raise InternalError(f"{name}: argument {i} must be {' or '.join(t.__name__ for t in _SCALARS[a])}, "
                                    f"not {type(values[i]).__name__}")
            continue
        dtype, ndim, readonly, v = np.dtype(_DTYPES[a.split(":")[0]]), int(a.split(":")[1].rstrip("r")), \
            a.endswith("r"), values[i]
        if not (isinstance(v, np.ndarray) and v.dtype == dtype and v.ndim == ndim and v.flags.c_contiguous
                and (readonly or v.flags.writeable)):
            raise InternalError(f"{name}: argument {i} must be a C-contiguous {'' if readonly else 'writable '}"
                                f"{dtype} array of {ndim} dimension(s), not {_describe(v)}")
    raise InternalError(f"{name}: its arguments were refused (an array subclass?)")


def _describe(v) -> str:
    if isinstance(v, np.ndarray):
        return f"{v.dtype} {v.ndim}-d ({'C-contiguous' if v.flags.c_contiguous else 'strided'}" \
               f"{'' if v.flags.writeable else ', read-only'})"
    return type(v).__name__


def build(folder: str | Path | None = None) -> Path:
    """Compile :data:`KERNELS` ahead of time into ``folder`` (default :func:`build_dir`); return the module's path.

    An existing build there is kept. The build is written into a temporary folder beside ``folder`` and renamed
    into place, so a process never loads a half-written module. It takes about 15 s (numba compiles each
    kernel, then the C compiler links the module) and needs a C compiler.

    Raises
    ------
    RenderError
        If numba has no ahead-of-time compiler or the compile fails (the JIT is then used; the message says why).

    Examples
    --------
    >>> build().name.startswith("_snapglyph_kernels")  # made by warm-up already: found, not compiled again
    True
    """
    import warnings

    from ..errors import RenderError
    target = Path(folder) if folder is not None else build_dir()
    found = _built(target)
    if found is not None:
        return found
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numba marks pycc as pending deprecation
            from numba.pycc import CC
            from numba.pycc import compiler as pycc_compiler
    except ImportError as e:
        raise RenderError(f"numba has no ahead-of-time compiler ({e}); the JIT kernels are used") from None
    modules = _jit_modules()
    tmp = target.parent / f".build-{os.getpid()}-{threading.get_ident()}"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():  # a build that is not whole (no record, or a file that does not match it)
            shutil.rmtree(target)
        shutil.rmtree(tmp, ignore_errors=True)  # left by a build that died
        tmp.mkdir()  # the umask's mode, so that other users of a shared cache can load it
        cc = CC(_MODULE)
        cc.output_dir = str(tmp)
        cc.verbose = False
        cc.use_nrt = False  # as the JIT compiles them (_kernels.jit): without numba's reference-counting runtime
        for name in KERNELS:
            fn = next(getattr(m, name) for m in modules if hasattr(m, name))
            cc.export(name, _numba_signature(name))(fn.py_func)
        if _cpu_tag() != "generic":
            cc.target_cpu = "host"
        _compile(cc, pycc_compiler)
        _record(tmp)
        try:
            os.rename(tmp, target)
        except OSError:  # another process built it first: keep theirs
            if _built(target) is None:
                raise
    except Exception as e:  # noqa: BLE001 - any failure of numba's or the C compiler's: the JIT is used instead
        raise RenderError(f"the ahead-of-time build of the kernels failed ({type(e).__name__}: {e}); "
                          "the JIT kernels are used") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _built(target)


def _compile(cc, pycc_compiler) -> None:
    """``cc.compile()`` as numba's JIT compiles: every exported function's wrapper releases the GIL, and a build for
    the host processor gets the host's features, not its model's (a virtual machine may lack some). pycc has no
    option for either: its compiler reads the module's ``Flags`` class and its code generator a method, both
    replaced for the one call."""
    import warnings

    from numba.core import codegen
    flags, features = pycc_compiler.Flags, codegen.AOTCPUCodegen._customize_tm_features

    class Flags(flags):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = True

    pycc_compiler.Flags = Flags
    if cc.target_cpu == "host":
        codegen.AOTCPUCodegen._customize_tm_features = lambda self: self._get_host_cpu_features()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cc.compile()
    finally:
        pycc_compiler.Flags = flags
        codegen.AOTCPUCodegen._customize_tm_features = features
