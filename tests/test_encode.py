"""The PNG writer: exact round trip through Pillow at every bit depth, determinism, data URLs."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from snapglyph import InputError
from snapglyph.raster.encode import data_url, exact_depth, png_bytes


def _decode(png: bytes) -> np.ndarray:
    im = Image.open(io.BytesIO(png))
    im.load()
    return np.asarray(im.convert("L"))


@pytest.mark.parametrize("depth,step", [(1, 255), (2, 85), (4, 17), (8, 1)])
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (28, 29), (37, 1092)])
def test_roundtrip_every_depth(depth, step, shape):
    rng = np.random.default_rng(sum(shape) * depth)
    px = (rng.integers(0, 255 // step + 1, size=shape) * step).astype(np.uint8)
    png = png_bytes(px)
    assert exact_depth(px) <= depth
    assert np.array_equal(_decode(png), px)
    assert np.array_equal(_decode(png_bytes(px, depth=depth)), px)
    assert png_bytes(px) == png_bytes(px.copy())


def test_no_metadata_chunks():
    png = png_bytes(np.zeros((4, 4), np.uint8))
    kinds = []
    pos = 8
    while pos < len(png):
        n = int.from_bytes(png[pos:pos + 4], "big")
        kinds.append(png[pos + 4:pos + 8])
        pos += 12 + n
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]


def test_errors_and_data_url():
    with pytest.raises(InputError):
        png_bytes(np.zeros((2, 2, 3), np.uint8))
    with pytest.raises(InputError):
        png_bytes(np.zeros((2, 2), np.float32))
    with pytest.raises(InputError):
        png_bytes(np.zeros((2, 2), np.uint8), depth=3)
    png = png_bytes(np.zeros((2, 2), np.uint8))
    url = data_url(png)
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == png


@pytest.mark.parametrize("width", [1, 3, 1091, 1092])
@pytest.mark.parametrize("depth", [1, 2, 4, 8])
def test_numpy_packer_matches_kernel(depth, width):
    from snapglyph.raster._pack_kernels import pack_rows
    from snapglyph.raster.encode import _pack_numpy

    rng = np.random.default_rng(depth)
    px = rng.integers(0, 256, size=(13, width)).astype(np.uint8)
    stride = (width * depth + 7) // 8
    raw = np.full(13 * (stride + 1) + 5, 7, np.uint8)  # 5 bytes past the rows: never written
    assert pack_rows(px, 11, depth, raw) == 11 * (stride + 1)  # the first 11 of 13 rows
    assert np.array_equal(raw[:11 * (stride + 1)], _pack_numpy(px[:11], depth))
    assert (raw[11 * (stride + 1):] == 7).all()


@pytest.mark.parametrize("depth", [np.uint8(4), np.int64(4), 4])
def test_numpy_integer_depth_is_the_int(depth):
    """A numpy uint8 depth computed the stride in uint8 (400 bits wrapped to 144) and the packer wrote past the rows
    (a crash, found by a fresh-eyes test); it is now the int it names."""
    px = np.full((2, 100), 255, np.uint8)
    px[1, ::3] = 17
    png = png_bytes(px, depth=depth)
    assert png == png_bytes(px, depth=4) and np.array_equal(_decode(png), px)


@pytest.mark.parametrize("kw", [dict(depth=2.0), dict(depth=np.float64(4)), dict(depth=True), dict(level=10),
                                dict(level=-1), dict(level="1"), dict(level=1.5), dict(level=True),
                                dict(level=2**40)])
def test_bad_depth_or_level_is_an_input_error(kw):
    with pytest.raises(InputError) as e:
        png_bytes(np.zeros((2, 2), np.uint8), **kw)
    assert "\n" not in str(e.value)


def test_read_only_pixels_encode_as_writable_ones():
    """The compiled packer refused read-only arrays (np.asarray of a Pillow image, np.frombuffer): InternalError."""
    px = np.zeros((3, 40), np.uint8)
    px[1, 5:9] = 255
    ro = px.copy()
    ro.flags.writeable = False
    assert png_bytes(ro) == png_bytes(px) and np.array_equal(_decode(png_bytes(ro)), px)
    assert png_bytes(np.broadcast_to(px[:1], (3, 40))) == png_bytes(np.repeat(px[:1], 3, axis=0))


def test_pages_larger_than_a_png_are_refused_before_any_work():
    big = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=(1, 2**31), strides=(0, 0))
    with pytest.raises(InputError, match="larger than one PNG IDAT"):
        png_bytes(big, depth=8)


def test_data_url_wants_a_png():
    with pytest.raises(InputError, match="signature"):
        data_url(b"<html>")
    with pytest.raises(InputError, match="signature"):
        data_url(b"")
    assert data_url(png_bytes(np.zeros((1, 1), np.uint8))).startswith("data:image/png;base64,iVBORw0KGgo")
