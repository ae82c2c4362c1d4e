"""Check a request body against a dialect's grammar and a reader profile's limits, as the provider would.

Three layers, each a 400 from the provider (sources read 2026-11-30 and 2026-12-01, quoted in
``../shared/reference/providers.md`` part C and in :mod:`snapglyph.providers.grammar`):

Parameters and parts (:mod:`snapglyph.providers.grammar`)
  only the top-level parameters the endpoint takes, the required ones present (Anthropic ``max_tokens``, a
  ``model``), ``max_completion_tokens`` for OpenAI reasoning models; every content part of a type the dialect
  and the role take, with its required fields (an Anthropic ``image``/``tool_use`` block in an OpenAI request, an
  ``image_url`` part in an Anthropic one, an unknown block type are all faults); Anthropic's id and tool name
  patterns.
Images
  every base64 image's bytes are an image a provider takes and the media type it is labelled with
  (:func:`snapglyph.model.images.check_image`; Pillow reads the header only).
Conversation
  Anthropic (platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls, /docs/en/api/messages):
  the first message a user message (the 400 "first message must use the user role" reported in 2024; snapglyph
  requests always open with one); every ``tool_use`` answered by a ``tool_result`` in the next message; every
  ``tool_result`` answering a ``tool_use`` of the previous message; tool results first in their user message; tool
  use ids unique; no image in an assistant message; no empty or whitespace-only text; no empty content; tools
  defined when tool blocks are present (not every historical ``tool_use`` name among them: resumed Claude Code
  sessions call tools the request no longer lists); a ``system`` message after the first holds text only
  (``anthropic.types.SystemMessageParam``, anthropic-sdk-python 2.17, read 2026-12-04; Claude Code 2.1 sends them). OpenAI chat completions (platform.openai.com/docs/api-reference/chat): a
  ``tool`` message only as a response to a preceding ``tool_calls``; every ``tool_call_id`` answered before the
  next non-tool message, and unique in its message; images only in user messages; tool message content text
  only. OpenAI Responses (platform.openai.com/docs/api-reference/responses): every ``function_call`` with a
  ``function_call_output``, no output without its call, call ids unique; images only in user messages and
  function call outputs. Gemini ``generateContent`` (ai.google.dev/api/generate-content, read 2026-12-01): the
  rules listed in :mod:`snapglyph.providers.gemini` (every ``functionCall`` answered, in order, by the
  ``functionResponse`` parts of the next ``user`` content; roles ``user``/``model``; no empty parts).

The official SDKs' request types (``anthropic.types.message_create_params``, ``openai.types.chat`` and
``openai.types.responses``) are a second oracle in the tests (``tests/sdk_oracle.py``); this module is stricter
than they are where the API is (roles, pairing, image bytes, patterns).
"""

from __future__ import annotations

import base64
from typing import Any

from ..errors import InputError
from ..model.images import image_size, media_types
from ..model.messages import LONE_SURROGATE
from .faults import Fault, blocks as _blocks, image_faults as _image_faults
from .gemini import check_gemini
from .grammar import PARAMS, param_faults, part_faults
from .tool_names import TOOL_NAME_RULES, tool_name_ok
from .validation_openai import openai_faults as _openai, responses_faults as _responses

__all__ = ["Fault", "validate"]


_ONE_OF = ("text", "inline_data", "inlineData", "file_data", "fileData", "functionCall", "function_call",
           "functionResponse", "function_response")


def _gemini_images(body: dict, out: list[Fault]) -> None:
    """Faults of Gemini ``inline_data`` images: a media type Gemini does not take ("Unsupported MIME type: ...",
    see :data:`snapglyph.model.images.DIALECT_MEDIA_TYPES`), and the bytes checked as in the other dialects
    (Gemini: "Unable to process input image", google-gemini/gemini-cli#5064, read 2026-12-01)."""
    accepted = media_types("gemini")
    contents = body.get("contents")
    for i, c in enumerate(contents if isinstance(contents, list) else []):
        parts = c.get("parts") if isinstance(c, dict) else None
        for j, p in enumerate(parts if isinstance(parts, list) else []):
            blob = p.get("inlineData", p.get("inline_data")) if isinstance(p, dict) else None
            fd = p.get("fileData", p.get("file_data")) if isinstance(p, dict) else None
            if isinstance(fd, dict) and not str(fd.get("fileUri", fd.get("file_uri")) or "").strip():
                out.append(Fault(i, f"parts[{j}].file_data: the file URI is empty"))
            if not isinstance(blob, dict) or len([k for k in p if k in _ONE_OF]) > 1:  # that fault is the grammar's
                continue
            declared = blob.get("mimeType", blob.get("mime_type"))
            where = f"parts[{j}].inline_data"
            if isinstance(declared, str) and declared.startswith("image/") and declared not in accepted:
                out.append(Fault(i, f"{where}: Unsupported MIME type: {declared}"))
                continue
            if isinstance(declared, str) and declared.startswith("image/"):
                _image_faults(i, blob.get("data"), declared, where, out)
            elif not str(blob.get("data") or "").strip():
                out.append(Fault(i, f"{where}: the inline data is empty"))


