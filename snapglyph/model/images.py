"""What an image payload really is: its format and size read from the bytes, never from the label it came with.

Providers check the bytes of every base64 image against its declared media type and refuse what they cannot read,
and one such image in the history makes every later request of a session fail. Anthropic takes JPEG, PNG, GIF and
WebP ("The image was specified using the image/png media type, but the image appears to be a image/jpeg image";
platform.claude.com/docs/en/build-with-claude/vision, read 2026-11-30); OpenAI takes PNG, JPEG, WebP and
non-animated GIF (developers.openai.com/api/docs/guides/images-vision, read 2026-11-30); Gemini takes PNG, JPEG,
WebP, HEIC and HEIF but no GIF (:data:`DIALECT_MEDIA_TYPES`). Pillow reads only the header (:func:`PIL.Image.open`
is lazy), so checking an image costs its base64 decode, not a decompression, and reading its size
(:func:`image_size`) only the decode of its first bytes. The one place image headers are read.
"""

from __future__ import annotations

import base64
import binascii
import io
import struct
import warnings
from dataclasses import dataclass

from .._config import IMAGE_HEAD_CHARS

__all__ = ["DIALECT_MEDIA_TYPES", "SUPPORTED_MEDIA_TYPES", "ImageCheck", "check_image", "downscale", "image_size",
           "media_types"]

#: The image media types the OpenAI and Anthropic dialects' providers accept, by Pillow format name.
SUPPORTED_MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}

#: Dialects whose provider takes fewer of :data:`SUPPORTED_MEDIA_TYPES`. Gemini: "PNG, JPEG, WEBP, HEIC, HEIF"
#: (ai.google.dev/gemini-api/docs/image-understanding#supported-formats, as cited in microsoft/vscode#286628; a GIF
#: gets ``400 Unsupported MIME type: image/gif``, Mai-with-u/MaiBot#1435, and so does the alias ``image/jpg``,
#: ogkalu2/comic-translate#399; read 2026-12-01). HEIC and HEIF are left out: Pillow reads neither without a plugin.
DIALECT_MEDIA_TYPES = {"gemini": frozenset({"image/png", "image/jpeg", "image/webp"})}


def media_types(dialect: str | None) -> frozenset[str]:
    """The image media types the provider of ``dialect`` takes (``None``: those every dialect but Gemini takes).

    Examples
    --------
    >>> sorted(media_types("gemini")), "image/gif" in media_types("anthropic")
    (['image/jpeg', 'image/png', 'image/webp'], True)
    """
    return DIALECT_MEDIA_TYPES.get(dialect or "", frozenset(SUPPORTED_MEDIA_TYPES.values()))

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


#: What Pillow's header readers raise for bytes they cannot read (truncated, corrupt or of no known format).
_UNREADABLE = (OSError, SyntaxError, ValueError, EOFError, IndexError, struct.error)


def _read_header(raw: bytes) -> tuple[str | None, int, int]:
    """Pillow's format name and the ``(width, height)`` in pixels from the header of ``raw``; nothing is
    decompressed. Raises one of :data:`_UNREADABLE`, or ``PIL.Image.DecompressionBombError`` past Pillow's pixel
    limit."""
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Image.open(io.BytesIO(raw)) as im:
            return im.format, im.size[0], im.size[1]


def image_size(data: str) -> tuple[int, int] | None:
    """Read the pixel size ``(width, height)`` of a base64 PNG, JPEG, GIF or WebP payload from its header.

    Pillow reads the header (:func:`PIL.Image.open` is lazy) from the first :data:`~snapglyph._config.IMAGE_HEAD_CHARS`
    base64 characters; where that is not enough (a JPEG whose frame header follows a large ICC profile; a WebP,
    which Pillow reads whole) four times as many are decoded, up to the whole payload.

    Parameters
    ----------
    data : str
        Base64 text, no ``data:`` prefix; characters outside the base64 alphabet (line breaks) are skipped.

    Returns
    -------
    tuple of int, or None
        ``None`` when the payload does not decode, is no image of those four formats, or has more pixels than
        Pillow opens (:func:`check_image` names that problem).

    Examples
    --------
    >>> image_size("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==")
    (1, 1)
    >>> image_size(base64.b64encode(b"GIF89a not really").decode()) is None
    True
    """
    if not isinstance(data, str) or not data:
        return None
    from PIL import Image

    n = IMAGE_HEAD_CHARS
    while True:
        head = data[:n]
        try:
            fmt, w, h = _read_header(base64.b64decode(head + "=" * (-len(head) % 4), validate=False))
            return (w, h) if fmt in SUPPORTED_MEDIA_TYPES else None
        except Image.DecompressionBombError:
            return None
        except (binascii.Error, *_UNREADABLE):
            if n >= len(data):
                return None
            n *= 4


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
        fmt, w, h = _read_header(raw)
    except Image.DecompressionBombError:
        return ImageCheck(None, None, None, len(raw), "an image of more pixels than any provider takes")
    except _UNREADABLE:
        return ImageCheck(None, None, None, len(raw), f"{_what(raw)}, not an image")
    mt = SUPPORTED_MEDIA_TYPES.get(fmt or "")
    if mt is None:
        return ImageCheck(None, w, h, len(raw), f"a {fmt} image, a format providers do not take")
    return ImageCheck(mt, w, h, len(raw))


