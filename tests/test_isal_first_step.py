"""ISA-L's first step hashes the stream's own address, and the PNG writer's deflate steps around it.

snapglyph.raster.encode's docstring has the defect: ISA-L (2.32.1, as python-isal 1.9.1 bundles it) at level 1 hashes
the address of its ``isal_zstream`` (bits 16 to 47) where it means the input's bytes 2 to 5, so the output for the
same rows depends on where python-isal's stack puts that struct. A test cannot move python-isal's stack, so this
harness drives ISA-L's C API (``isal_deflate_init``, ``isal_deflate_set_dict``, ``isal_deflate``, exported by the
``isal_zlib`` extension) through ctypes with the struct placed at chosen 64 KiB-aligned addresses, calling it as
python-isal does (``isal_zlib.compress`` for the plain path; ``compressobj``'s ``compress`` and ``flush`` for the
path the writer uses). It first checks itself: at an ordinary address its plain output must equal
``isal_zlib.compress`` and its dictionary output the writer's, else the ISA-L build is not the one it knows and the
tests skip.
"""

from __future__ import annotations

import ctypes
import mmap
import platform
import struct
import zlib

import numpy as np
import pytest

isal_zlib = pytest.importorskip("isal.isal_zlib")
if platform.system() != "Linux" or platform.machine() != "x86_64":
    pytest.skip("the harness knows ISA-L's struct layout on x86-64 Linux only", allow_module_level=True)

from snapglyph.raster import _pack_kernels, encode

LEVEL_BUF = 4 * 1024 + 2 * 8 * 1024 + 4 * 64 * 1024
"""ISAL_DEF_LVL1_LARGE (include/igzip_lib.h): the level buffer python-isal gives level 1 by default."""
SLOT = 1 << 17
"""Room for one ``struct isal_zstream`` (82,384 bytes on x86-64 in ISA-L 2.32)."""
# Offsets in struct isal_zstream (include/igzip_lib.h, x86-64; the same ones ISA-L's level-1 body reads).
NEXT_IN, AVAIL_IN, NEXT_OUT, AVAIL_OUT = 0, 8, 16, 24
LEVEL, LEVEL_BUF_SIZE, LEVEL_BUF_PTR = 40, 44, 48
END_OF_STREAM, FLUSH, GZIP_FLAG, HIST_BITS = 56, 58, 60, 62
NO_FLUSH, FULL_FLUSH, IGZIP_DEFLATE, IGZIP_ZLIB = 0, 2, 0, 3


def _crc32c(word: int) -> int:
    """SSE4.2's ``crc32`` of a 32-bit word from 0: the hash ISA-L's level 1 takes."""
    crc = 0
    for byte in word.to_bytes(4, "little"):
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc


class _Harness:
    def __init__(self) -> None:
        lib = ctypes.CDLL(isal_zlib.__file__)
        self.init, self.deflate, self.set_dict = lib.isal_deflate_init, lib.isal_deflate, lib.isal_deflate_set_dict
        for f in (self.init, self.deflate, self.set_dict):
            f.restype = ctypes.c_int
        noreserve = getattr(mmap, "MAP_NORESERVE", 0x4000)  # Linux's value; Python names it from 3.12
        self.region = mmap.mmap(-1, 1 << 32, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | noreserve)
        self.base = (ctypes.addressof(ctypes.c_char.from_buffer(self.region)) + 0xFFFF) & ~0xFFFF
        self.level_buf = ctypes.create_string_buffer(LEVEL_BUF)
        self.out = ctypes.create_string_buffer(1 << 21)

    def slot(self, k: int) -> int:
        return self.base + (k << 16)

    def _call(self, zst: int, data: ctypes.Array, start: int, n: int, flush: int, end: int, out_at: int) -> int:
        put = lambda off, fmt, v: struct.pack_into(fmt, (ctypes.c_char * 64).from_address(zst), off, v)
        put(NEXT_IN, "<Q", ctypes.addressof(data) + start)
        put(AVAIL_IN, "<I", n)
        put(FLUSH, "<H", flush)
        put(END_OF_STREAM, "<H", end)
        length, written = 16 * 1024, 0  # python-isal's output buffer: 16 KiB, then doubled while it fills
        while True:
            put(NEXT_OUT, "<Q", ctypes.addressof(self.out) + out_at + written)
            put(AVAIL_OUT, "<I", length - written)
            assert self.deflate(ctypes.c_void_p(zst)) == 0
            written = struct.unpack_from("<Q", (ctypes.c_char * 8).from_address(zst + NEXT_OUT))[0] \
                - ctypes.addressof(self.out) - out_at
            if written < length:
                return written
            length *= 2

    def compress(self, k: int, rows: bytes, *, with_dict: bool) -> bytes:
        """ISA-L level 1 of ``rows`` with its stream state at slot ``k``: as ``isal_zlib.compress(rows, 1)``, or
        (``with_dict``) as the writer's raw deflate of ``rows[1:]`` after the dictionary ``rows[:1]``."""
        zst = self.slot(k)
        ctypes.memset(zst, 0, SLOT)
        self.init(ctypes.c_void_p(zst))
        put = lambda off, fmt, v: struct.pack_into(fmt, (ctypes.c_char * 64).from_address(zst), off, v)
        put(LEVEL, "<I", 1)
        put(LEVEL_BUF_SIZE, "<I", LEVEL_BUF)
        put(LEVEL_BUF_PTR, "<Q", ctypes.addressof(self.level_buf))
        put(HIST_BITS, "<H", 15)
        put(GZIP_FLAG, "<H", IGZIP_DEFLATE if with_dict else IGZIP_ZLIB)
        data = ctypes.create_string_buffer(rows, len(rows))
        if not with_dict:
            n = self._call(zst, data, 0, len(rows), FULL_FLUSH, 1, 0)
            return self.out.raw[:n]
        assert self.set_dict(ctypes.c_void_p(zst), data, 1) == 0
        a = self._call(zst, data, 1, len(rows) - 1, NO_FLUSH, 0, 0)  # compressobj.compress
        b = self._call(zst, data, 0, 0, FULL_FLUSH, 1, a)  # compressobj.flush(Z_FINISH)
        return self.out.raw[:a + b]