def _gemini_names(body: dict, out: list[Fault]) -> None:
    """Faults of Gemini function names (declarations and calls) outside :data:`TOOL_NAME_RULES`."""
    rule = TOOL_NAME_RULES["gemini"]
    for k, t in enumerate(body.get("tools") if isinstance(body.get("tools"), list) else []):
        decls = (t.get("functionDeclarations", t.get("function_declarations")) if isinstance(t, dict) else None)
        for j, d in enumerate(decls if isinstance(decls, list) else []):
            name = d.get("name") if isinstance(d, dict) else None
            if not tool_name_ok(name, "gemini"):
                out.append(Fault(None, f"tools[{k}].functionDeclarations[{j}].name: {name!r} does not match {rule}"))
    contents = body.get("contents")
    for i, c in enumerate(contents if isinstance(contents, list) else []):
        parts = c.get("parts") if isinstance(c, dict) else None
        for j, p in enumerate(parts if isinstance(parts, list) else []):
            fc = p.get("functionCall", p.get("function_call")) if isinstance(p, dict) else None
            if isinstance(fc, dict) and not tool_name_ok(fc.get("name"), "gemini"):
                out.append(Fault(i, f"parts[{j}].functionCall.name: {fc.get('name')!r} does not match {rule}"))


def _anthropic_tool_use(i: int, b: dict, where: str, body: dict, seen_ids: set, out: list[Fault]) -> None:
    tid = b.get("id")
    if tid in seen_ids:
        out.append(Fault(i, f"{where}: `tool_use` ids must be unique: {tid}"))
    seen_ids.add(tid)
    # a tool_use of a tool the request no longer lists is accepted (real Claude Code requests resume such sessions);
    # one request with tool blocks and no tools at all is refused
    if not body.get("tools"):
        f = Fault(None, "requests which include `tool_use` or `tool_result` blocks must define tools")
        if f not in out:
            out.append(f)


def _anthropic_blocks(i: int, role: str, content: Any, body: dict, seen_ids: set, out: list[Fault],
                      images: list[tuple[int, str]]) -> None:
    """Every block of one Anthropic message: its type and fields, tool results first, images collected."""
    seen_other = False
    for j, b in enumerate(content if isinstance(content, list) else []):
        where = f"content.{j}"
        out.extend(Fault(i, f) for f in part_faults("anthropic", role, b, where))
        if not isinstance(b, dict):
            continue
        t = b.get("type")
        inner = [(where, b)] if t == "image" else []
        if t == "tool_result":
            if seen_other:
                out.append(Fault(i, f"{where}: tool_result blocks must come first in the content array"))
            c = b.get("content")
            inner = [(f"{where}.content.{k}", q) for k, q in enumerate(c if isinstance(c, list) else [])
                     if isinstance(q, dict) and q.get("type") == "image"]
        else:
            seen_other = True
        for w, q in inner:
            src = q.get("source") if isinstance(q.get("source"), dict) else {}
            images.append((i, _b64_of(q)))
            if src.get("type") == "base64":
                _image_faults(i, src.get("data"), src.get("media_type"), f"{w}.source.base64", out)
            elif src.get("type") == "url" and not str(src.get("url") or "").strip():
                out.append(Fault(i, f"{w}.source.url: the image URL is empty"))
            elif src.get("type") not in ("url", "file"):
                out.append(Fault(i, f"{w}.source: an image needs a base64, url or file source"))
        if t == "tool_use" and role == "assistant":
            _anthropic_tool_use(i, b, where, body, seen_ids, out)


