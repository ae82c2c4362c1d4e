"""Deterministic PNG: a minimal writer over a fast deflate, and data URLs.

A page is grey (``(height, width)`` uint8). :func:`png_bytes` writes it as a grey PNG of the smallest exact bit
depth (1, 2, 4 or 8 bits per pixel: a page whose pixels are all multiples of 85 is written with 2 bits), with filter
0 on every row and one IDAT chunk. Nothing varies between runs: no timestamp, no text chunk, no gamma chunk.

Deflate: ISA-L's ``isal_zlib`` (the ``isal`` package) at level 1 where it is installed (a core dependency), else
the standard library's ``zlib`` at level 1; :data:`DEFLATE` names the one in use. Measured on 20 dense 1092x1092
claude pages of real text (2-bit rows, 299 KB raw each; bench/test_bench_deflate.py): isal 1 0.76 ms and 71 KB a
page, libdeflate 1 (``deflate``) 1.89 ms and 66 KB, zlib-ng 1 1.42 ms and 92 KB, zlib 1 2.80 ms and 74 KB, zlib 6
10.96 ms and 60 KB. The bytes differ between libraries, the decoded pixels never do (tested against Pillow).

Known defect: ISA-L's output is not always the same for the same rows. ISA-L documents one output on every x86-64
with SSE4.2 (https://github.com/intel/isa-l/issues/140, read 2026-12-01). But fuzz runs of lazy against packed
renders under load (2026-12-03) gave 8 pages in about 17,000 iterations, in every layout, whose IDAT came in two forms
that inflate to the same rows: the same pixels and text, other PNG bytes.
In one of those runs every deflate call was checked as it ran (233,962 calls): the rows did not change during the
call, and compressing the same bytes again at once on the same thread gave the same output. Yet the same rows had
compressed otherwise elsewhere in that process (on another thread, at another time). So the output depends on some
state of the call that holds from one call to the next. python-isal runs ISA-L's stateful deflate with its
stream state in an uninitialized local variable and its level buffer uninitialized from the heap, but neither a
stack dirtied with random bytes by a C helper nor a recycled heap block of the level buffer's size filled with
random bytes changed the output: the cause is not known. Isolated, the same rows also gave one output over 4,160
buffer alignments, 300 random byte surroundings and 236,518 compressions on three threads at once.
The standard zlib never varied. zlib-ng 1 (0.73 ms a page, 75 KB) and libdeflate 1 (1.25 ms, 54 KB), against
ISA-L's 0.44 ms and 59 KB on this machine the same day, are the alternatives, at that cost.
"""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np

from .._config import ZLIB_LEVEL
from ..errors import InputError
from . import native

__all__ = ["DEFLATE", "ZLIB_LEVEL", "data_url", "exact_depth", "png_bytes"]


try:
    from isal import isal_zlib as _deflate_lib
except ImportError:  # pragma: no cover - isal is a core dependency; the standard library is the fallback
    _deflate_lib = zlib
DEFLATE = "isal" if _deflate_lib is not zlib else "zlib"
"""The deflate library :func:`png_bytes` uses by default: ``"isal"`` (ISA-L) or ``"zlib"`` (standard library)."""

_SIG = b"\x89PNG\r\n\x1a\n"
_PAD = 64
"""Zero bytes kept after the packed rows handed to the deflate. ISA-L's output for the same rows varied between runs
under load (the same page's IDAT in two forms, both inflating to the same rows; 6 of 14 renders of the pi session
in lines mode, page 152, measured 2026-12-03; never with the standard zlib), and its reading past the rows' end
was suspected. With the rows followed by zeros the bytes did not vary in 28 such renders, but the variation came
back in a longer fuzz run, and ISA-L's output turned out not to depend on the bytes after the rows at all (see the
module's known defect): the padding is kept as harmless, not as the fix."""


_crc32 = _deflate_lib.crc32
"""The chunks' CRC-32 (PNG's, ISO 3309; both libraries compute the same): ISA-L's takes 2 us for a page's IDAT of
72 KB where the standard zlib's takes 29 (measured 2026-12-03)."""


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = _crc32(data, _crc32(kind)) & 0xFFFFFFFF
    return b"".join((struct.pack(">I", len(data)), kind, data, struct.pack(">I", crc)))


def exact_depth(pixels: np.ndarray) -> int:
    """Return the smallest PNG grey bit depth that holds ``pixels`` exactly.

    Parameters
    ----------
    pixels : numpy.ndarray
        ``(height, width)`` uint8.

    Returns
    -------
    int
        1 (only 0 and 255), 2 (multiples of 85), 4 (multiples of 17) or 8.

    Examples
    --------
    >>> [exact_depth(np.array([[0, v]], np.uint8)) for v in (255, 170, 17, 200)]
    [1, 2, 4, 8]
    """
    if not (pixels % 17).any():
        if not (pixels % 85).any():
            if not ((pixels != 0) & (pixels != 255)).any():
                return 1
            return 2
        return 4
    return 8


