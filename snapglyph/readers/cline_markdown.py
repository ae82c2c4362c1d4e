"""Reader for Cline and Roo Code task exports written as Markdown (``cline_task_<date>.md``, ``roo_task_<date>.md``).

Schema source: ``downloadTask`` and ``formatContentBlockToMarkdown`` in ``src/integrations/misc/export-markdown.ts``
of github.com/cline/cline (Roo Code keeps the same function; read 2026-12-07): each API message is written as
``**User:**`` or ``**Assistant:**``, a blank line, its content, a blank line, and the messages are joined by a
``---`` line; a text block is its text, an image ``[Image]``, a tool use ``[Tool Use: <name>]`` followed by its
input as ``Key: value`` lines, a tool result ``[Tool]`` or ``[Tool (Error)]`` followed by its content, each block on
its own lines.

The export keeps no ids, so a ``[Tool Use: name]`` block becomes a tool call with a made-up id (``md-<n>``, in
``Part.meta["made_up_id"]``) answered by the next ``[Tool]`` block; everything else is text, read as the Cline
history reader reads it (:func:`snapglyph.readers.cline.read_cline`: a person's words are what Cline wraps in
``<task>``, ``<feedback>``...). ``[Image]`` stand-ins stay text (the image is not in the file) and are counted in
``meta["images_not_exported"]``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .cline import read_cline
from .common import ReadResult

__all__ = ["is_cline_markdown", "read_cline_markdown"]

_ROLE = re.compile(r"^\*\*(User|Assistant):\*\*\n\n", re.M)
_SEP = re.compile(r"\n\n---\n\n(?=\*\*(?:User|Assistant):\*\*\n)")
_NAMES = re.compile(r"(?:cline|roo)_task_.*\.md$", re.I)
_BLOCK = re.compile(r"^\[(Tool Use: [^\]\n]+|Tool(?: \(Error\))?)\]\n", re.M)


def is_cline_markdown(text: str, name: str = "") -> bool:
    """Whether ``text`` is a Cline/Roo Markdown export: it opens with ``**User:**`` and a blank line (a file named
    ``cline_task_*.md`` / ``roo_task_*.md`` may open with either role).

    Examples
    --------
    >>> is_cline_markdown("**User:**\\n\\n<task>\\nfix it\\n</task>\\n\\n---\\n\\n**Assistant:**\\n\\nDone.\\n\\n")
    True
    >>> is_cline_markdown("# notes\\n**User:** hi")
    False
    """
    head = text.lstrip("\ufeff")
    return head.startswith("**User:**\n\n") or (bool(_NAMES.search(name)) and bool(_ROLE.match(head)))


def _blocks(role: str, body: str, n: list[int]) -> list[dict]:
    """One message's content blocks: text, and the ``[Tool Use: ...]`` / ``[Tool]`` blocks the export wrote."""
    cuts = [m.start() for m in _BLOCK.finditer(body)]
    pieces = [body[a:b] for a, b in zip([0] + cuts, cuts + [len(body)])]
    out: list[dict] = []
    for piece in pieces:
        m = _BLOCK.match(piece)
        text = piece[m.end():] if m else piece
        if m and m.group(1).startswith("Tool Use: ") and role == "assistant":
            n[0] += 1
            lines = [ln.partition(": ") for ln in text.rstrip("\n").splitlines()]
            args = {k[:1].lower() + k[1:]: v for k, sep, v in lines if sep}
            out.append({"type": "tool_use", "id": f"md-{n[0]}", "name": m.group(1)[10:], "input": args})
        elif m and m.group(1).startswith("Tool") and not m.group(1).startswith("Tool Use") and role == "user":
            out.append({"type": "tool_result", "tool_use_id": f"md-{n[0]}", "content": text.rstrip("\n"),
                        "is_error": "Error" in m.group(1)})
        elif piece.strip("\n"):
            out.append({"type": "text", "text": piece.strip("\n")})
    return out


def read_cline_markdown(text: str, path: str | None = None) -> ReadResult:
    """Read a Cline/Roo Markdown export (see the module docstring for the rules).

    Returns
    -------
    ReadResult
        No tools and no model (the export keeps neither); ``meta``: ``entries``, ``tool_calls`` (made-up ids),
        ``images_not_exported``, and the Cline reader's facts.

    Examples
    --------
    >>> md = ("**User:**\\n\\n<task>\\nlist files\\n</task>\\n\\n---\\n\\n**Assistant:**\\n\\nLooking.\\n"
    ...       "[Tool Use: list_files]\\nPath: .\\n\\n---\\n\\n**User:**\\n\\n[Tool]\\na.py\\n\\n")
    >>> msgs, _, _, meta = read_cline_markdown(md)
    >>> [m.role for m in msgs], msgs[1].parts[-1].name, msgs[1].parts[-1].arguments, meta["tool_calls"]
    (['user', 'assistant', 'tool'], 'list_files', '{"path": "."}', 1)
    """
    body = text.lstrip("\ufeff")
    n = [0]
    history: list[dict[str, Any]] = []
    for chunk in _SEP.split(body.rstrip("\n") + "\n"):
        m = _ROLE.match(chunk)
        if not m:
            continue
        role = m.group(1).lower()
        history.append({"role": role, "content": _blocks(role, chunk[m.end():], n) or [{"type": "text", "text": ""}]})
    r = read_cline(history, path)
    for msg in r.messages:
        for p in msg.parts:
            if p.kind == "tool_call" and p.call_id.startswith("md-"):
                p.meta["made_up_id"] = True
    images = sum(json.dumps(h["content"]).count("[Image]") for h in history)
    r.meta.update(tool_calls=n[0], images_not_exported=images)
    return r
