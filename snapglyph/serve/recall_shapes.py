"""The shapes of a recall round in each dialect the proxy reads: the ``recall_messages`` tool added to a request,
the model's calls of it found in an answer, the follow-up request that answers them, and the answer the client
gets (the calls taken out).

Shapes from the providers' API references, read 2026-12-01: Anthropic "Messages" and "Tool use"
(https://docs.anthropic.com/en/api/messages: ``tool_use`` content blocks, answered by ``tool_result`` blocks in the
next user message; ``stop_reason`` ``tool_use`` / ``end_turn``), OpenAI "Chat Completions"
(https://platform.openai.com/docs/api-reference/chat: ``message.tool_calls``, answered by ``role: tool`` messages;
``finish_reason`` ``tool_calls`` / ``stop``) and OpenAI "Responses"
(https://platform.openai.com/docs/api-reference/responses: ``function_call`` output items, answered by
``function_call_output`` input items; a ``reasoning`` item must be followed by the item it led to, so one right
before a recall call goes with it); Gemini's shapes are in :mod:`.recall_gemini` (``functionCall`` parts answered
by ``functionResponse`` parts).

The rules, the same streaming or not:

- an answer whose only tool calls are recall calls is a recall round: the proxy answers it and asks again;
- an answer with recall calls and the client's own calls is relayed with the recall calls taken out (the client's
  calls were written without the recalled text, so nothing waits for it; the model may ask again next turn);
- the client gets every round's answer with the recall calls (and a thinking or reasoning block right before one)
  taken out, joined into one answer that ends as the last round ended (its stop reason, id and usage).
"""

from __future__ import annotations

import json
from typing import Any

from ..compaction.recall import RECALL_TOOL_NAME, format_recall, parse_ids, recall_tool
from ..compaction.store import SourceStore
from ..errors import SnapglyphError
from ..model.message_ids import format_ranges
from . import recall_gemini as gemini

__all__ = ["STOPPED_NOTE", "calls_of", "follow_up", "merge", "offers_recall", "recall_answer", "strip",
           "with_recall_tool"]

STOPPED_NOTE = "[snapglyph serve: the model asked for earlier messages again after the last recall round; stopped]"
"""The text of an answer left empty once its recall calls are taken out (the round bound reached)."""

_THINKING = ("thinking", "redacted_thinking")


def _tool_name(t: Any) -> str | None:
    if not isinstance(t, dict):
        return None
    fn = t.get("function")
    return t.get("name") if "name" in t else (fn.get("name") if isinstance(fn, dict) else None)


def offers_recall(body: Any) -> bool:
    """Whether a request body's ``tools`` define ``recall_messages`` (in any dialect's shape).

    Examples
    --------
    >>> offers_recall({"tools": [recall_tool("openai")]}), offers_recall({"tools": [{"type": "web_search"}]})
    (True, False)
    """
    tools = body.get("tools") if isinstance(body, dict) else None
    return isinstance(tools, list) and (any(_tool_name(t) == RECALL_TOOL_NAME for t in tools) or gemini.declares(body))


def with_recall_tool(dialect: str, body: dict) -> dict:
    """``body`` with the ``recall_messages`` tool (:func:`snapglyph.recall_tool`) after the client's own tools;
    unchanged where the client defines a tool of that name itself (it answers its calls then).

    Raises
    ------
    InputError
        For an unknown dialect.

    Examples
    --------
    >>> with_recall_tool("anthropic", {"messages": []})["tools"][0]["name"]
    'recall_messages'
    >>> len(with_recall_tool("openai", {"tools": [recall_tool("openai")]})["tools"])
    1
    """
    if offers_recall(body):
        return body
    if dialect == "gemini":                         # a declaration in the first function tool
        return gemini.add_declaration(body, recall_tool(dialect))
    tools = body.get("tools") if isinstance(body.get("tools"), list) else []
    return {**body, "tools": list(tools) + [recall_tool(dialect)]}