def _pack_numpy(pixels: np.ndarray, depth: int) -> np.ndarray:
    """Pack rows like :func:`snapglyph.raster._pack_kernels.pack_rows`, with numpy (where the compiled kernels would
    cost numba's import: :func:`snapglyph.raster.native.ready`)."""
    h, w = pixels.shape
    per = 8 // depth
    stride = (w * depth + 7) // 8
    samples = np.zeros((h, stride * per), np.uint8)
    samples[:, :w] = pixels >> (8 - depth)
    samples = samples.reshape(h, stride, per)
    packed = np.zeros((h, stride), np.uint8)
    for k in range(per):
        packed |= samples[:, :, k] << np.uint8(depth * (per - 1 - k))
    out = np.zeros((h, stride + 1), np.uint8)
    out[:, 1:] = packed
    return out.reshape(-1)


def png_bytes(pixels: np.ndarray, *, depth: int | None = None, level: int | None = None) -> bytes:
    """Encode a grey page as deterministic PNG bytes.

    Parameters
    ----------
    pixels : numpy.ndarray
        ``(height, width)`` uint8 grey values, height and width >= 1.
    depth : int or None
        Bits per pixel (1, 2, 4, 8); None picks :func:`exact_depth`. A caller that knows its pixels are multiples
        of ``255 // (2**depth - 1)`` passes it to skip the scan.
    level : int or None
        None: :data:`DEFLATE` at :data:`ZLIB_LEVEL`. An int: the standard library's zlib at that level (0-9).

    Returns
    -------
    bytes
        A PNG file: signature, IHDR (grey, no interlace), one IDAT, IEND.

    Raises
    ------
    InputError
        If ``pixels`` is not a non-empty 2-D uint8 array, or ``depth`` is not 1, 2, 4 or 8.

    Examples
    --------
    >>> import numpy as np
    >>> png = png_bytes(np.full((2, 3), 255, np.uint8))
    >>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n", png[24]  # signature, bit depth 1 (only white)
    (True, 1)
    """
    if not isinstance(pixels, np.ndarray) or pixels.ndim != 2 or pixels.dtype != np.uint8 or 0 in pixels.shape:
        raise InputError("pixels must be a non-empty (height, width) uint8 array")
    if depth is None:
        depth = exact_depth(pixels)
    if depth not in (1, 2, 4, 8):
        raise InputError(f"depth must be 1, 2, 4 or 8, not {depth!r}")
    h, w = pixels.shape
    stride = (w * depth + 7) // 8
    n = h * (stride + 1)
    padded = np.empty(n + _PAD, np.uint8)
    padded[n:] = 0  # what a deflate reads past the rows' end (see _PAD) is the same on every call
    raw = padded[:n]
    if native.ready():
        native.kernels().pack_rows(np.ascontiguousarray(pixels), h, depth, raw)
    else:
        raw[:] = _pack_numpy(pixels, depth)
    ihdr = struct.pack(">IIBBBBB", w, h, depth, 0, 0, 0, 0)
    idat = _deflate(raw.data, level)  # its chunk written out: the page's bytes copied once, not twice
    return b"".join((_SIG, _chunk(b"IHDR", ihdr), struct.pack(">I", len(idat)), b"IDAT", idat,
                     struct.pack(">I", _crc32(idat, _IDAT_CRC) & 0xFFFFFFFF), _IEND))


_IDAT_CRC = zlib.crc32(b"IDAT")
_IEND = _chunk(b"IEND", b"")


def _deflate(data, level: int | None) -> bytes:
    if level is None:
        return _deflate_lib.compress(data, ZLIB_LEVEL)
    return zlib.compress(data, level)


def data_url(png: bytes) -> str:
    """Return ``png`` as a ``data:image/png;base64,...`` URL.

    Parameters
    ----------
    png : bytes
        PNG file bytes.

    Returns
    -------
    str

    Raises
    ------
    InputError
        If ``png`` is not bytes.

    Examples
    --------
    >>> data_url(b"\\x89PNG\\r\\n\\x1a\\n")
    'data:image/png;base64,iVBORw0KGgo='
    >>> data_url("iVBORw0KGgo=")
    Traceback (most recent call last):
    ...
    snapglyph.errors.InputError: png must be bytes, not str
    """
    if not isinstance(png, (bytes, bytearray, memoryview)):
        raise InputError(f"png must be bytes, not {type(png).__name__}")
    return "data:image/png;base64," + base64.b64encode(bytes(png)).decode("ascii")
