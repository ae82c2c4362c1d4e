"""Tool names a provider accepts: the rule per dialect, and a deterministic repair of the names that break it.

Rules (read 2026-12-01):

- Anthropic: ``Tool.name`` "Must match the regex ^[a-zA-Z0-9_-]{1,64}$" (Messages API reference,
  platform.claude.com/docs/en/api/messages, as mirrored at schemas.apis.io/schemas/claude/claude-tool); the 400 is
  ``tools.7.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`` (apify/tester-mcp-client#11), and a
  ``tool_use`` block must name a defined tool.
- OpenAI chat and Responses: ``function.name`` "Must be a-z, A-Z, 0-9, or contain underscores and dashes, with a
  maximum length of 64" (platform.openai.com/docs/api-reference/chat/create, FunctionDefinition); a call of
  ``multi_tool_use.parallel`` replayed in the history is refused with "does not match ^[a-zA-Z0-9_-]{1,64}$"
  (portkey.ai/error-library/input-validation-error-10046).
- Gemini: ``FunctionDeclaration.name`` "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain
  underscores, dots, colons and dashes, with a maximum length of 64", while ``FunctionCall.name`` allows only
  "a-z, A-Z, 0-9, underscores and dashes, with a maximum length of 64" (ai.google.dev/api/caching#FunctionDeclaration,
  as in googleapis/java-genai and the generativelanguage v1beta types): the names both take are used.

A name that breaks its dialect's rule gets a new one: every other character replaced by ``_`` (an empty name reads
``tool``), cut to fit, and a
suffix of 4 hex digits of the old name's SHA-1, so two names never merge into one, the same name gets the same new
name in every request and every pass (a renamed name keeps the rule and is never renamed again), and a name the
conversation already uses is never taken.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from ..model.messages import Message

__all__ = ["TOOL_NAME_RULES", "rename_tools", "safe_tool_names", "tool_name_ok"]

_COMMON = r"^[a-zA-Z0-9_-]{1,64}$"
#: The pattern each dialect's tool names (definitions and calls) must match, as the providers state it.
TOOL_NAME_RULES = {"anthropic": _COMMON, "openai": _COMMON, "responses": _COMMON,
                   "gemini": r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$"}
_RULES = {d: re.compile(p) for d, p in TOOL_NAME_RULES.items()}
_OTHER = re.compile(r"[^a-zA-Z0-9_-]")


def tool_name_ok(name: Any, dialect: str) -> bool:
    """Whether ``name`` is a tool name the ``dialect``'s provider accepts (:data:`TOOL_NAME_RULES`).

    Examples
    --------
    >>> tool_name_ok("read_file", "anthropic"), tool_name_ok("multi_tool_use.parallel", "openai")
    (True, False)
    >>> tool_name_ok("7zip", "openai"), tool_name_ok("7zip", "gemini")
    (True, False)
    """
    return isinstance(name, str) and _RULES[dialect].fullmatch(name) is not None


def _candidate(name: str, dialect: str, digits: int) -> str:
    suffix = "_" + hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:digits]
    base = _OTHER.sub("_", name) or "tool"
    if dialect == "gemini" and not re.match(r"[a-zA-Z_]", base):
        base = "_" + base
    return base[:64 - len(suffix)] + suffix


def safe_tool_names(names: Iterable[str], dialect: str, earlier: Iterable[str] = ()) -> dict[str, str]:
    """A new name for each of ``names`` the ``dialect`` refuses; the names it accepts are not in the mapping.

    Parameters
    ----------
    names : iterable of str
        Every tool name of the request (definitions, calls, results, ``tool_choice``).
    dialect : str
    earlier : iterable of str
        Refused names that only calls and results hold while no definition does (messages of an earlier
        compaction restored from the store beside its renamed definitions).

    Returns
    -------
    dict
        ``{old name: new name}``, the new names matching the dialect's rule, distinct from each other and from
        every other name of ``names``; but a name of ``earlier`` whose first new name is in ``names`` keeps that
        name (an earlier pass gave it).

    Examples
    --------
    >>> safe_tool_names(["read", "multi_tool_use.parallel", ""], "openai")
    {'': 'tool_da39', 'multi_tool_use.parallel': 'multi_tool_use_parallel_ee14'}
    >>> safe_tool_names(["fs.read", "fs_read_3b59"], "openai")   # a tool of that name: never taken
    {'fs.read': 'fs_read_3b59cd'}
    >>> safe_tool_names(["fs.read", "fs_read_3b59"], "openai", earlier={"fs.read"})   # named so by a first pass
    {'fs.read': 'fs_read_3b59'}
    """
    names, earlier = set(names), set(earlier)
    taken = set(names)
    out: dict[str, str] = {}
    for name in sorted(n for n in names if not tool_name_ok(n, dialect)):
        digits = 4
        new = _candidate(name, dialect, digits)
        if name in earlier and new in names and new not in out.values():  # the name an earlier pass gave it
            out[name] = new
            continue
        while new in taken:  # another name already reads so: a longer hash
            digits += 2
            new = _candidate(name, dialect, digits)
        out[name] = new
        taken.add(new)
    return out


def _rename_choice(v: Any, mapping: dict[str, str]) -> Any:
    """``tool_choice`` / ``toolConfig`` with every tool name in it renamed (any nesting)."""
    if isinstance(v, dict):
        return {k: (mapping.get(x, x) if k == "name" and isinstance(x, str) else
                    [mapping.get(n, n) if isinstance(n, str) else n for n in x]
                    if k in ("allowedFunctionNames", "allowed_function_names") and isinstance(x, list)
                    else _rename_choice(x, mapping)) for k, x in v.items()}
    if isinstance(v, list):
        return [_rename_choice(x, mapping) for x in v]
    return v


def _choice_names(v: Any) -> list[str]:
    if isinstance(v, dict):
        out = [x for k, x in v.items() if k == "name" and isinstance(x, str)]
        for k, x in v.items():
            if k in ("allowedFunctionNames", "allowed_function_names") and isinstance(x, list):
                out += [n for n in x if isinstance(n, str)]
            else:
                out += _choice_names(x)
        return out
    return [n for x in v for n in _choice_names(x)] if isinstance(v, list) else []


_CHOICE_KEYS = ("tool_choice", "toolConfig", "tool_config")


def rename_tools(messages: Sequence[Message], tools: Sequence[dict], params: dict, dialect: str
                 ) -> tuple[list[Message], list[dict], dict, dict[str, str]]:
    """The request's tool names the ``dialect`` refuses renamed the same way everywhere: tool calls, tool results,
    tool definitions and the tool choice (:func:`safe_tool_names`).

    Parameters
    ----------
    messages : sequence of Message
        Normalized messages (not modified).
    tools : sequence of dict
        Neutral tool definitions ``{"name", ...}`` (not modified).
    params : dict
        Request parameters in the dialect's terms (not modified).
    dialect : str

    Returns
    -------
    (messages, tools, params, mapping)
        New lists and dict where a name changed (unchanged messages are the same objects), and ``{old: new}``.

    Examples
    --------
    >>> from snapglyph.model.messages import Part
    >>> msgs = [Message(1, "assistant", [Part("tool_call", name="fs.read", call_id="c1")]),
    ...         Message(2, "tool", [Part("tool_result", name="fs.read", call_id="c1")])]
    >>> out, tools, params, mapping = rename_tools(msgs, [{"name": "fs.read"}], {"tool_choice": "auto"},
    ...                                            "anthropic")
    >>> mapping, out[0].parts[0].name, out[1].parts[0].name, tools
    ({'fs.read': 'fs_read_3b59'}, 'fs_read_3b59', 'fs_read_3b59', [{'name': 'fs_read_3b59'}])
    """
    names = {p.name for m in messages for p in m.parts if p.kind == "tool_call"}
    names |= {p.name for m in messages for p in m.parts if p.kind == "tool_result" and p.name}
    defined = {t.get("name") for t in tools if isinstance(t.get("name"), str)}
    names |= defined
    names |= {n for k in _CHOICE_KEYS if k in params for n in _choice_names(params[k])}
    mapping = safe_tool_names(names, dialect, earlier=names - defined if defined else ())
    if not mapping:
        return list(messages), list(tools), dict(params), {}
    out = []
    for m in messages:
        parts = [replace(p, name=mapping[p.name]) if p.kind in ("tool_call", "tool_result") and p.name in mapping
                 and (p.name or p.kind == "tool_call") else p for p in m.parts]
        out.append(replace(m, parts=parts) if any(a is not b for a, b in zip(parts, m.parts)) else m)
    tools = [{**t, "name": mapping[t["name"]]} if t.get("name") in mapping else t for t in tools]
    params = {k: _rename_choice(v, mapping) if k in _CHOICE_KEYS else v for k, v in params.items()}
    return out, tools, params, mapping