def _encode(im, fmt: str, colors: int | None = None) -> bytes:
    """``im`` encoded compactly: a PNG in the image's own kind of mode (an image whose source had at most 256 colors
    quantized back to at most ``colors``, without dithering), a JPEG at quality 85 in its own mode (gray stays
    gray). zlib level 6: on a 2000x1462 gray screenshot level 9 or ``optimize`` saved 1% for 3-10x the time
    (2026-12-07)."""
    from PIL import Image

    buf = io.BytesIO()
    if fmt == "JPEG":
        im.convert("L" if im.mode in ("L", "LA") else "RGB").save(buf, format="JPEG", quality=85)
    else:
        if colors:
            method = Image.Quantize.FASTOCTREE if im.mode in ("RGBA", "LA") else Image.Quantize.MEDIANCUT
            im = (im.convert("RGBA") if im.mode == "LA" else im).quantize(colors=colors, method=method,
                                                                        dither=Image.Dither.NONE)
        im.save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def _working_mode(mode: str) -> str:
    """The mode an image is resized in: gray stays gray (``1``, ``L``, ``I``, ``I;16``, ``F`` become ``L``; ``LA``
    keeps its alpha), a palette or RGBA image with transparency RGBA, the rest RGB."""
    if mode in ("1", "L", "I", "I;16", "F"):
        return "L"
    if mode in ("LA", "La"):
        return "LA"
    return "RGBA" if mode in ("RGBA", "PA", "P", "RGBa") else "RGB"


def downscale(data: str, *, max_side: int | None, max_b64_bytes: int) -> tuple[str, str, int, int] | None:
    """A new image made from the source image ``data``, within ``max_side`` pixels a side and ``max_b64_bytes``.

    The image is decoded from its own bytes (never from an earlier rendering), resized with Lanczos, aspect kept,
    in its own kind of mode (gray stays gray, a palette image gets a palette again, alpha is kept where there was
    one), and encoded compactly (:func:`_encode`): a JPEG stays JPEG (quality 85), anything else becomes PNG, and a
    PNG still too large becomes a JPEG; the size shrinks by steps until the base64 text fits. Deterministic for the
    same input. (A 454 KB grayscale screenshot fitted to 2000 px came out as a 2.9 MB RGB PNG before this rule,
    0.35 MB gray now: tests/test_byte_limits.py.)

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
                palette = src.mode in ("P", "PA")
                few = src.getcolors(256) if src.mode in ("P", "PA", "L", "LA", "RGB", "RGBA", "1") else None
                colors = max(2, len(few)) if few else None
                mode = _working_mode(src.mode)
                if palette and mode == "RGBA" and "transparency" not in src.info and src.mode == "P":
                    mode = "RGB"
                im = src.convert(mode) if src.mode not in ("I", "I;16", "F") else src.point(lambda v: v / 256).convert("L")
    except (Image.DecompressionBombError, *_UNREADABLE):
        return None
    w, h = im.size
    scale = min(1.0, (max_side or max(w, h)) / max(w, h))
    while True:
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        small = im.resize(size, Image.Resampling.LANCZOS) if size != (w, h) else im
        for f in (fmt, "JPEG") if fmt == "PNG" else (fmt,):
            b64 = base64.b64encode(_encode(small, f, colors)).decode("ascii")
            if len(b64) <= max_b64_bytes:
                return b64, SUPPORTED_MEDIA_TYPES[f], size[0], size[1]
        if max(size) <= 16:
            return None
        scale *= max(0.5, min(0.9, (max_b64_bytes / len(b64)) ** 0.5))
