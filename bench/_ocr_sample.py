"""Samples for bench/ocr.py: prose and code from the real transcripts, and a seeded set of exact identifiers.

Everything here is deterministic (fixed seeds, sorted files) and printable ASCII, since tesseract's ``eng`` model
reads nothing else. Nothing here renders or reads pixels.

- :func:`transcripts`: the conversations in ``../shared/data`` as neutral messages (one list per file).
- :func:`prose_and_code`: two documents cut from them. A line is prose or code by
  :func:`snapglyph.raster.blocks.classify_lines` (``P`` lines of conversation text are prose) and
  :func:`snapglyph.raster.blocks.find_blocks` (the lines of a block are code), so "code" is what the ``auto`` layout
  keeps in shape: listings, diffs, logs, tables, source. Chunks are taken round-robin over the files.
- :func:`identifiers` and :func:`identifier_messages`: about 200 identifiers (git SHAs, UUIDs, paths with line
  numbers, long numbers, base64 tokens) set inside realistic prose and tool output, as messages.
"""

from __future__ import annotations

import base64
import random
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
KINDS = ("sha", "uuid", "path:line", "number", "base64")
COUNTS = {"sha": 50, "uuid": 40, "path:line": 40, "number": 30, "base64": 40}  # 200 in all
SEED = 20261201
MAX_CHUNK_LINES = 24


def transcripts() -> list[tuple[str, list]]:
    """``(name, messages)`` of every transcript under ``../shared/data`` that snapglyph reads, sorted by path."""
    from snapglyph.errors import SnapglyphError
    from snapglyph.readers.registry import load

    out = []
    skip = ("LICENSE", "SOURCE", "README")
    for f in sorted(p for p in DATA.glob("*/*") if p.is_file() and not p.name.startswith(skip)):
        try:
            msgs = load(f).messages
        except SnapglyphError:
            continue
        if msgs:
            out.append((f"{f.parent.name}/{f.name}", msgs))
    return out


def _ascii(line: str) -> str | None:
    line = line.expandtabs(4).rstrip()
    return line if all(32 <= ord(c) < 127 for c in line) else None


def _chunks(messages) -> tuple[list[str], list[tuple[str, int]]]:
    """Prose paragraphs and code chunks ``(text, style)`` of one conversation, in order."""
    from snapglyph.model.document import STYLE_HEADER, STYLE_TEXT, build_document
    from snapglyph.raster.blocks import classify_lines, find_blocks, split_lines

    prose, code = [], []
    for seg in build_document(messages).segments:
        if seg.style == STYLE_HEADER or "\n" not in seg.text and len(seg.text) < 80:
            continue
        lines = split_lines(seg.text)
        in_block = [False] * len(lines)
        for a, b in find_blocks(seg.text, seg.style):
            for i in range(a, b):
                in_block[i] = True
            for s in range(a, b, MAX_CHUNK_LINES):
                got = [_ascii(x) for x in lines[s:min(b, s + MAX_CHUNK_LINES)]]
                if all(x is not None for x in got) and sum(1 for x in got if x.strip()) >= 3:
                    code.append(("\n".join(got).strip("\n"), seg.style))
        if seg.style == STYLE_TEXT:
            kinds = classify_lines(lines, seg.style)
            for line, kind, blk in zip(lines, kinds, in_block):
                a = _ascii(line)
                if kind == "P" and not blk and a is not None:
                    prose.append(a.strip())
    return prose, code


