"""Image sizes read from base64 headers by Pillow (snapglyph.model.images.image_size): formats, late headers,
prefix-only decoding, and None for what is no image a provider takes."""

from __future__ import annotations

import base64
import io

from PIL import Image

from snapglyph import from_request
from snapglyph._config import IMAGE_HEAD_CHARS
from snapglyph.model import images
from snapglyph.model.images import check_image, image_size


def _b64(fmt: str, size: tuple[int, int] = (37, 23), **kw) -> str:
    buf = io.BytesIO()
    im = Image.new("RGB", size, (200, 30, 90))
    (im.convert("P") if fmt == "GIF" else im).save(buf, format=fmt, **kw)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def test_each_format_providers_take():
    for fmt in ("PNG", "JPEG", "GIF", "WEBP"):
        assert image_size(_b64(fmt)) == (37, 23), fmt
        assert check_image(_b64(fmt)).width == 37


def test_progressive_jpeg_with_a_late_frame_header():
    raw = base64.b64decode(_b64("JPEG", (640, 480), progressive=True, icc_profile=b"\0" * 60_000))
    sof = raw.find(b"\xff\xc2")  # the progressive frame header, after the 60 KB ICC profile
    assert sof > 60_000
    data = base64.b64encode(raw).decode()
    assert image_size(data[:IMAGE_HEAD_CHARS]) is None  # the first prefix alone holds no frame header
    assert image_size(data) == (640, 480)


def test_only_a_prefix_is_decoded(monkeypatch):
    decoded: list[int] = []
    real = base64.b64decode

    def spy(s, *a, **kw):
        decoded.append(len(s))
        return real(s, *a, **kw)

    monkeypatch.setattr(images.base64, "b64decode", spy)
    data = _b64("PNG", (300, 300), optimize=False) + "A" * 400_000  # a long payload: only its head is read
    assert image_size(data) == (300, 300)
    assert decoded == [IMAGE_HEAD_CHARS]


def test_line_broken_base64():
    data = _b64("PNG", (64, 9))
    wrapped = "\n".join(data[i:i + 76] for i in range(0, len(data), 76))
    assert image_size(wrapped) == (64, 9)


def test_none_where_no_image_a_provider_takes():
    assert image_size("") is None
    assert image_size("not base64 at all!") is None
    assert image_size(base64.b64encode(b"<!DOCTYPE html><html>").decode()) is None
    assert image_size(_b64("BMP")) is None  # Pillow reads it, no provider takes it
    png = base64.b64decode(_b64("PNG"))
    assert image_size(base64.b64encode(png[:30]).decode()) is None  # cut inside its first chunk


def test_readers_size_webp_parts():
    body = {"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/webp;base64," + _b64("WEBP", (51, 17))}}]}]}
    part = from_request(body).messages[0].parts[0]
    assert (part.kind, part.media_type, part.width, part.height) == ("image", "image/webp", 51, 17)
