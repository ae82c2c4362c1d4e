"""Conversations for the door tests: many conversations that open with the same words, each carrying its own marker
in every file it reads, and a scripted model (for :class:`snapglyph.testing.Simulator`) that drives each one from the
verbatim tail of the request it receives: read the next file, then recall message #3, then answer with the marker
the recall returned. Stateless, so any number of conversations can interleave through one simulator.

``check_apart`` asserts what the issue asks of every door: no request the simulator received holds another
conversation's marker, and no store holds two conversations' messages.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from snapglyph import SourceStore
from snapglyph.testing import answer, call

OPENING = "Read all files."
WINDOW = 6000            # the simulator's window for these conversations: each overflows once, near its end
SYSTEM = "Read files."
MARK = re.compile(r"\bconv\d\d\b")


def marker(k: int) -> str:
    return f"conv{k:02d}"


def files(k: int, n: int = 5, lines: int = 110) -> dict[str, str]:
    """Conversation ``k``'s files: each line names the conversation; each file ends naming the next one."""
    out = {}
    for i in range(n):
        nxt = f"f{i + 1}.txt" if i + 1 < n else "recall"
        out[f"f{i}.txt"] = "".join(f"{marker(k)} line {j} of file {i}: value={j * (i + 1)}\n"
                                   for j in range(lines)) + f"next: {nxt}\n"
    return out


def read_file_text(k: int, path: str) -> str:
    return files(k)[path]


def _last_tool_text(dialect: str, body: dict) -> str | None:
    items = body.get("input") if dialect == "responses" else body.get("messages")
    last = items[-1] if isinstance(items, list) and items else {}
    if dialect == "responses":
        return last.get("output") if last.get("type") == "function_call_output" else None
    if last.get("role") != "tool":
        return None
    content = last.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content


def script(dialect: str, body: dict):
    """The model: the next file, then ``recall_messages("#3")``, then ``done convNN`` (the recalled marker)."""
    text = _last_tool_text(dialect, body)
    if text is None:
        return call(("read_file", {"path": "f0.txt"}))
    if text.startswith("#3: "):
        found = MARK.search(text)
        return answer(f"done {found.group(0) if found else 'none'}")
    nxt = re.search(r"next: (\S+)\s*$", text)
    if nxt and nxt.group(1) != "recall":
        return call(("read_file", {"path": nxt.group(1)}))
    return call(("recall_messages", {"ids": "#3"}))


def history(k: int, upto: int = 3) -> list[dict]:
    """Conversation ``k`` as OpenAI chat messages: the opening, then ``upto`` file reads with their results."""
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": OPENING}]
    for i, (name, text) in enumerate(list(files(k).items())[:upto]):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{k}_{i}", "type": "function", "function": {"name": "read_file",
                                                                    "arguments": json.dumps({"path": name})}}]})
        msgs.append({"role": "tool", "tool_call_id": f"call_{k}_{i}", "content": text})
    return msgs


def check_apart(log: list[dict], folder: Path | None = None) -> dict[str, int]:
    """Every request ``log`` holds names at most one conversation; every store in ``folder`` holds one; the
    conversations' requests interleaved (more switches from one to another than conversations). Returns
    ``{marker: requests}``."""
    seen: dict[str, int] = {}
    order: list[str] = []
    for entry in log:
        raw = entry["raw"].decode("utf-8", "replace") if isinstance(entry["raw"], bytes) else entry["raw"]
        marks = set(MARK.findall(raw))
        assert len(marks) <= 1, f"request #{entry.get('n')} mixes conversations {sorted(marks)}"
        for m in marks:
            seen[m] = seen.get(m, 0) + 1
            order.append(m)
    if len(seen) > 1:
        switches = sum(a != b for a, b in zip(order, order[1:]))
        assert switches >= len(seen), f"the conversations ran one after another ({switches} switches)"
    for path in sorted(Path(folder).glob("*.store.jsonl")) if folder is not None else []:
        store = SourceStore(path)
        marks = {m for i in store for p in store.get(i).parts if p.text for m in MARK.findall(p.text)}
        assert len(marks) <= 1, f"store {path.name} mixes conversations {sorted(marks)}"
    return seen


def recall_answers(log: list[dict], dialect: str) -> list[str]:
    """The text of every ``recall_messages`` answer sent to the simulator (the last tool result of a request that
    starts ``#3: ``), one per request that carried it."""
    out = []
    for entry in log:
        try:
            body = json.loads(entry["raw"])
        except ValueError:
            continue
        text = _last_tool_text(dialect, body)
        if text is not None and text.startswith("#3: "):
            out.append(text)
    return out
