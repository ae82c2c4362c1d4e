"""What an image payload really is: its format and size read from the bytes, never from the label it came with.

Providers check the bytes of every base64 image against its declared media type and refuse what they cannot read,
and one such image in the history makes every later request of a session fail. Anthropic takes JPEG, PNG, GIF and
WebP ("The image was specified using the image/png media type, but the image appears to be a image/jpeg image";
platform.claude.com/docs/en/build-with-claude/vision, read 2026-11-30); OpenAI takes PNG, JPEG, WebP and
non-animated GIF (developers.openai.com/api/docs/guides/images-vision, read 2026-11-30). Pillow reads only the
header (:func:`PIL.Image.open` is lazy), so checking an image costs its base64 decode, not a decompression.
"""

from __future__ import annotations

import base64
import binascii
import io
import struct
import warnings
from dataclasses import dataclass

__all__ = ["ImageCheck", "SUPPORTED_MEDIA_TYPES", "check_image", "downscale"]

#: The image media types every supported provider accepts, by Pillow format name.
SUPPORTED_MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}

#: Leading bytes of common payloads that are not images, and what to call them.
_NOT_IMAGES = ((b"%PDF-", "a PDF document"), (b"<!doctype html", "an HTML document"), (b"<html", "an HTML document"),
               (b"<svg", "an SVG document"), (b"<?xml", "an XML document"), (b"{", "JSON text"),
               (b"PK\x03\x04", "a ZIP archive"))


@dataclass(frozen=True)
class ImageCheck:
    """What the bytes of a base64 image payload are.

    Attributes
    ----------
    media_type : str or None
        The media type the bytes are (one of :data:`SUPPORTED_MEDIA_TYPES`), ``None`` when they are no image a
        provider takes.
    width, height : int or None
        Pixel size from the header, where the bytes are an image.
    nbytes : int
        Size in bytes of the decoded payload (0 when it does not decode).
    problem : str
        Why the payload cannot be sent as an image (empty when it can), e.g. ``"an HTML document, not an image"``.

    Examples
    --------
    >>> from PIL import Image
    >>> buf = io.BytesIO(); Image.new("L", (40, 30)).save(buf, format="GIF")
    >>> c = check_image(base64.b64encode(buf.getvalue()).decode())
    >>> c.media_type, c.width, c.height, c.problem
    ('image/gif', 40, 30, '')
    >>> check_image(base64.b64encode(b"%PDF-1.4").decode())
    ImageCheck(media_type=None, width=None, height=None, nbytes=8, problem='a PDF document, not an image')
    """

    media_type: str | None
    width: int | None
    height: int | None
    nbytes: int
    problem: str = ""


def _decode(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _what(raw: bytes) -> str:
    head = raw[:64].lstrip().lower()
    return next((name for sig, name in _NOT_IMAGES if head.startswith(sig.lower())), "bytes of no image format")


def check_image(data: str) -> ImageCheck:
    """Read a base64 image payload's real format and size from its bytes (Pillow reads the header only).

    Parameters
    ----------
    data : str
        Base64 text, no ``data:`` prefix.

    Returns
    -------
    ImageCheck
        ``problem`` is empty exactly when the bytes are a PNG, JPEG, GIF or WebP image Pillow can read the header
        of; ``media_type`` then names the format the bytes are, whatever the payload was labelled.

    Examples
    --------
    >>> png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="
    >>> check_image(png)
    ImageCheck(media_type='image/png', width=1, height=1, nbytes=67, problem='')
    >>> check_image(base64.b64encode(b"<!DOCTYPE html><html>").decode()).problem
    'an HTML document, not an image'
    >>> check_image("not base64!").problem
    'base64 that does not decode'
    """
    if not isinstance(data, str) or not data:
        return ImageCheck(None, None, None, 0, "an empty payload")
    raw = _decode(data)
    if raw is None:
        return ImageCheck(None, None, None, 0, "base64 that does not decode")
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(io.BytesIO(raw)) as im:
                fmt, (w, h) = im.format, im.size
    except Image.DecompressionBombError:
        return ImageCheck(None, None, None, len(raw), "an image of more pixels than any provider takes")
    except (OSError, SyntaxError, ValueError, EOFError, IndexError, struct.error):
        # the kinds Pillow's header parsers raise for bytes they cannot read
        return ImageCheck(None, None, None, len(raw), f"{_what(raw)}, not an image")
    mt = SUPPORTED_MEDIA_TYPES.get(fmt or "")
    if mt is None:
        return ImageCheck(None, w, h, len(raw), f"a {fmt} image, a format providers do not take")
    return ImageCheck(mt, w, h, len(raw))


def _encode(im, fmt: str) -> bytes:
    buf = io.BytesIO()
    if fmt == "JPEG":
        im.convert("RGB").save(buf, format="JPEG", quality=85, optimize=False)
    else:
        im.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def downscale(data: str, *, max_side: int | None, max_b64_bytes: int) -> tuple[str, str, int, int] | None:
    """A new image made from the source image ``data``, within ``max_side`` pixels a side and ``max_b64_bytes``.

    The image is decoded from its own bytes (never from an earlier rendering), resized with Lanczos, aspect kept,
    and encoded again: a JPEG stays JPEG (quality 85), anything else becomes PNG, and a PNG still too large
    becomes a JPEG; the size shrinks by steps until the base64 text fits. Deterministic for the same input.

    Parameters
    ----------
    data : str
        Base64 of a PNG, JPEG, GIF or WebP image.
    max_side : int or None
        Longest side allowed, in pixels (``None``: no side limit).
    max_b64_bytes : int
        Largest base64 length allowed, in bytes.

    Returns
    -------
    (data, media_type, width, height) or None
        The new image as base64, its media type and size in pixels; ``None`` when the bytes do not decode as an
        image or no size of at least 16 px fits.

    Examples
    --------
    >>> from PIL import Image
    >>> buf = io.BytesIO(); Image.new("RGB", (300, 120), (9, 99, 199)).save(buf, format="PNG")
    >>> out = downscale(base64.b64encode(buf.getvalue()).decode(), max_side=100, max_b64_bytes=10_000)
    >>> out[1:]
    ('image/png', 100, 40)
    """
    raw = _decode(data)
    if raw is None:
        return None
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(io.BytesIO(raw)) as src:
                fmt = "JPEG" if src.format == "JPEG" else "PNG"
                im = src.convert("RGBA" if src.mode in ("RGBA", "LA", "P", "PA") else "RGB")
    except (Image.DecompressionBombError, OSError, SyntaxError, ValueError, EOFError, IndexError, struct.error):
        return None
    w, h = im.size
    scale = min(1.0, (max_side or max(w, h)) / max(w, h))
    while True:
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        small = im.resize(size, Image.Resampling.LANCZOS) if size != (w, h) else im
        for f in (fmt, "JPEG") if fmt == "PNG" else (fmt,):
            b64 = base64.b64encode(_encode(small, f)).decode("ascii")
            if len(b64) <= max_b64_bytes:
                return b64, SUPPORTED_MEDIA_TYPES[f], size[0], size[1]
        if max(size) <= 16:
            return None
        scale *= max(0.5, min(0.9, (max_b64_bytes / len(b64)) ** 0.5))