def _arguments(raw: Any) -> str:
    """The ``ids`` a recall call asks for ("" when its arguments hold none)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return raw
    ids = raw.get("ids") if isinstance(raw, dict) else raw
    if isinstance(ids, list):
        return ", ".join(str(i) for i in ids)
    return "" if ids is None else str(ids)


def calls_of(dialect: str, reply: dict) -> tuple[list[tuple[str, str]], int]:
    """The recall calls of an answer, ``[(call id, ids asked for)]``, and how many other tool calls it makes.

    Examples
    --------
    >>> reply = {"content": [{"type": "text", "text": "checking"}, {"type": "tool_use", "id": "t1",
    ...          "name": "recall_messages", "input": {"ids": "#4"}}, {"type": "tool_use", "id": "t2",
    ...          "name": "bash", "input": {}}]}
    >>> calls_of("anthropic", reply)
    ([('t1', '#4')], 1)
    """
    if dialect == "anthropic":
        items = [(b.get("id"), b.get("name"), b.get("input")) for b in _blocks(reply) if b.get("type") == "tool_use"]
    elif dialect == "responses":
        items = [(i.get("call_id"), i.get("name"), i.get("arguments")) for i in _output(reply)
                 if i.get("type") == "function_call"]
    elif dialect == "gemini":
        items = gemini.calls(reply)
    else:
        items = [(c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments"))
                 for c in _message(reply).get("tool_calls") or [] if isinstance(c, dict)]
    recall = [(str(cid), _arguments(args)) for cid, name, args in items if name == RECALL_TOOL_NAME]
    return recall, len(items) - len(recall)


def _blocks(reply: dict) -> list[dict]:
    return [b for b in reply.get("content") or [] if isinstance(b, dict)]


def _output(reply: dict) -> list[dict]:
    return [i for i in reply.get("output") or [] if isinstance(i, dict)]


def _message(reply: dict) -> dict:
    choices = reply.get("choices") or [{}]
    msg = choices[0].get("message") if isinstance(choices[0], dict) else None
    return msg if isinstance(msg, dict) else {}


def _is_recall(dialect: str, item: dict) -> bool:
    kind = "tool_use" if dialect == "anthropic" else "function_call"
    return item.get("type") == kind and item.get("name") == RECALL_TOOL_NAME


def _without_recall(dialect: str, items: list[dict]) -> list[dict]:
    """Items less the recall calls and a thinking (reasoning) item right before one."""
    lead = _THINKING if dialect == "anthropic" else ("reasoning",)
    out: list[dict] = []
    for it in items:
        if _is_recall(dialect, it):
            while out and out[-1].get("type") in lead:
                out.pop()
            continue
        out.append(it)
    return out


def strip(dialect: str, reply: dict) -> dict:
    """An answer with its recall calls taken out; a ``tool_use`` / ``tool_calls`` stop becomes ``end_turn`` /
    ``stop`` when no tool call is left.

    Examples
    --------
    >>> r = strip("openai", {"choices": [{"message": {"role": "assistant", "content": "hm", "tool_calls": [
    ...     {"id": "c1", "type": "function", "function": {"name": "recall_messages", "arguments": "{}"}}]},
    ...     "finish_reason": "tool_calls"}]})
    >>> r["choices"][0]
    {'message': {'role': 'assistant', 'content': 'hm'}, 'finish_reason': 'stop'}
    """
    if dialect == "anthropic":
        content = _without_recall(dialect, _blocks(reply))
        out = {**reply, "content": content}
        if reply.get("stop_reason") == "tool_use" and not any(b.get("type") == "tool_use" for b in content):
            out["stop_reason"] = "end_turn"
        return out
    if dialect == "responses":
        return {**reply, "output": _without_recall(dialect, _output(reply))}
    if dialect == "gemini":
        return gemini.strip(reply)
    msg = dict(_message(reply))
    calls = [c for c in msg.get("tool_calls") or [] if (c.get("function") or {}).get("name") != RECALL_TOOL_NAME]
    msg.pop("tool_calls", None)
    if calls:
        msg["tool_calls"] = calls
    choice = {**reply["choices"][0], "message": msg}
    if choice.get("finish_reason") == "tool_calls" and not calls:
        choice["finish_reason"] = "stop"
    return {**reply, "choices": [choice] + list(reply["choices"][1:])}


def merge(dialect: str, earlier: list[dict], last: dict) -> dict:
    """The one answer the client gets: the last round's answer (its stop reason, id and usage) holding every
    round's content in order, recall calls taken out; :data:`STOPPED_NOTE` when no content is left.

    Examples
    --------
    >>> first = {"content": [{"type": "text", "text": "let me look"}, {"type": "tool_use", "id": "t1",
    ...          "name": "recall_messages", "input": {"ids": "3"}}], "stop_reason": "tool_use"}
    >>> last = {"content": [{"type": "text", "text": "the hash is 3f2a"}], "stop_reason": "end_turn"}
    >>> [b["text"] for b in merge("anthropic", [first], last)["content"]]
    ['let me look', 'the hash is 3f2a']
    """
    if dialect == "gemini":
        return gemini.merge(earlier, last, STOPPED_NOTE)
    rounds = [strip(dialect, r) for r in list(earlier) + [last]]
    out = rounds[-1]
    if dialect == "anthropic":
        content = [b for r in rounds for b in r["content"]]
        return {**out, "content": content or [{"type": "text", "text": STOPPED_NOTE}]}
    if dialect == "responses":
        output = [i for r in rounds for i in r["output"]]
        return {**out, "output": output or [{"type": "message", "role": "assistant", "status": "completed",
                                             "content": [{"type": "output_text", "text": STOPPED_NOTE,
                                                          "annotations": []}]}]}
    texts = [t for t in (_message(r).get("content") for r in rounds) if isinstance(t, str) and t]
    msg = dict(_message(out))
    msg["content"] = "\n\n".join(texts) or (None if msg.get("tool_calls") else STOPPED_NOTE)
    return {**out, "choices": [{**out["choices"][0], "message": msg}] + list(out["choices"][1:])}


def follow_up(dialect: str, body: dict, reply: dict, answers: list[tuple[str, str]]) -> dict:
    """The next request of a recall round: ``body`` (as sent) with the model's answer and the recall answers
    ``[(call id, text)]`` appended; every other field as it was.

    With ``store: false`` (Responses) the answer's items go back without their ``id`` (the provider did not keep
    them), reasoning items with their ``encrypted_content``.

    Examples
    --------
    >>> body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    >>> reply = {"choices": [{"message": {"role": "assistant", "content": None, "refusal": None, "tool_calls": [
    ...     {"id": "c1", "type": "function", "function": {"name": "recall_messages", "arguments": "{}"}}]}}]}
    >>> [m["role"] for m in follow_up("openai", body, reply, [("c1", "#3 user\\nhello")])["messages"]]
    ['user', 'assistant', 'tool']
    """
    if dialect == "anthropic":
        turn = [{"role": "assistant", "content": _blocks(reply)},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid, "content": text}
                                             for cid, text in answers]}]
        return {**body, "messages": list(body.get("messages") or []) + turn}
    if dialect == "responses":
        items = _output(reply)
        if body.get("store") is False:
            items = [i if i.get("type") == "reasoning" else {k: v for k, v in i.items() if k != "id"}
                     for i in items if i.get("type") != "reasoning" or i.get("encrypted_content")]
        inp = body.get("input")
        inp = [{"role": "user", "content": inp}] if isinstance(inp, str) else list(inp or [])
        outs = [{"type": "function_call_output", "call_id": cid, "output": text} for cid, text in answers]
        return {**body, "input": inp + items + outs}
    if dialect == "gemini":
        return gemini.follow_up(body, reply, answers)
    msg = {k: v for k, v in _message(reply).items() if k in ("role", "content", "tool_calls") and v is not None}
    msg.setdefault("content", None)
    tools = [{"role": "tool", "tool_call_id": cid, "content": text} for cid, text in answers]
    return {**body, "messages": list(body.get("messages") or []) + [msg] + tools}


def recall_answer(store: SourceStore, ids: str) -> str:
    """The text a recall call gets: each message asked for (``#id role`` and its exact source text), and one line
    for each id the store does not hold or for ids that do not parse.

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> store = SourceStore()
    >>> store.put([Message(3, "assistant", [Part("text", text="commit 3f2a9c1d")])])
    >>> print(recall_answer(store, "#3, 9"))
    #3 assistant
    commit 3f2a9c1d
    <BLANKLINE>
    #9: not held by snapglyph (no message of that id was shown as pages)
    >>> recall_answer(store, "x")
    "snapglyph could not read the ids 'x': not a message id or range: 'x' (use 12, #12, 3-9 or #3-#9)"
    """
    try:
        wanted = parse_ids(ids)
    except SnapglyphError as e:
        return f"snapglyph could not read the ids {ids!r}: {e}"
    if not wanted:
        return "snapglyph: no message ids were given (ask for ids such as \"#12\" or \"#3-#9\")"
    held = [i for i in wanted if i in store]
    blocks = [format_recall(store, held)] if held else []
    missing = [i for i in wanted if i not in store]
    if missing:
        blocks.append(f"{format_ranges(missing)}: not held by snapglyph (no message of that id was shown as pages)")
    return "\n\n".join(blocks)