@pytest.fixture(scope="module")
def harness() -> _Harness:
    try:
        return _Harness()
    except (OSError, AttributeError, ValueError) as e:  # symbols not exported, or no 4 GiB of address space
        pytest.skip(f"cannot drive ISA-L's C API here: {e}")


def _page_rows() -> bytes:
    """A white page's packed rows with a little text: row 0 starts 00 FF FF FF FF like every light page."""
    from snapglyph.model.document import Document
    from snapglyph.raster.render import render_document

    page = render_document(Document.from_text("def f(x):\n    return x * 2  # the first step\n" * 40))[0]
    h, w = page.pixels.shape
    raw = np.empty(h * ((w * 2 + 7) // 8 + 1), np.uint8)
    _pack_kernels.pack_rows(page.pixels, h, 2, raw)
    return raw.tobytes()


def _slots(harness: _Harness, rows: bytes, n_other: int) -> tuple[list[int], list[int]]:
    """Slots whose address hashes to the bucket of rows[2:6] (where the first step's slip shows), and others."""
    bucket = _crc32c(int.from_bytes(rows[2:6], "little")) & 0x1FFF
    hit, other = [], []
    for k in range(65535):
        addr_hash = _crc32c((harness.slot(k) >> 16) & 0xFFFFFFFF) & 0x1FFF
        if addr_hash == bucket:
            hit.append(k)
        elif len(other) < n_other and k % 101 == 0:
            other.append(k)
        if len(hit) >= 3 and len(other) >= n_other:
            break
    return hit, other


def test_harness_matches_python_isal(harness):
    rows = _page_rows()
    if harness.compress(1, rows, with_dict=False) != isal_zlib.compress(rows, 1):
        pytest.skip("this ISA-L build is not the one the harness drives (isal_zlib.compress differs)")
    writer = b"".join(encode._isal_zlib(memoryview(rows)))
    assert harness.compress(1, rows, with_dict=True) == writer[8:-4]  # less the header, stored byte and adler32


def test_plain_first_step_depends_on_the_stream_address(harness):
    """The defect itself (the reason for the writer's stored first byte): at slots whose address hashes to the
    bucket of the rows' bytes 2 to 5 the plain output differs from the one at other slots."""
    rows = _page_rows()
    hit, other = _slots(harness, rows, 4)
    assert hit and other
    plain_other = {harness.compress(k, rows, with_dict=False) for k in other}
    assert len(plain_other) == 1
    plain_hit = {harness.compress(k, rows, with_dict=False) for k in hit}
    if plain_hit <= plain_other:
        pytest.skip("this ISA-L no longer hashes the stream's address: encode._isal_zlib's stored byte can go")
    assert zlib.decompress(plain_hit.pop()) == rows  # another valid stream of the same rows


def test_writer_deflate_does_not_depend_on_the_stream_address(harness):
    rows = _page_rows()
    hit, other = _slots(harness, rows, 4)
    outs = {harness.compress(k, rows, with_dict=True) for k in hit + other}
    writer = b"".join(encode._isal_zlib(memoryview(rows)))
    assert outs == {writer[8:-4]}
    assert zlib.decompress(writer) == rows
    assert writer[:7] == b"\x78\x01\x00\x01\x00\xfe\xff" and writer[7:8] == rows[:1]
    assert writer[-4:] == struct.pack(">I", zlib.adler32(rows))
