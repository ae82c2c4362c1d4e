"""How the simulator counts what it received: its own text tokenizer and the images' published costs.

Counting is deliberately independent of the client: text is counted by :func:`count_text` (a word/punctuation
counter written here, no code shared with snapglyph's estimator), images by reading the PNG header from the base64
data and applying the published formula of a snapglyph reader profile
(``snapglyph.profile("claude").image_tokens(w, h)``), the only code shared with the client side.

Every dialect's request is first turned into chat-like messages (``{"role", "content", "tool_calls"}``, content a
string or a list of ``text`` / ``image_url`` / ``image`` / ``tool_use`` / ``tool_result`` / ``thinking`` parts) by
its module; :class:`Counter` counts those.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..providers.profiles import profile

__all__ = ["Count", "Counter", "count_text", "png_size"]

_WORD = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")


def count_text(text: str) -> int:
    """Tokens of ``text`` by the simulator's own rule: one per punctuation/symbol character, one per run of up to
    3 digits, and one per started 5 letters of a word; whitespace is free. Roughly a BPE tokenizer on English and
    code, with no code shared with the client's estimator.

    Examples
    --------
    >>> count_text("hello world"), count_text("internationalisation 12345 {}")
    (2, 8)
    """
    n = 0
    for m in _WORD.finditer(text):
        s = m.group()
        if s[0].isdigit():
            n += math.ceil(len(s) / 3)
        elif s[0].isalpha() and s.isascii():
            n += math.ceil(len(s) / 5)
        else:
            n += len(s)
    return n


def png_size(data: bytes) -> tuple[int, int]:
    """``(width, height)`` in pixels from a PNG's IHDR chunk.

    Raises
    ------
    InputError
        If ``data`` is not a PNG.

    Examples
    --------
    >>> png_size(b"\\x89PNG\\r\\n\\x1a\\n" + b"\\0\\0\\0\\rIHDR" + (56).to_bytes(4, "big") + (30).to_bytes(4, "big"))
    (56, 30)
    """
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise InputError("not a PNG image")
    return struct.unpack(">II", data[16:24])


@dataclass
class Count:
    """What :meth:`Counter.count` found: text and image tokens, each image's ``(width, height)`` in pixels, and
    the reason an image could not be read (the simulator then answers 400).

    Examples
    --------
    >>> Count(text=3).image, Count().images
    (0, [])
    """

    text: int = 0
    image: int = 0
    images: list[tuple[int, int]] = field(default_factory=list)
    bad_image: str | None = None


class Counter:
    """Counts the prompt tokens of chat-like messages as the simulator received them.

    Parameters
    ----------
    image_profile : dict
        Reader profile name per dialect (``{"anthropic": "claude", ...}``) whose published rule prices an image.
    per_message : int
        Overhead tokens per message (role and framing).

    Examples
    --------
    >>> c = Counter({"openai": "openai"}, per_message=4)
    >>> c.count("openai", None, [{"role": "user", "content": "hello world"}], None).text
    6
    """

    def __init__(self, image_profile: dict, per_message: int = 4) -> None:
        self.image_profile = dict(image_profile)
        self.per_message = per_message

    def _image(self, dialect: str, b64: str, cnt: Count) -> None:
        try:
            w, h = png_size(base64.b64decode(b64[:64] + "=" * (-len(b64[:64]) % 4)))
        except (ValueError, struct.error, binascii.Error):
            cnt.bad_image = "could not process image: only base64 PNG images are simulated"
            return
        cnt.images.append((w, h))
        cnt.image += profile(self.image_profile[dialect]).image_tokens(w, h)

    def _content(self, dialect: str, content: Any, cnt: Count) -> None:
        if isinstance(content, str):
            cnt.text += count_text(content)
            return
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            t = part.get("type")
            if t in ("text", "input_text"):
                cnt.text += count_text(str(part.get("text", "")))
            elif t == "image_url":
                url = (part.get("image_url") or {}).get("url", "")
                if url.startswith("data:") and "," in url:
                    self._image(dialect, url.split(",", 1)[1], cnt)
                else:
                    cnt.bad_image = "simulator cannot fetch image URLs (no network)"
            elif t == "image":
                self._image(dialect, str((part.get("source") or {}).get("data", "")), cnt)
            elif t == "tool_use":
                cnt.text += count_text(str(part.get("name", ""))) + count_text(json.dumps(part.get("input", {})))
            elif t == "tool_result":
                self._content(dialect, part.get("content", ""), cnt)
            elif t in ("thinking", "redacted_thinking"):
                cnt.text += count_text(str(part.get("thinking", "") or part.get("data", "")))

    def count(self, dialect: str, system: Any, messages: list, tools: Any) -> Count:
        """Count a request: its system prompt (a string or parts), its messages and its tool schemas.

        Parameters
        ----------
        dialect : str
            Names the reader profile of the images (a key of ``image_profile``).
        system : str, list or None
        messages : list of dict
            Chat-like messages (see the module docstring).
        tools : any
            Counted as its JSON text when not empty.
        """
        cnt = Count()
        if system:
            self._content(dialect, system, cnt)
        for m in messages:
            cnt.text += self.per_message
            self._content(dialect, m.get("content"), cnt)
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                cnt.text += count_text(str(fn.get("name", ""))) + count_text(str(fn.get("arguments", "")))
        if tools:
            cnt.text += count_text(json.dumps(tools))
        return cnt
