"""Deterministic PNG: a minimal writer over a fast deflate, and data URLs.

A page is grey (``(height, width)`` uint8). :func:`png_bytes` writes it as a grey PNG of the smallest exact bit
depth (1, 2, 4 or 8 bits per pixel: a page whose pixels are all multiples of 85 is written with 2 bits), with filter
0 on every row and one IDAT chunk. Nothing varies between runs: no timestamp, no text chunk, no gamma chunk.

Deflate: ISA-L's ``isal_zlib`` (the ``isal`` package, a core dependency) at level 1, else the standard library's
``zlib`` at level 1; :data:`DEFLATE` names the one in use. The bytes differ between libraries, the decoded pixels
never do (tested against Pillow). ISA-L is given the rows' first byte as history (written here as a stored block),
which skips its first step: in ISA-L 2.32.1 that step hashes the address of its own stream state
(``.write_first_byte`` in igzip/igzip_icf_body_h1_gr_bt.asm, https://github.com/intel/isa-l, read 2026-12-03), so the
same rows could deflate otherwise on another thread. The stream stays plain zlib (no preset dictionary). The
choice of library and the defect's measurements are in bench/RESULTS.md, section "Deflate library choice".
"""

from __future__ import annotations

import base64
import operator
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
_ZLIB_HEAD = b"\x78\x01"
"""A zlib stream's header (RFC 1950, section 2.2): deflate with a 32 KiB window, the fastest level, no preset
dictionary, check bits that make it a multiple of 31 (the header the standard zlib writes at level 1)."""
_STORED_ONE = b"\x00\x01\x00\xfe\xff"
"""A stored block, not the last, of one byte (RFC 1951, section 3.2.4): the header bits (BFINAL 0, BTYPE 00) padded
to a byte, then LEN 1 and its complement NLEN; the byte follows."""


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
        ``(height, width)`` uint8 grey values, height and width from 1 to 2**31 - 1 (PNG's limit), at most
        2**31 - 1 bytes of packed rows (one IDAT chunk). Read-only arrays are copied first.
    depth : int or None
        Bits per pixel (1, 2, 4, 8); None picks :func:`exact_depth`. A caller that knows its pixels are multiples
        of ``255 // (2**depth - 1)`` passes it to skip the scan; other values lose their low bits (not checked).
    level : int or None
        None: :data:`DEFLATE` at :data:`ZLIB_LEVEL`. An int: the standard library's zlib at that level (0-9).

    Returns
    -------
    bytes
        A PNG file: signature, IHDR (grey, no interlace), one IDAT, IEND.

    Raises
    ------
    InputError
        If ``pixels`` is not a non-empty 2-D uint8 array or is larger than a PNG holds, ``depth`` is not 1, 2, 4
        or 8, or ``level`` is not None or an integer from 0 to 9 (booleans are neither).

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
    if _integer(depth) not in (1, 2, 4, 8):
        raise InputError(f"depth must be 1, 2, 4 or 8, not {depth!r}")
    depth = int(depth)  # a numpy scalar would compute the stride in its own width and wrap
    if level is not None and _integer(level) not in range(10):
        raise InputError(f"level must be None or an integer from 0 to 9, not {level!r}")
    h, w = pixels.shape
    stride = (w * depth + 7) // 8
    if max(h, w) > _PNG_MAX or h * (stride + 1) > _PNG_MAX:
        raise InputError(f"a {h}x{w} page at {depth} bits is larger than one PNG IDAT holds (2**31 - 1 bytes)")
    if not pixels.flags.writeable:
        pixels = pixels.copy()  # the compiled packer takes writable arrays only
    raw = np.empty(h * (stride + 1), np.uint8)
    if native.ready():
        native.kernels().pack_rows(np.ascontiguousarray(pixels), h, depth, raw)
    else:
        raw[:] = _pack_numpy(pixels, depth)
    ihdr = struct.pack(">IIBBBBB", w, h, depth, 0, 0, 0, 0)
    parts = _deflate(raw.data, level)  # the chunk written out of its parts: the page's bytes copied once
    crc = _IDAT_CRC
    for part in parts:
        crc = _crc32(part, crc)
    return b"".join((_SIG, _chunk(b"IHDR", ihdr), struct.pack(">I", sum(map(len, parts))), b"IDAT", *parts,
                     struct.pack(">I", crc & 0xFFFFFFFF), _IEND))


_PNG_MAX = 2**31 - 1
"""PNG's largest width, height and chunk length (PNG specification, 3rd edition, section 5.3 and 11.2.1:
https://www.w3.org/TR/png-3/, read 2026-12-03)."""
_IDAT_CRC = zlib.crc32(b"IDAT")


def _integer(value) -> int | None:
    """``value`` as a Python int if it is an integer other than a bool (numpy's too), else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None
_IEND = _chunk(b"IEND", b"")


def _deflate(data: memoryview, level: int | None) -> tuple:
    """The zlib stream of ``data`` (a page's packed rows, at least 1 byte), in parts to write one after another."""
    if level is not None:
        return (zlib.compress(data, level),)
    if _deflate_lib is zlib:  # pragma: no cover - isal is a core dependency
        return (zlib.compress(data, ZLIB_LEVEL),)
    return _isal_zlib(data)


def _isal_zlib(data: memoryview) -> tuple:
    """ISA-L's deflate of ``data`` as one zlib stream, its first byte stored so that ISA-L starts with history (see
    the module's docstring: the faulty first step is skipped)."""
    first = data[:1]
    comp = _deflate_lib.compressobj(ZLIB_LEVEL, _deflate_lib.DEFLATED, -15, zdict=first)
    body = comp.compress(data[1:])
    return (_ZLIB_HEAD, _STORED_ONE, first, body, comp.flush(),
            struct.pack(">I", _deflate_lib.adler32(data) & 0xFFFFFFFF))


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
        If ``png`` is not bytes, or they do not start with PNG's signature.

    Examples
    --------
    >>> data_url(b"\\x89PNG\\r\\n\\x1a\\n")
    'data:image/png;base64,iVBORw0KGgo='
    >>> data_url("iVBORw0KGgo=")
    Traceback (most recent call last):
    ...
    snapglyph.errors.InputError: png must be bytes, not str
    >>> data_url(b"<html>")
    Traceback (most recent call last):
    ...
    snapglyph.errors.InputError: png does not start with PNG's signature (got b'<html>')
    """
    if not isinstance(png, (bytes, bytearray, memoryview)):
        raise InputError(f"png must be bytes, not {type(png).__name__}")
    if bytes(png[:8]) != _SIG:
        raise InputError(f"png does not start with PNG's signature (got {bytes(png[:8])!r})")
    return "data:image/png;base64," + base64.b64encode(bytes(png)).decode("ascii")