def prose_and_code(convs, chars: int) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Two samples of about ``chars`` characters each: prose paragraphs and code chunks as ``(text, style)``.

    Chunks are shuffled per file with a fixed seed, de-duplicated, and taken one file after the other in turn, so
    no single transcript dominates.
    """
    per_file = []
    for i, (_, msgs) in enumerate(convs):
        prose, code = _chunks(msgs)
        rng = random.Random(SEED + i)
        rng.shuffle(prose)
        rng.shuffle(code)
        per_file.append((prose, code))
    out = []
    for which in (0, 1):
        seen, got, total = set(), [], 0
        queues = [list(f[which]) for f in per_file if f[which]]
        while queues and total < chars:
            for q in list(queues):
                if not q:
                    queues.remove(q)
                    continue
                item = q.pop()
                text = item if which == 0 else item[0]
                if text in seen:
                    continue
                seen.add(text)
                got.append((item, 0) if which == 0 else item)
                total += len(text) + 1
                if total >= chars:
                    break
        out.append(got)
    return out[0], out[1]


def _path(rng: random.Random) -> str:
    dirs = ["src", "lib", "app", "tests", "pkg", "internal", "core", "api", "utils", "models", "handlers", "cmd"]
    names = ["server", "render", "parser", "client", "session", "config", "router", "cache", "store", "worker",
             "schema", "auth", "jobs", "views", "migrate", "compact", "tokens", "fields", "layout", "pool"]
    ext = rng.choice([".py", ".ts", ".go", ".rs", ".js", ".java", ".tsx", ".c"])
    parts = [rng.choice(dirs) for _ in range(rng.randint(1, 3))] + [rng.choice(names) + rng.choice(["", "_test",
                                                                                                     "_utils", "2"])]
    tail = f":{rng.randint(1, 2999)}" + (f":{rng.randint(1, 80)}" if rng.random() < 0.3 else "")
    return "/".join(parts) + ext + tail


def identifiers(seed: int = SEED) -> list[tuple[str, str]]:
    """The fixed identifier set: ``(kind, text)`` pairs, :data:`COUNTS` of each kind of :data:`KINDS`, shuffled.

    >>> ids = identifiers()
    >>> len(ids), len({t for _, t in ids}), ids == identifiers()
    (200, 200, True)
    """
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for _ in range(COUNTS["sha"]):
        n = 40 if rng.random() < 0.6 else rng.randint(7, 12)
        out.append(("sha", "".join(rng.choice("0123456789abcdef") for _ in range(n))))
    out += [("uuid", str(uuid.UUID(int=rng.getrandbits(128), version=4))) for _ in range(COUNTS["uuid"])]
    out += [("path:line", _path(rng)) for _ in range(COUNTS["path:line"])]
    for _ in range(COUNTS["number"]):
        n = rng.randint(5, 13)
        out.append(("number", str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(n - 1))))
    for _ in range(COUNTS["base64"]):
        raw = rng.randbytes(rng.randint(12, 33))
        out.append(("base64", (base64.urlsafe_b64encode if rng.random() < 0.3 else base64.b64encode)(raw).decode()))
    rng.shuffle(out)
    return out


_PROSE = {
    "sha": ["The regression starts at commit {x}, so I will bisect.", "I checked out {x} and the test passes.",
            "Reverting {x} fixes the build."],
    "uuid": ["Request {x} timed out after 30 s.", "Session {x} is the one the user reported.",
             "I created the record {x} for the new workspace."],
    "path:line": ["The exception is raised at {x}, where the value is None.", "See {x}: the offset never moves.",
                  "I changed the guard at {x} to return early."],
    "number": ["The table now holds {x} rows.", "The job peaked at {x} bytes of memory.",
               "Order {x} is the duplicate."],
    "base64": ["The webhook signature was {x} and it matched.", "The next page cursor is {x}; pass it back.",
               "Use the token {x} only for the test tenant."],
}
_TOOL = {
    "sha": ["commit {x}\nAuthor: Dana Reyes <dana@example.com>", "{x} fix: keep the offset when a page is empty",
            "HEAD is now at {x} Merge branch 'release'"],
    "uuid": ["2026-11-30T14:02:11Z INFO request_id={x} status=200 ms=41", '  "id": "{x}",',
             "DELETE /api/v2/items/{x} -> 204"],
    "path:line": ["{x}: error: unused variable 'n' [-Wunused]", "FAILED {x} - AssertionError: 3 != 4",
                  "  File {x}, in handle_request"],
    "number": ["rows affected: {x}", "  size: {x}", "Processed {x} events (0 dropped)"],
    "base64": ['  "cursor": "{x}",', "Authorization: Bearer {x}", "etag: {x}"],
}


def identifier_messages(ids: list[tuple[str, str]], seed: int = SEED) -> list:
    """Messages that show every identifier of ``ids`` once: assistant prose and tool output, 3-6 per message.

    >>> ms = identifier_messages(identifiers())
    >>> text = "".join(p.text for m in ms for p in m.parts) + "".join(c.text for m in ms for p in m.parts
    ...                                                                  for c in p.content)
    >>> all(x in text for _, x in identifiers())
    True
    """
    from snapglyph.model.messages import Message, Part

    rng = random.Random(seed + 1)
    msgs, i, mid = [], 0, 0
    while i < len(ids):
        n = rng.randint(3, 6)
        group, i = ids[i:i + n], i + n
        if mid % 2 == 0:
            text = " ".join(rng.choice(_PROSE[k]).format(x=x) for k, x in group)
            msgs.append(Message(mid, "assistant", [Part("text", text=text)]))
        else:
            text = "\n".join(rng.choice(_TOOL[k]).format(x=x) for k, x in group)
            msgs.append(Message(mid, "tool", [Part("tool_result", call_id=f"c{mid}",
                                                   content=[Part("text", text=text)])]))
        mid += 1
    return msgs