def _anthropic(body: dict, out: list[Fault], images: list[tuple[int, str]]) -> None:
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        out.append(Fault(None, "messages: must be a non-empty list"))
        return
    seen_ids: set[str] = set()
    for i, m in enumerate(msgs):
        if not isinstance(m, dict):
            out.append(Fault(i, "a message must be an object with role and content"))
            continue
        role, content = m.get("role"), m.get("content")
        if role == "system" and i > 0:   # anthropic.types.SystemMessageParam (SDK 2.17): text, as Claude Code sends
            if not isinstance(content, (str, list)) or any(b.get("type") != "text" for b in _blocks(content)):
                out.append(Fault(i, "a system message holds text only"))
            continue
        if role not in ("user", "assistant"):
            out.append(Fault(i, f"role must be user or assistant, not {role!r}"))
            continue
        if i == 0 and role != "user":
            out.append(Fault(0, 'first message must use the "user" role'))
        if not isinstance(content, (str, list)):
            out.append(Fault(i, "content: Input should be a string or a list of content blocks"))
            continue
        last_assistant = i == len(msgs) - 1 and role == "assistant"
        if (content == "" or content == []) and not last_assistant:
            out.append(Fault(i, "all messages must have non-empty content except for the optional final "
                                "assistant message"))
        elif isinstance(content, str) and content and not content.strip():
            out.append(Fault(i, "content: text content must contain non-whitespace text"))
        _anthropic_blocks(i, role, content, body, seen_ids, out, images)
        blocks = _blocks(content)
        uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"] if role == "assistant" else []
        if uses:
            nxt = msgs[i + 1] if i + 1 < len(msgs) and isinstance(msgs[i + 1], dict) else {}
            answered = {b.get("tool_use_id") for b in _blocks(nxt.get("content")) if b.get("type") == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                out.append(Fault(i, f"`tool_use` ids were found without `tool_result` blocks immediately after: "
                                    f"{', '.join(map(str, missing))}"))
        if role == "user":
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            prev = msgs[i - 1] if i > 0 and isinstance(msgs[i - 1], dict) else {}
            called = ({b.get("id") for b in _blocks(prev.get("content")) if b.get("type") == "tool_use"}
                      if prev.get("role") == "assistant" else set())
            extra = [r for r in results if r not in called]
            if extra:
                out.append(Fault(i, f"unexpected `tool_use_id` found in `tool_result` blocks: "
                                    f"{', '.join(map(str, extra))}"))


def _b64_of(block: dict) -> str:
    src = block.get("source") or {}
    return src.get("data", "") if isinstance(src, dict) and src.get("type") == "base64" else ""


def _limits(body: dict, images: list[tuple[int, str]], prof: Any, out: list[Fault]) -> None:
    from .limits import ImageInfo, breaches, request_bytes
    infos = []
    for i, data in images:
        size = image_size(data) if data else None
        if data and size is None:
            try:
                base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4))
            except ValueError:
                out.append(Fault(i, "image data is not base64"))
        infos.append(ImageInfo(i, len(data or ""), *(size or (None, None))))
    out.extend(Fault(b.index, b.text) for b in breaches(prof, infos, request_bytes(body)))


def validate(request: dict, dialect: str, profile: Any = None) -> list[Fault]:
    """Return every fault a provider would reject in ``request`` (an empty list when there is none).

    Parameters
    ----------
    request : dict
        A request body in ``dialect``.
    dialect : str
        ``openai`` (chat completions), ``anthropic`` (messages), ``responses`` or ``gemini`` (``generateContent``;
        ``index`` of a fault is then the index in ``contents``).
    profile : str or Profile, optional
        Also check this reader profile's limits: images per request, bytes per image (base64), request bytes,
        the many-image rule.

    Returns
    -------
    list of Fault
        In request order; each has the message index (or ``None``) and the text.

    Raises
    ------
    InputError
        For an unknown dialect or a request that is not a dict.

    Examples
    --------
    >>> body = {"model": "claude-sonnet-4-5", "max_tokens": 100,
    ...         "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}
    >>> [str(f) for f in validate(body, "anthropic")]
    ["messages[0]: content.0.type: unknown content block type 'image_url'"]
    >>> validate({**body, "messages": [{"role": "user", "content": "hi"}]}, "anthropic")
    []
    """
    if not isinstance(request, dict):
        raise InputError(f"a request body must be a JSON object, not {type(request).__name__}")
    out: list[Fault] = []
    images: list[tuple[int, str]] = []
    if dialect in PARAMS:
        out.extend(Fault(None, f) for f in param_faults(request, dialect))
    if dialect == "anthropic":
        _anthropic(request, out, images)
    elif dialect == "openai":
        _openai(request, out, images)
    elif dialect == "responses":
        _responses(request, out, images)
    elif dialect == "gemini":
        check_gemini(request, lambda i, text: out.append(Fault(i, text)), images)
        _gemini_images(request, out)
        _gemini_names(request, out)
    else:
        raise InputError(f"unknown dialect {dialect!r}; known dialects: openai, anthropic, responses, gemini")
    _surrogates(request, out)
    if profile is not None:
        from .profiles import profile as get_profile
        _limits(request, images, get_profile(profile), out)
    return out


def _surrogates(request: dict, out: list[Fault]) -> None:
    """A fault for each message (or the body) holding a lone surrogate: no UTF-8 encoder writes one, so the body
    cannot be sent as the JSON every provider reads."""
    items = next((request[k] for k in ("messages", "input", "contents") if isinstance(request.get(k), list)), [])
    for i, m in enumerate(items):
        if _has_surrogate(m):
            out.append(Fault(i, "holds a lone surrogate (U+D800-U+DFFF): UTF-8 cannot encode it"))
    rest = {k: v for k, v in request.items() if v is not items}
    if _has_surrogate(rest):
        out.append(Fault(None, "holds a lone surrogate (U+D800-U+DFFF): UTF-8 cannot encode it"))


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return not value.isascii() and LONE_SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_surrogate(v) for v in value)
    return False
