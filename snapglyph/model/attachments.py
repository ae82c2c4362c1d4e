"""Documents and files attached to a message: an Anthropic ``document`` block, a Gemini ``fileData`` part, a Gemini
``inlineData`` part that is no image (a PDF), an OpenAI chat ``file`` part, a Responses ``input_file`` part.

The neutral form holds each as a ``text`` part whose text stands for it (a text document's own text; a PDF named
with its size and page count; a file named with its URI), with the block as sent in ``meta["source_block"]``. So the
pages draw what the attachment is, the source store keeps it exactly, and a dialect that can carry the block as
sent (:func:`verbatim_block`: each dialect for its own kind) sends it verbatim; the others send the stand-in text,
counted by the normalization. Sources: platform.claude.com/docs/en/build-with-claude/pdf-support
and .../citations (document sources base64, text, content, url, file), ai.google.dev/gemini-api/docs/document-processing
(``inline_data`` and ``file_data`` parts), read 2026-12-07.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

__all__ = ["PDF_PAGE_TOKENS", "attachment_text", "attachment_tokens", "count_attachments", "is_attachment",
           "sent_block", "verbatim_block"]

PDF_PAGE_TOKENS = 2_500
"""Tokens charged for one page of a PDF sent as it is (each page goes as its text and as an image): measured at
2,098-2,481 a page on Claude and 455-777 on Gemini (huggingface.co/datasets/JOHNISKING/pdf-token-cost, v2 of
2026-10-18), about 2,333 on Claude's full visual mode (a 3-page PDF about 7,000 tokens:
docs.claude.com/en/docs/build-with-claude/pdf-support); read 2026-12-07. The largest of these, rounded up: an
estimate must not fall short of what the provider counts."""

_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
"""A PDF page object (``/Type /Page``, not ``/Pages``): what a page count is read from."""


def _g(d: dict, *keys: str) -> Any:
    return next((d[k] for k in keys if k in d), None)


def _gemini_blob(b: Any) -> tuple[str, dict] | None:
    """``("file" | "inline", the payload)`` of a Gemini part holding a file or non-image inline data."""
    if not isinstance(b, dict):
        return None
    fd = _g(b, "fileData", "file_data")
    if isinstance(fd, dict):
        return "file", fd
    blob = _g(b, "inlineData", "inline_data")
    if isinstance(blob, dict) and not str(_g(blob, "mimeType", "mime_type") or "").startswith("image/"):
        return "inline", blob
    return None


def _openai_file(b: Any) -> dict | None:
    """The file of an OpenAI chat ``file`` part or a Responses ``input_file`` part (``file_data``, ``file_id``,
    ``file_url``, ``filename``)."""
    if isinstance(b, dict) and b.get("type") == "file" and isinstance(b.get("file"), dict):
        return b["file"]
    if isinstance(b, dict) and b.get("type") == "input_file":
        return b
    return None


def is_attachment(b: Any) -> bool:
    """Whether ``b`` (a content block or part as sent) is a document or file this module stands in for.

    Examples
    --------
    >>> is_attachment({"type": "document", "source": {"type": "text", "data": "x"}})
    True
    >>> is_attachment({"fileData": {"fileUri": "gs://b/a.pdf", "mimeType": "application/pdf"}})
    True
    >>> is_attachment({"inlineData": {"mimeType": "image/png", "data": "iVBO"}}), is_attachment({"type": "text"})
    (False, False)
    """
    return (isinstance(b, dict) and b.get("type") == "document" and isinstance(b.get("source"), dict)) \
        or _gemini_blob(b) is not None or _openai_file(b) is not None


def _decoded(data: Any) -> bytes | None:
    try:
        return base64.b64decode(str(data), validate=False)
    except (binascii.Error, ValueError):
        return None


def _binary(kind: str, mime: str, data: Any, title: str) -> str:
    raw = _decoded(data)
    if not raw:
        return f"[{kind}{title}: {mime or 'no media type'}, empty]"
    pages = len(_PAGE.findall(raw)) if mime == "application/pdf" or raw.startswith(b"%PDF") else 0
    extra = f", {pages:,} page{'s' if pages != 1 else ''}" if pages else ""
    return f"[{kind}{title}: {mime or 'no media type'}, {len(raw):,} bytes{extra}]"


def _document_text(b: dict) -> str:
    src = b["source"]
    title = f" {b['title']!s}" if b.get("title") else ""
    t = src.get("type")
    if t == "text":
        return f"[document{title}]\n{src.get('data', '')!s}"
    if t == "content":
        c = src.get("content")
        texts = [c] if isinstance(c, str) else [x.get("text", "") for x in c or [] if isinstance(x, dict)]
        return f"[document{title}]\n" + "\n".join(str(x) for x in texts)
    if t == "base64":
        return _binary("document", str(src.get("media_type", "")), src.get("data", ""), title)
    if t == "url":
        return f"[document{title}: {src.get('url', '')!s}]"
    if t == "file":
        return f"[document{title}: file {src.get('file_id', '')!s}]"
    return f"[document{title}: a {t!s} source]"


def attachment_text(b: dict) -> str:
    """The text that stands for an attachment where it is drawn or cannot be sent as it is.

    Parameters
    ----------
    b : dict
        A block for which :func:`is_attachment` holds.

    Returns
    -------
    str
        A text document: ``[document TITLE]`` and its text. A PDF or other binary: its media type, decoded size in
        bytes and (PDF) page count. A URL or file: its address.

    Examples
    --------
    >>> attachment_text({"type": "document", "title": "notes", "source": {"type": "text", "data": "line one"}})
    '[document notes]\\nline one'
    >>> pdf = base64.b64encode(b"%PDF-1.4 /Type /Pages /Type /Page /Type /Page %%EOF").decode()
    >>> attachment_text({"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
    ...                                                  "data": pdf}})
    '[document: application/pdf, 51 bytes, 2 pages]'
    >>> attachment_text({"file_data": {"file_uri": "gs://bucket/report.pdf", "mime_type": "application/pdf"}})
    '[file: application/pdf at gs://bucket/report.pdf]'
    """
    if b.get("type") == "document":
        return _document_text(b)
    f = _openai_file(b)
    if f is not None:
        name = f" {f['filename']!s}" if f.get("filename") else ""
        data = str(f.get("file_data") or "")
        if data:
            head, _, payload = data.partition(",") if data.startswith("data:") else ("", "", data)
            return _binary("file", head[5:].split(";")[0], payload, name)
        return f"[file{name}: {f.get('file_id') or f.get('file_url') or 'no data'}]"
    kind, payload = _gemini_blob(b) or ("file", {})
    mime = str(_g(payload, "mimeType", "mime_type") or "")
    if kind == "file":
        return f"[file: {mime or 'no media type'} at {_g(payload, 'fileUri', 'file_uri')!s}]"
    return _binary("file", mime, payload.get("data", ""), "")


def verbatim_block(meta: dict, dialect: str) -> dict | None:
    """The attachment block of a part's ``meta`` where ``dialect`` takes it as sent (an Anthropic ``document``
    in ``anthropic``, a Gemini part in ``gemini``), else None (the stand-in text is sent).

    Examples
    --------
    >>> doc = {"type": "document", "source": {"type": "text", "data": "x"}}
    >>> verbatim_block({"source_block": doc}, "anthropic") is doc, verbatim_block({"source_block": doc}, "openai")
    (True, None)
    """
    b = meta.get("source_block")
    if not is_attachment(b):
        return None
    if dialect == "anthropic" and b.get("type") == "document":
        return b
    if dialect == "gemini" and _gemini_blob(b) is not None:
        return b
    if (dialect, b.get("type")) in (("openai", "file"), ("responses", "input_file")):
        return b
    return None


def count_attachments(messages: Any) -> int:
    """The attachments (parts standing for one, :func:`is_attachment`) in ``messages``, tool results included.

    Examples
    --------
    >>> from snapglyph.model.messages import Message, Part
    >>> doc = Part("text", text="[document]", meta={"source_block": {"type": "document", "source": {"type": "text"}}})
    >>> count_attachments([Message(1, "user", [doc, Part("text", text="hi")])])
    1
    """
    n = 0
    for m in messages:
        for p in m.parts:
            for q in [p, *p.content]:
                n += q.kind == "text" and is_attachment(q.meta.get("source_block"))
    return n


def attachment_tokens(meta: dict) -> int:
    """Tokens charged beyond its stand-in text for the attachment in a part's ``meta``: a PDF (or other binary
    document) :data:`PDF_PAGE_TOKENS` a page (its page count read from the bytes; one page where the bytes are not
    here: a URL, a file id, a Gemini file); nothing for a text document (its text is the stand-in) or no attachment.

    Examples
    --------
    >>> pdf = base64.b64encode(b"%PDF-1.4 /Type /Page /Type /Page %%EOF").decode()
    >>> attachment_tokens({"source_block": {"type": "document", "source": {"type": "base64", "data": pdf,
    ...                                                                    "media_type": "application/pdf"}}})
    5000
    >>> attachment_tokens({"source_block": {"type": "document", "source": {"type": "text", "data": "x"}}})
    0
    """
    b = meta.get("source_block")
    if not is_attachment(b):
        return 0
    if b.get("type") == "document":
        src = b["source"]
        if src.get("type") in ("text", "content"):
            return 0
        raw = _decoded(src.get("data", "")) if src.get("type") == "base64" else None
    elif _openai_file(b) is not None:
        data = str(_openai_file(b).get("file_data") or "")
        raw = _decoded(data.partition(",")[2] if data.startswith("data:") else data) if data else None
    else:
        kind, payload = _gemini_blob(b) or ("file", {})
        raw = _decoded(payload.get("data", "")) if kind == "inline" else None
    pages = len(_PAGE.findall(raw)) if raw else 0
    return PDF_PAGE_TOKENS * max(1, pages)


def _payload(b: dict) -> tuple[str, str, str, str]:
    """``(media type, base64 data, URL, name)`` of an attachment block (empty where it has none)."""
    if b.get("type") == "document":
        src = b["source"]
        t = src.get("type")
        return (str(src.get("media_type") or ("application/pdf" if t in ("base64", "url") else "")),
                str(src.get("data") or "") if t == "base64" else "", str(src.get("url") or "") if t == "url" else "",
                str(b.get("title") or ""))
    f = _openai_file(b)
    if f is not None:
        data = str(f.get("file_data") or "")
        head, _, data = data.partition(",") if data.startswith("data:") else ("", "", data)
        return head[5:].split(";")[0] or "application/pdf", data, str(f.get("file_url") or ""), str(
            f.get("filename") or "")
    kind, payload = _gemini_blob(b) or ("file", {})
    mime = str(_g(payload, "mimeType", "mime_type") or "")
    if kind == "inline":
        return mime, str(payload.get("data") or ""), "", ""
    return mime, "", str(_g(payload, "fileUri", "file_uri") or ""), ""


def sent_block(meta: dict, dialect: str) -> dict | None:
    """The block that carries the attachment of a part's ``meta`` in ``dialect``: the block as sent where it is
    that dialect's own (:func:`verbatim_block`), else a PDF given by its bytes or by an https URL written as the
    dialect's own kind (Anthropic ``document``, OpenAI chat ``file``, Responses ``input_file``, Gemini
    ``inline_data``/``file_data``; chat takes no URL, only Gemini a ``gs://`` one); None where the dialect cannot
    say it (the stand-in text is sent). Sources: the PDF pages of each API (platform.claude.com pdf-support,
    platform.openai.com/docs/guides/pdf-files, ai.google.dev/gemini-api/docs/document-processing), read 2026-12-07.

    Examples
    --------
    >>> pdf = {"type": "document", "title": "a.pdf", "source": {"type": "base64", "media_type": "application/pdf",
    ...                                                         "data": "JVBERg=="}}
    >>> sent_block({"source_block": pdf}, "gemini")
    {'inline_data': {'mime_type': 'application/pdf', 'data': 'JVBERg=='}}
    >>> sent_block({"source_block": pdf}, "openai")
    {'type': 'file', 'file': {'filename': 'a.pdf', 'file_data': 'data:application/pdf;base64,JVBERg=='}}
    >>> sent_block({"source_block": {"fileData": {"fileUri": "gs://b/a.pdf", "mimeType": "application/pdf"}}},
    ...            "anthropic") is None
    True
    """
    same = verbatim_block(meta, dialect)
    if same is not None or not is_attachment(meta.get("source_block")):
        return same
    mime, data, url, name = _payload(meta["source_block"])
    if mime != "application/pdf" or not (data or url.startswith("https://")):
        return None
    name = name or "document.pdf"
    if dialect == "anthropic":
        src = {"type": "base64", "media_type": mime, "data": data} if data else {"type": "url", "url": url}
        return {"type": "document", "source": src}
    if dialect == "gemini":
        return ({"inline_data": {"mime_type": mime, "data": data}} if data
                else {"file_data": {"mime_type": mime, "file_uri": url}})
    if dialect == "responses":
        return ({"type": "input_file", "filename": name, "file_data": f"data:{mime};base64,{data}"} if data
                else {"type": "input_file", "file_url": url})
    if dialect == "openai" and data:
        return {"type": "file", "file": {"filename": name, "file_data": f"data:{mime};base64,{data}"}}
    return None
