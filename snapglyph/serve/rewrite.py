"""What the proxy does to a request body: read it, key it, estimate it, compact it and put it back together.

A compacted body is the client's own body with only the middle of its conversation replaced by the snapshot
message (:func:`snapglyph.serve.verbatim.splice`): the head and tail items go out as they came (Responses
``developer`` messages and ``reasoning`` items with their ``encrypted_content``, Anthropic thinking signatures and
``cache_control``, unknown fields), and so does every other field (``stream``, ``max_tokens``, ``tools``,
``tool_choice``, ``temperature``, Anthropic's ``system``, Responses' ``instructions``, metadata; Gemini's
``generationConfig``, ``safetySettings``, ``tools``, ``toolConfig``, ``systemInstruction``, ``cachedContent``).

Gemini's paths name the model (``/v1beta/models/{model}:generateContent``, :func:`route`): it is taken from the
path, not the body. A compacted Gemini request offers ``recall_messages`` as the others do (a function declaration,
:mod:`snapglyph.serve.recall_gemini`), and the recall loop answers it.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Any

from ..providers.params import output_reserve
from .recall_shapes import with_recall_tool
from .verbatim import splice

__all__ = ["DEFAULT_TEXT_ONLY", "RECALL_DIALECTS", "ROUTES", "compact_body", "image_refusal", "pick_profile", "route",
           "text_only"]

ROUTES = {"/v1/messages": "anthropic", "/v1/messages/count_tokens": "anthropic",
          "/v1/chat/completions": "openai", "/chat/completions": "openai",
          "/v1/responses": "responses", "/responses": "responses"}
"""Request paths the proxy reads, and their dialect; Gemini's paths (they name the model) are matched by
:func:`route`; every other path is relayed unchanged."""

_GEMINI = re.compile(r"^/(?:v1|v1beta)/models/([^/:]+):(?:generateContent|streamGenerateContent)$")

RECALL_DIALECTS = frozenset({"anthropic", "openai", "responses", "gemini"})
"""Dialects whose answers the recall loop reads (:mod:`snapglyph.serve.recall_shapes`): only their compacted requests
offer ``recall_messages``."""


def route(path: str) -> tuple[str, str] | None:
    """``(dialect, model from the path)`` of a request path the proxy reads (the model is ``""`` where the body
    names it), or ``None`` for a path relayed unchanged (Gemini's ``:countTokens`` among them).

    Gemini paths: ``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent``, the same under
    ``/v1`` (https://ai.google.dev/api/generate-content, read 2026-12-04).

    Examples
    --------
    >>> route("/v1/messages"), route("/v1beta/models/gemini-2.5-flash:streamGenerateContent")
    (('anthropic', ''), ('gemini', 'gemini-2.5-flash'))
    >>> route("/v1beta/models/gemini-2.5-flash:countTokens") is None, route("/v1/models") is None
    (True, True)
    """
    dialect = ROUTES.get(path)
    if dialect is not None:
        return dialect, ""
    m = _GEMINI.match(path)
    return ("gemini", m.group(1)) if m else None


DEFAULT_TEXT_ONLY = ("gpt-3.5*", "gpt-4", "gpt-4-0*", "gpt-4-32k*", "o1-mini*", "o3-mini*", "deepseek-*",
                     "codestral*", "*embed*", "text-*", "qwen2.5-coder*", "qwen3-coder*", "llama-3*", "llama3*")
"""Model name patterns (``fnmatch``, case-insensitive) that do not read images: never sent pages."""

_IMAGE_REFUSAL = re.compile(r"does not support image|image input is not supported|not (?:a )?multimodal|"
                            r"images? (?:are|is) not supported|model does not support vision|"
                            r"image_url is only supported by certain models|cannot read images?", re.I)


def text_only(model: str, patterns: tuple[str, ...] = DEFAULT_TEXT_ONLY) -> bool:
    """Whether ``model`` matches a text-only pattern (a provider prefix such as ``openai/`` is ignored).

    Examples
    --------
    >>> text_only("deepseek-chat"), text_only("openai/gpt-3.5-turbo"), text_only("claude-sonnet-4-5")
    (True, True, False)
    """
    m = (model or "").strip().lower().rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(m, p.lower()) for p in patterns)


def image_refusal(text: str) -> bool:
    """Whether an upstream error says the model does not read images.

    Examples
    --------
    >>> image_refusal('{"error": {"message": "This model does not support image input"}}')
    True
    """
    return bool(_IMAGE_REFUSAL.search(text or ""))


@functools.lru_cache(maxsize=256)
def pick_profile(model: str, dialect: str, override: str | None = None) -> str:
    """The name of :func:`snapglyph.providers.profiles.profile_for_request`'s profile, memoized per model.

    Raises
    ------
    UnknownProfileError
        If ``override`` names no profile.

    Examples
    --------
    >>> pick_profile("claude-sonnet-4-5", "anthropic"), pick_profile("my-local-model", "openai")
    ('claude', 'openai')
    """
    from ..providers.profiles import profile_for_request
    return profile_for_request(model, dialect, override).name


def compact_body(body: dict, dialect: str, *, profile: str, budget: int, store: Any = None,
                 cut: Any = None, recall_tool: bool = False, model: str | None = None, pages: bool = True,
                 max_images: int | None = None, earlier: Any = None,
                 max_bytes: int | None = None) -> tuple[dict, Any, Any]:
    """Compact a request body and put the client's other fields back.

    Parameters
    ----------
    body : dict
        The client's request body.
    dialect : str
    profile : str
        Reader profile of the pages.
    budget : int or Budget
        Tokens the request may cost, reserved output included (a :class:`~snapglyph.compaction.budget.Budget`: in
        the provider's tokens, text counted at its ratio; see :func:`snapglyph.compact`).
    store : SourceStore, optional
    cut : snapglyph.compaction.sticky.Cut, optional
        Keep this earlier cut if its tail still fits (``compact(..., cut=)``, :mod:`snapglyph.compaction.sticky`);
        ``None`` makes a new cut.
    recall_tool : bool
        Offer ``recall_messages`` (counted in the budget, named in the snapshot text, added after the client's
        own tools) and accept a compaction that shows no page; the caller answers the calls
        (:mod:`snapglyph.serve.recall_loop`). Ignored outside :data:`RECALL_DIALECTS` (``res.notes`` says so).
    model : str, optional
        The model, where the body does not name it (Gemini: the path's); default: the body's ``model``.
    pages : bool
        False: no page image (the text tiers, the snapshot text with the ids shown, recall), the retry of a
        compacted request the model refused (:mod:`snapglyph.serve.refusal`).
    max_images : int, optional
        Images the request may carry in all, the client's own counted (an image-count refusal's limit).
    earlier : snapglyph.compaction.sticky.Cut, optional
        With ``cut=None``: the conversation's cut before, whose pages the new cut keeps as its start where it can
        (``compact(..., earlier=)``).
    max_bytes : int, optional
        Bytes the request body may take (a body byte cap learned from a 413, :mod:`snapglyph.compaction.windows`):
        the profile's ``max_request_bytes`` lowered to it, so the compaction drops pages and fits the own images
        under it (:mod:`snapglyph.compaction.image_fit`, :mod:`snapglyph.compaction.assemble`).

    Returns
    -------
    (dict, CompactResult, Cut)
        The body to send, the compaction's result and its cut. The body is the client's own outside its middle
        (:func:`~snapglyph.serve.verbatim.splice`); where the client's items cannot be spliced (ids that do not
        map back, or a splice :func:`~snapglyph.validate` would refuse) it is the compaction's rebuild, and
        ``res.notes`` says so. ``res.notes`` also names the middle's reasoning items dropped and any client cache
        breakpoint dropped.

    Raises
    ------
    BudgetError, LimitError, InputError, FormatError, ValidationError
        From the compaction; :class:`~snapglyph.compaction.sticky.CutNoLongerFits` when ``cut`` is given and
        its tail no longer fits.

    Examples
    --------
    >>> body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": True, "temperature": 0,
    ...         "messages": [{"role": "assistant" if i % 2 else "user", "content": "word " * 300} for i in range(8)]}
    >>> out, res, cut = compact_body(body, "anthropic", profile="claude", budget=3200)
    >>> {k: v for k, v in out.items() if k != "messages"}        # the client's other fields, as sent
    {'model': 'claude-sonnet-4-5', 'max_tokens': 100, 'stream': True, 'temperature': 0}
    >>> out["messages"][0] == body["messages"][0], out["messages"][-1] == body["messages"][-1]   # head, tail as sent
    (True, True)
    >>> res.middle_ids == list(range(1, cut.first_tail)), len(out["messages"]) == 2 + 8 - cut.first_tail
    (True, True)
    """
    from ..compaction.compactor import compact
    offered = recall_tool and dialect in RECALL_DIALECTS
    profile = _capped(profile, pages, max_images, max_bytes)
    # allow_empty_middle where recall is answered (serve/recall_loop.py): the newest messages and a middle the model
    # can recall by id recover the session; without recall such a request would lose the middle, so it is refused
    kw = dict(profile=profile, dialect=dialect, budget=budget, store=store, max_tokens=output_reserve(None, body),
              allow_empty_middle=offered, recall_tool=offered,
              model=model or (body.get("model") if isinstance(body.get("model"), str) else None))
    res = compact(body, cut=cut, earlier=earlier, **kw)
    if res.passthrough:                        # it fits; under an image cap its oldest images may be placeholders
        if (max_images is None and max_bytes is None) or not res.rewrites:
            return dict(body), res, res.cut
        return _client_spelling(_rebuilt(body, dialect, res.request), body, dialect), res, res.cut
    if recall_tool and not offered:
        res.notes.append(f"recall_messages not offered ({dialect}: serve's recall loop does not read its answers)")
    body = with_recall_tool(dialect, body) if offered else body     # after the client's own tools
    spliced = splice(body, dialect, res)
    why = "its items could not be mapped to the compaction's message ids"
    if spliced is not None:
        faults = _new_faults(spliced[0], body, dialect, profile)
        if not faults:
            res.notes.extend(spliced[1])
            return _client_spelling(spliced[0], body, dialect), res, res.cut
        why = f"the client's items would be refused: {faults[0]}"
    res.notes.append(f"head and tail rebuilt by snapglyph ({why})")
    return _client_spelling(_rebuilt(body, dialect, res.request), body, dialect), res, res.cut


def _capped(profile: Any, pages: bool, max_images: int | None, max_bytes: int | None = None) -> Any:
    """The profile with no pages (``pages`` False), at most ``max_images`` images or at most ``max_bytes`` bytes of
    request body (:func:`snapglyph.compaction.windows.capped_profile`); the name when none."""
    from ..compaction.windows import capped_profile
    return capped_profile(profile, images=max_images, body_bytes=max_bytes, pages=pages)


_SNAKE_PARTS = ("inline_data", "file_data", "function_call", "function_response")
_CAMEL_MEDIA = {"inline_data": ("inlineData", {"mime_type": "mimeType"}),
                "file_data": ("fileData", {"mime_type": "mimeType", "file_uri": "fileUri"})}


def _client_spelling(out: dict, body: dict, dialect: str) -> dict:
    """Gemini: the pages' ``inline_data`` (and ``file_data``) parts written ``inlineData`` as the REST reference
    spells them (https://ai.google.dev/api/caching#Part, read 2026-12-04; the API reads both), unless the client's
    own parts use the snake-case names. Only parts of snapglyph's writing hold those names then; they are replaced
    in new lists, the client's items and the compaction's request are not modified."""
    items = body.get("contents") if dialect == "gemini" else None
    if not isinstance(items, list) or any(isinstance(p, dict) and any(k in p for k in _SNAKE_PARTS)
                                          for c in items if isinstance(c, dict)
                                          for p in (c.get("parts") if isinstance(c.get("parts"), list) else [])):
        return out
    contents = []
    for c in out["contents"]:
        parts = c.get("parts") if isinstance(c, dict) and isinstance(c.get("parts"), list) else []
        if any(isinstance(p, dict) and any(k in p for k in _CAMEL_MEDIA) for p in parts):
            c = {**c, "parts": [_camel(p) for p in parts]}
        contents.append(c)
    return {**out, "contents": contents}


def _camel(part: Any) -> Any:
    for snake, (camel, inner) in _CAMEL_MEDIA.items():
        if isinstance(part, dict) and isinstance(part.get(snake), dict):
            blob = {inner.get(k, k): v for k, v in part[snake].items()}
            return {(camel if k == snake else k): (blob if k == snake else v) for k, v in part.items()}
    return part


def _new_faults(out: dict, body: dict, dialect: str, profile: str) -> list:
    """Faults :func:`~snapglyph.providers.validation.validate` finds in ``out`` that the client's own ``body`` does
    not have (a client's field the grammar does not know is the client's, not the splice's)."""
    from ..providers.validation import validate
    faults = validate(out, dialect, profile=profile)
    if not faults:
        return []
    known = {f.text for f in validate(body, dialect, profile=profile)}
    return [f for f in faults if f.text not in known]


def _rebuilt(body: dict, dialect: str, req: dict) -> dict:
    """The client's body with its whole conversation replaced by the compaction's rebuild (the fallback where
    the client's own items cannot be spliced)."""
    out = dict(body)
    if dialect == "responses":
        out["input"] = req["input"]
        if "instructions" not in body and req.get("instructions"):
            out["instructions"] = req["instructions"]
    elif dialect == "gemini":
        out["contents"] = req["contents"]
        if not any(k in body for k in ("systemInstruction", "system_instruction")) and req.get("systemInstruction"):
            out["systemInstruction"] = req["systemInstruction"]
    else:
        if dialect == "anthropic" and "system" not in body and req.get("system"):
            out["system"] = req["system"]
        out["messages"] = req["messages"]
    return out
