"""Send what the agent sent: the client's own head and tail items around the compaction's snapshot message.

:func:`snapglyph.compact` rebuilds a whole request from neutral messages, which is right for a library caller but
loses what a proxy must keep: Responses ``developer`` messages and ``reasoning`` items (with their
``encrypted_content``), Anthropic thinking signatures and ``cache_control``, fields snapglyph does not know.
:func:`splice` keeps the rule "the request differs from what the agent sent only in its middle": it maps the
compaction's head and tail message ids back to the body's own items (:func:`item_ids`, the readers' numbering),
sends those items as they came, and takes from the compaction only the snapshot message (and the pointer of a
tail output shown as pages, written into the client's own item). The middle's reasoning items are dropped and
counted; on Anthropic the pages get one cache breakpoint, on the last page image (:func:`place_breakpoint`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ..model.messages import OPENING_USER_LINE
from ..model.snapshot_text import SNAPSHOT_PREFIX, parse_snapshot_text

__all__ = ["MAX_BREAKPOINTS", "item_ids", "place_breakpoint", "splice"]

MAX_BREAKPOINTS = 4
"""Anthropic: at most 4 ``cache_control`` breakpoints in one request (platform.claude.com/docs/en/build-with-claude/
prompt-caching, read 2026-12-04; microsoft/vscode#315505: "The Messages API allows up to 4 cache_control breakpoints
per request")."""

_FIELD = {"openai": "messages", "anthropic": "messages", "responses": "input", "gemini": "contents"}
_SYSTEM = {"anthropic": ("system",), "responses": ("instructions",),
           "gemini": ("systemInstruction", "system_instruction")}
_ASSISTANT_SIDE = frozenset({"reasoning", "function_call", "custom_tool_call"})


def _texts(content: Any) -> list[str]:
    """The text of a message's content: a string, or the ``text`` of its text-like blocks/parts."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]


def _user_texts(item: Any, dialect: str) -> list[str] | None:
    """The texts of a user item, or None for an item of another role."""
    if not isinstance(item, dict):
        return None
    if dialect == "gemini":
        return _texts(item.get("parts")) if item.get("role", "user") == "user" else None
    if item.get("role") != "user" or item.get("type", "message") != "message":
        return None
    return _texts(item.get("content"))


def _splits(item: Any, dialect: str) -> int:
    """1 where the readers split ``item`` in two (a user turn of tool results and text: Anthropic, Gemini,
    :func:`snapglyph.model.messages.split_user_text`), else 0; no cut falls between the two."""
    if not isinstance(item, dict) or item.get("role", "user") != "user":
        return 0
    blocks = item.get("parts") if dialect == "gemini" else item.get("content") if dialect == "anthropic" else None
    if not isinstance(blocks, list):
        return 0
    kinds = {("result" if (b.get("type") == "tool_result" or "functionResponse" in b or "function_response" in b)
              else "text" if (b.get("type") == "text" or (dialect == "gemini" and "text" in b)) else "")
             for b in blocks if isinstance(b, dict)}
    return int({"result", "text"} <= kinds)


def item_ids(body: dict, dialect: str) -> list[int] | None:
    """The message id of each item of ``body``'s conversation list, numbered as the readers number them.

    ``messages`` (OpenAI chat, Anthropic), ``input`` (Responses) or ``contents`` (Gemini): ids start at 1 where a
    top-level system prompt is message 0 (Anthropic ``system``, Responses ``instructions``, Gemini
    ``systemInstruction``); a run of Responses assistant-side items (an assistant ``message``, ``reasoning``,
    ``function_call``, ``custom_tool_call``) is one message (:func:`snapglyph.readers.responses.read_responses`).

    Returns
    -------
    list of int or None
        One id per item; None where the readers number otherwise: a body holding a snapglyph snapshot (its
        message takes the ids it covers) or snapglyph's opening line, a string ``input``, or no list at all.

    Examples
    --------
    >>> item_ids({"instructions": "be brief", "input": [
    ...     {"type": "message", "role": "developer", "content": "sandbox: read-only"},
    ...     {"type": "message", "role": "user", "content": "fix it"},
    ...     {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"},
    ...     {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
    ...     {"type": "function_call_output", "call_id": "c1", "output": "a.py"}]}, "responses")
    [1, 2, 3, 3, 4]
    >>> item_ids({"system": "s", "messages": [{"role": "user", "content": "hi"}]}, "anthropic")
    [1]
    """
    items = body.get(_FIELD.get(dialect, "messages"))
    if not isinstance(items, list):
        return None
    first = 1 if any(body.get(k) for k in _SYSTEM.get(dialect, ())) else 0
    ids: list[int] = []
    nxt, open_group = first, False
    for it in items:
        texts = _user_texts(it, dialect)
        if texts and any(t.lstrip().startswith(SNAPSHOT_PREFIX) and parse_snapshot_text(t) for t in texts):
            return None
        t = it.get("type", "message" if "role" in it else None) if isinstance(it, dict) else None
        side = dialect == "responses" and (t in _ASSISTANT_SIDE or (t == "message" and it.get("role") == "assistant"))
        if not (side and open_group):
            nxt += 1
        ids.append(nxt - 1)
        nxt += _splits(it, dialect)  # the reader gives the user's words beside tool results an id of their own
        open_group = side
    users = [k for k, it in enumerate(items) if _user_texts(it, dialect) is not None]
    if users and _user_texts(items[users[0]], dialect) == [OPENING_USER_LINE]:
        return None
    return ids


def _is_snapshot(item: Any, dialect: str) -> bool:
    texts = _user_texts(item, dialect)
    return bool(texts) and parse_snapshot_text(texts[-1]) is not None


def _reasoning(items: list, dialect: str) -> int:
    """Reasoning items (Responses), thinking blocks (Anthropic), reasoning fields (OpenAI chat) in ``items``."""
    if dialect == "responses":
        return sum(1 for it in items if isinstance(it, dict) and it.get("type") == "reasoning")
    if dialect == "anthropic":
        return sum(1 for m in items if isinstance(m, dict) and isinstance(m.get("content"), list)
                   for b in m["content"] if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking"))
    if dialect == "openai":
        return sum(1 for m in items if isinstance(m, dict) for k in ("reasoning_content", "reasoning") if m.get(k))
    return 0


def splice(body: dict, dialect: str, res: Any) -> tuple[dict, list[str]] | None:
    """The client's ``body`` with only its middle replaced by the compaction's snapshot message.

    Parameters
    ----------
    body : dict
        The request as the client sent it (not modified).
    dialect : str
    res : CompactResult
        The compaction of ``body`` (:func:`snapglyph.compact`): its ``request``, ``head_ids``, ``tail_ids`` and
        ``paged``.

    Returns
    -------
    (dict, list of str) or None
        The body to send and what to say about it (reasoning items dropped with the middle, cache breakpoints
        dropped); None where the ids cannot be mapped back (see :func:`item_ids`) or the compaction's snapshot
        message or a tail pointer cannot be found: the caller then sends the compaction's own rebuild.

    Examples
    --------
    >>> from snapglyph import compact
    >>> body = {"model": "gpt-5", "instructions": "be brief", "store": False, "input": [
    ...     {"type": "message", "role": "developer", "content": "approval: never"},
    ...     {"type": "message", "role": "user", "content": "the task"}] + [
    ...     {"type": "message", "role": "user" if i % 2 else "assistant", "content": f"step {i} " + "word " * 600,
    ...      "x": i} for i in range(9)]}
    >>> res = compact(body, dialect="responses", profile="openai", budget=5000, max_tokens=100)
    >>> out, notes = splice(body, "responses", res)
    >>> tail = out["input"][3:]
    >>> out["input"][:2] == body["input"][:2], tail == body["input"][-len(tail):], out["instructions"]
    (True, True, 'be brief')
    >>> out["input"][2]["content"][-1]["text"].startswith("snapglyph snapshot:"), notes
    (True, [])
    """
    field = _FIELD.get(dialect)
    ids = item_ids(body, dialect)
    req = res.request.get(field) if isinstance(res.request, dict) else None
    if ids is None or not isinstance(req, list) or not res.tail_ids:
        return None
    snaps = [k for k, it in enumerate(req) if _is_snapshot(it, dialect)]
    if len(snaps) != 1:
        return None
    items = body[field]
    head_last = max(res.head_ids) if res.head_ids else -1
    first_tail = min(res.tail_ids)
    head = [it for it, i in zip(items, ids) if i <= head_last]
    middle = [it for it, i in zip(items, ids) if head_last < i < first_tail]
    tail = [it for it, i in zip(items, ids) if i >= first_tail]
    tail_ids = [i for i in ids if i >= first_tail]
    for mid in sorted({p[0] for p in getattr(res, "paged", None) or []}):
        tail = _with_pointers(tail, tail_ids, mid, req[snaps[0] + 1:], dialect)
        if tail is None:
            return None
    snapshot = copy.deepcopy(req[snaps[0]])
    out = dict(body)
    out[field] = head + [snapshot] + tail
    notes = []
    n = _reasoning(middle, dialect)
    if n:
        notes.append(f"{n} reasoning item{'s' if n != 1 else ''} of the middle dropped")
    if dialect == "anthropic":
        notes += place_breakpoint(out, len(head))
    return out, notes


# -- tail outputs shown as pages: the compaction's pointer written into the client's own item -----------------------
def _pointers(items: list, mid: int, dialect: str) -> list[tuple[str, Any, Any]]:
    """``(kind, key, new content)`` of each pointer to message ``mid`` in the compaction's tail items: ``kind`` is
    ``result`` (``key`` the call id) or ``text`` (``key`` the pointer's 1-based ordinal)."""
    mark = f" of message #{mid} ("
    out: list[tuple[str, Any, Any]] = []
    for it in items:
        if not isinstance(it, dict) or mark not in json.dumps(it, ensure_ascii=False):
            continue
        if dialect == "anthropic":
            for b in it.get("content") if isinstance(it.get("content"), list) else []:
                if b.get("type") == "tool_result" and mark in json.dumps(b.get("content"), ensure_ascii=False):
                    out.append(("result", b.get("tool_use_id"), b.get("content")))
                elif b.get("type") == "text" and mark in b.get("text", ""):
                    out.append(("text", _ordinal(b["text"]), b["text"]))
        elif dialect == "openai" and it.get("role") == "tool":
            out.append(("result", it.get("tool_call_id"), it.get("content")))
        elif dialect == "responses" and it.get("type") == "function_call_output":
            out.append(("result", it.get("call_id"), it.get("output")))
        else:
            out += [("text", _ordinal(t), t) for t in _texts(it.get("content")) if mark in t]
    return out


def _ordinal(pointer: str) -> int:
    from ..compaction.tail_paging import POINTER_RE
    m = POINTER_RE.match(pointer)
    return int(m.group(2)) if m else 0


def _set_result(item: dict, call_id: Any, content: Any, dialect: str) -> bool:
    if dialect == "anthropic":
        for b in item.get("content") if isinstance(item.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == call_id:
                b["content"] = content
                return True
        return False
    key, idk = ("content", "tool_call_id") if dialect == "openai" else ("output", "call_id")
    if item.get(idk) == call_id:
        item[key] = content
        return True
    return False


def _set_text(item: dict, ordinal: int, text: str) -> bool:
    c = item.get("content")
    if isinstance(c, str):
        if ordinal == 1 and c.strip():
            item["content"] = text
            return True
        return False
    k = 0
    for b in c if isinstance(c, list) else []:
        if isinstance(b, dict) and isinstance(b.get("text"), str) and b["text"].strip():
            k += 1
            if k == ordinal:
                b["text"] = text
                return True
    return False


def _with_pointers(tail: list, tail_ids: list[int], mid: int, compacted: list, dialect: str) -> list | None:
    """``tail`` with message ``mid``'s outputs shown as pages replaced by the compaction's pointers, in copies of
    the client's own items (their other fields kept); None where a pointer has no place to go."""
    ptrs = _pointers(compacted, mid, dialect)
    spots = [k for k, i in enumerate(tail_ids) if i == mid]
    if not ptrs or not spots:
        return None
    tail = list(tail)
    for k in spots:
        tail[k] = copy.deepcopy(tail[k])
    for kind, key, new in ptrs:
        if kind == "result":
            done = any(_set_result(tail[k], key, new, dialect) for k in spots)
        else:
            done = len(spots) == 1 and _set_text(tail[spots[0]], key, new)
        if not done:
            return None
    return tail


# -- Anthropic cache breakpoints ------------------------------------------------------------------------------------
def _marked(body: dict) -> list[tuple[str, int, dict]]:
    """Every block carrying ``cache_control``, in prompt order (tools, system, messages): ``(where, message index
    or -1, block)``."""
    found: list[tuple[str, int, dict]] = []
    for t in body.get("tools") if isinstance(body.get("tools"), list) else []:
        if isinstance(t, dict) and "cache_control" in t:
            found.append(("tools", -1, t))
    for b in body.get("system") if isinstance(body.get("system"), list) else []:
        if isinstance(b, dict) and "cache_control" in b:
            found.append(("system", -1, b))
    for i, m in enumerate(body.get("messages") or []):
        for b in m.get("content") if isinstance(m, dict) and isinstance(m.get("content"), list) else []:
            if not isinstance(b, dict):
                continue
            if "cache_control" in b:
                found.append(("messages", i, b))
            inner = b.get("content") if b.get("type") == "tool_result" else None
            found += [("messages", i, q) for q in inner if isinstance(q, dict) and "cache_control" in q] if \
                isinstance(inner, list) else []
    return found


def place_breakpoint(body: dict, snap: int) -> list[str]:
    """Give the snapshot message ``body["messages"][snap]`` one cache breakpoint, on its last page image, and keep
    the client's own breakpoints: only where the request would exceed :data:`MAX_BREAKPOINTS` are the client's
    oldest ones dropped (the body's containers holding them are copied first; the client's body is not modified).

    The page breakpoint takes ``ttl: "1h"`` when a client breakpoint after it has one (Anthropic: a longer TTL must
    come before a shorter one, platform.claude.com/docs/en/build-with-claude/prompt-caching, read 2026-12-04).

    Returns
    -------
    list of str
        What was dropped, to be said in the log line (empty when nothing was).

    Examples
    --------
    >>> cc = {"type": "ephemeral"}
    >>> img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}}
    >>> body = {"system": [{"type": "text", "text": f"s{i}", "cache_control": cc} for i in range(3)],
    ...         "messages": [{"role": "user", "content": [dict(img), dict(img), {"type": "text", "text": "t"}]},
    ...                      {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": cc}]}]}
    >>> place_breakpoint(body, 0)
    ["1 of the client's cache breakpoints dropped (the oldest, system): Anthropic allows 4 per request"]
    >>> ["cache_control" in b for b in body["system"] + body["messages"][0]["content"]]
    [False, True, True, False, True, False]
    """
    msgs = body["messages"] = list(body["messages"])
    snapshot = msgs[snap] = copy.deepcopy(msgs[snap])
    blocks = snapshot.get("content") if isinstance(snapshot.get("content"), list) else []
    for b in blocks:
        b.pop("cache_control", None)
    images = [b for b in blocks if b.get("type") == "image"]
    theirs = [(w, i, b) for w, i, b in _marked(body) if i != snap]
    later = [b for w, i, b in theirs if w == "messages" and i > snap]
    if images:
        ttl = "1h" if any(isinstance(b["cache_control"], dict) and b["cache_control"].get("ttl") == "1h"
                          for b in later) else None
        images[-1]["cache_control"] = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    excess = len(theirs) + bool(images) + ("cache_control" in body) - MAX_BREAKPOINTS
    if excess <= 0:
        return []
    _copy_containers(body)
    oldest = [(w, b) for w, i, b in _marked(body) if i != snap][:excess]
    for _, b in oldest:
        del b["cache_control"]
    gone = [w for w, _ in oldest]
    return [f"{len(gone)} of the client's cache breakpoints dropped (the oldest, {', '.join(dict.fromkeys(gone))}): "
            f"Anthropic allows {MAX_BREAKPOINTS} per request"]


def _copy_containers(body: dict) -> None:
    """Deep copies of ``tools``, ``system`` and ``messages`` in ``body`` (so that dropping a breakpoint never
    touches the client's own objects)."""
    for k in ("tools", "system", "messages"):
        if isinstance(body.get(k), list):
            body[k] = copy.deepcopy(body[k])
