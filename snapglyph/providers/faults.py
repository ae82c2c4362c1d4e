"""A fault a provider would reject, and the checks of image payloads every dialect's walker shares.

:class:`Fault` is what :func:`snapglyph.validate` returns; :func:`image_faults` and :func:`data_url_image` check a
base64 image's bytes against the media type it is labelled with (:func:`snapglyph.model.images.check_image`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model.images import check_image

__all__ = ["Fault", "blocks", "data_url_image", "image_faults"]


@dataclass(frozen=True)
class Fault:
    """One thing a provider would reject.

    Attributes
    ----------
    index : int or None
        Index of the message (or input item) at fault; ``None`` for the request as a whole.
    text : str
        What is wrong, in the provider's terms.

    Examples
    --------
    >>> from snapglyph import validate
    >>> faults = validate({"model": "m", "max_tokens": 10, "messages": [{"role": "assistant", "content": "hi"}]},
    ...                   "anthropic")
    >>> faults
    [Fault(index=0, text='first message must use the "user" role')]
    >>> str(faults[0]), str(Fault(None, "request body too large"))
    ('messages[0]: first message must use the "user" role', 'request body too large')
    """

    index: int | None
    text: str

    def __str__(self) -> str:
        return f"messages[{self.index}]: {self.text}" if self.index is not None else self.text


def blocks(content: Any) -> list[dict]:
    """The dict blocks of a message's content (a string is one text block).

    Examples
    --------
    >>> blocks("hi"), blocks([{"type": "text", "text": "a"}, 3])
    ([{'type': 'text', 'text': 'hi'}], [{'type': 'text', 'text': 'a'}])
    """
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def image_faults(i: int, data: str, declared: str | None, where: str, out: list[Fault]) -> None:
    """Append to ``out`` the faults of a base64 image (message ``i``, part ``where``) whose bytes are no image a
    provider takes, or not the ``declared`` media type.

    Examples
    --------
    >>> out = []
    >>> image_faults(0, "PGh0bWw+", "image/png", "content[0]", out)
    >>> out[0].text.startswith("content[0]: Could not process image")
    True
    >>> image_faults(0, "", "image/png", "content[1]", out)
    >>> out[1].text
    'content[1]: image data is empty'
    """
    if not isinstance(data, str) or not data.strip():
        out.append(Fault(i, f"{where}: image data is empty"))
        return
    found = check_image(data)
    if found.problem:
        out.append(Fault(i, f"{where}: Could not process image: the bytes are {found.problem}"))
    elif declared is not None and declared != found.media_type:
        out.append(Fault(i, f"{where}: The image was specified using the {declared} media type, but the image "
                            f"appears to be a {found.media_type} image"))


def data_url_image(i: int, url: Any, where: str, out: list[Fault]) -> str:
    """The base64 payload of a ``data:`` URL (checked into ``out``), or ``""`` for another URL.

    Examples
    --------
    >>> out = []
    >>> data_url_image(0, "https://x/y.png", "image_url", out), data_url_image(0, "data:image/png,raw", "u", out)
    ('', '')
    >>> out[0].text
    'u: an image data URL must be base64 (data:<media type>;base64,...)'
    >>> data_url_image(0, "", "image_url", out), out[1].text
    ('', 'image_url: the image URL is empty')
    """
    if not isinstance(url, str) or not url.strip():
        out.append(Fault(i, f"{where}: the image URL is empty"))
        return ""
    if not url.startswith("data:"):
        return ""
    head, _, data = url.partition(",")
    if ";base64" not in head:
        out.append(Fault(i, f"{where}: an image data URL must be base64 (data:<media type>;base64,...)"))
        return ""
    image_faults(i, data, head[5:].split(";")[0], where, out)
    return data
