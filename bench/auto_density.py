"""Layout ``auto`` against ``dense``: source characters per image token on the real transcripts in ../shared/data,
before and after, in one run.

For each transcript that :func:`snapglyph.readers.registry.load` reads, the whole conversation is built into one
document (the default drawing: tool calls decoded, headers inline) and rendered with each layout on a profile; so
are an excerpt of code and prose (:func:`excerpt`: 16,000 characters of the Claude Code session's messages from #20
and 16,000 of the pi session's from #40) and the prose of the license texts beside the transcripts (as conversation
text and as tool output). The table gives pages, source characters shown (``Page.chars``) per image token (the
profile's own cost of each page), auto over dense, the block lines (non-blank lines of the blocks the layout plans),
the share of them broken across rows (in a band, each run of rows that start with the continuation mark in the
pages' text is one line; in a block laid out as flow, a line that the pages' rows, run together, hold across a
row's end), the share that start a row with their indentation drawn whole (every line of a band; of a flow, those
found at a row's start), the share laid out as flow, and the flow lines not found in the pages' text as this bench
spells them (a control character, a symbol's label: neither broken nor whole). Goals of issue 30: ``auto`` at
least 90% of ``dense`` on prose and 80% on code-heavy pages, at most 5% of block lines broken, none inside its
indentation.

Usage: ``python bench/auto_density.py [--profile claude] [--before /work/before] [--write]``: ``--before`` runs the
same measurement on the package found at that path (a worktree of an earlier commit; PYTHONPATH) in a subprocess;
``--write`` puts the table into bench/RESULTS.md between the ``auto-density`` markers. Skips with a reason (exit 0)
where ../shared is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

from provenance import commit_label, write_section

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "bench" / "RESULTS.md"
CONT = "\u21aa"
NL = "\u21b5"  # a newline's mark in the pages' text
CONT_LABEL = re.compile(r" #\d+ \S+ \(cont\.\) ")  # a page's first row where it opens inside a message


def files() -> list[Path]:
    skip = ("LICENSE", "SOURCE", "README")
    return sorted(p for p in DATA.glob("*/*") if p.is_file() and not p.name.startswith(skip))


def excerpt():
    """About 32,000 characters of real agent work, code and prose: messages of the Claude Code session from #20 and
    of the pi session from #40, each until 16,000 characters of text."""
    from snapglyph.model.document import Document, build_document
    from snapglyph.readers.registry import load

    segs = []
    for rel, lo in (("claude-code-spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl", 20),
                    ("pi-session/before-compaction.jsonl", 40)):
        ms = load(DATA / rel).messages
        hi = lo
        while hi < len(ms) and sum(len(s.text) for s in build_document(ms[lo:hi]).segments) < 16_000:
            hi += 1
        segs += build_document(ms[lo:hi]).segments
    return Document(segs)


def license_prose():
    """The license texts beside the transcripts, each as conversation text and as tool output."""
    from snapglyph.model.document import STYLE_DIM, STYLE_TEXT, Document, Segment

    texts = [p.read_text(encoding="utf-8") for p in sorted(DATA.glob("*/LICENSE*"))]
    return Document([Segment(t, style, i) for i, t in enumerate(texts) for style in (STYLE_TEXT, STYLE_DIM)])


def block_lines(doc, cols: int) -> tuple[int, int, list[str]]:
    """Non-blank block lines, those that start a row with their indentation drawn whole (by the rule of the
    package measured: whether it takes the common indentation off, ``MAX_PROSE_RUN`` tells), and the text of each
    line of the blocks laid out as flow (``k == 0``: without the block's common indentation, the rest of it at
    half its width, then its newline's mark), in order."""
    from snapglyph.raster import blocks
    from snapglyph.raster._codes import expand_tabs

    after = hasattr(blocks, "MAX_PROSE_RUN")
    n = whole = 0
    flow: list[str] = []
    for seg in doc.segments:
        lines = blocks.split_lines(seg.text)
        for a, b, k, colw in blocks.plan_blocks(seg.text, seg.style, cols):
            part = [expand_tabs(x) for x in lines[a:b]]
            leads = [len(x) - len(x.lstrip(" ")) for x in part if x.strip()]
            strip = min(leads, default=0) if after else 0
            n += len(leads)
            if k == 0:
                flow += [_flow_text(x, strip) + (NL if a + i + 1 < len(lines) else "")
                         for i, x in enumerate(part) if x.strip()]
                continue
            whole += sum((ld - strip <= colw // 2) if after else (ld < colw) for ld in leads)
    return n, whole, flow


_GUTTER = re.compile("([0-9]+\u2192)( *)")  # a line-number gutter


def _flow_text(x: str, strip: int) -> str:
    """A flow line as the pages show it: the indentation past ``strip`` at half, none before a line-number gutter
    (where the package measured draws none: ``flow.GUTTER_PAD`` False), the blanks after the gutter at half."""
    from snapglyph.raster import flow

    body = x.lstrip(" ")
    pad = getattr(flow, "GUTTER_PAD", True) or not _GUTTER.match(body)
    return " " * ((len(x) - len(body) - strip + 1) // 2 if pad else 0) + _gutter_half(body)


def _gutter_half(body: str) -> str:
    """A flow line's text with the blanks after its line-number gutter (digits, then an arrow) at half."""
    m = _GUTTER.match(body)
    return m[1] + " " * ((len(m[2]) + 1) // 2) + body[m.end():] if m else body


def flow_placed(pages, flow: list[str]) -> tuple[int, int, int]:
    """Where the flow lines are on the pages: each is looked for, in order, in the pages' rows run together; one
    found across a row's end is broken, one found at a row's start starts a row. Returns ``(broken, starts_row,
    not_found)`` (a line the pages do not show as the bench spells it: a control character, a symbol's label)."""
    import numpy as np

    rows = [r for p in pages for r in p.text.split("\n") if not CONT_LABEL.fullmatch(r)]
    run = "".join(rows)
    ends = np.cumsum([len(r) for r in rows])
    starts = set((ends - np.array([len(r) for r in rows])).tolist())
    broken = first = missing = pos = 0
    for line in flow:
        at = run.find(line, pos)
        if at < 0:
            missing += 1
            continue
        end = at + len(line.rstrip(NL))
        i = int(np.searchsorted(ends, at, side="right"))  # the row the line starts on
        broken += bool(i < len(ends) and end > ends[i])
        first += at in starts
        pos = end
    return broken, first, missing


def broken(pages) -> int:
    """Lines broken across rows: runs of rows of the pages' text that start with the continuation mark."""
    rows = [r for p in pages for r in p.text.split("\n") if not CONT_LABEL.fullmatch(r)]
    return sum(1 for i, r in enumerate(rows) if r.startswith(CONT) and (i == 0 or not rows[i - 1].startswith(CONT)))


def measure(prof_name: str) -> list[dict]:
    """Every document measured with the package on sys.path: a dict per document."""
    from snapglyph.errors import SnapglyphError
    from snapglyph.model.document import build_document
    from snapglyph.providers.profiles import profile
    from snapglyph.raster.render import render_document, resolve_cell
    from snapglyph.readers.registry import load

    prof = profile(prof_name)
    cols = prof.page_size[0] // resolve_cell(None, prof)[0]
    docs = [("excerpt (code and prose, 32k)", excerpt()), ("license texts (prose)", license_prose())]
    for f in files():
        try:
            docs.append((f"{f.parent.name}/{f.name[:40]}", build_document(load(f).messages)))
        except SnapglyphError:
            continue
    out = []
    for name, doc in docs:
        row = {"name": name}
        for mode in ("dense", "auto"):
            pages = render_document(doc, profile=prof, mode=mode)
            row[mode] = [len(pages), sum(p.chars for p in pages), sum(prof.image_tokens(p.width, p.height)
                                                                      for p in pages)]
            if mode == "auto":
                row["broken"], auto_pages = broken(pages), pages
        row["lines"], row["whole"], flow = block_lines(doc, cols)
        fb, first, missing = flow_placed(auto_pages, flow)
        row["broken"] += fb
        row["whole"] += first
        row["flow"], row["missing"] = len(flow), missing
        out.append(row)
    return out


def run_before(path: str, prof_name: str) -> list[dict]:
    """:func:`measure` on the package at ``path``, in a subprocess (its own imports)."""
    env = dict(os.environ, PYTHONPATH=path)
    code = (f"import sys, json; sys.path.insert(0, {str(ROOT / 'bench')!r}); import auto_density as m; "
            f"print(json.dumps(m.measure({prof_name!r})))")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                          cwd=path)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cells(r: dict) -> str:
    d, a = r["dense"], r["auto"]
    cd, ca = d[1] / d[2], a[1] / a[2]
    n = max(1, r["lines"])
    return (f"{d[0]} | {cd:.2f} | {a[0]} | {ca:.2f} | **{ca / cd:.1%}** | {r['lines']} | {r['broken'] / n:.1%} | "
            f"{r['whole'] / n:.1%} | {r.get('flow', 0) / n:.1%} | {r.get('missing', 0)}")


def _total(rows: list[dict]) -> dict:
    tot = {"name": "**all transcripts**", "dense": [0, 0, 0], "auto": [0, 0, 0], "broken": 0, "lines": 0, "whole": 0,
           "flow": 0, "missing": 0}
    for r in rows[2:]:
        for mode in ("dense", "auto"):
            tot[mode] = [x + y for x, y in zip(tot[mode], r[mode])]
        for key in ("broken", "lines", "whole", "flow", "missing"):
            tot[key] += r.get(key, 0)
    return tot


def table(after: list[dict], before: list[dict] | None, prof_name: str, before_label: str) -> str:
    commit = commit_label()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    out = [f"Generated by `python bench/auto_density.py --profile {prof_name} --before ... --write` at commit "
           f"{commit} (after) against {before_label} (before), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
           f"{platform.machine()} {os.cpu_count()} cores, load {load:.1f} (counts, not times). Block lines: the "
           "non-blank lines of the blocks each version plans; broken: of those, the ones broken across rows (in a "
           "band, a run of rows after the continuation mark; in flow, a line found in the pages' rows across a "
           "row's end); row start: the ones that start a row with their indentation drawn whole; flow: the ones "
           "of blocks laid out as flow (one after another along the rows, whole where they fit); not found: flow "
           "lines the pages do not show as the bench spells them (a control character, a symbol's label).", "",
           "| document | version | dense pages | dense chars/token | auto pages | auto chars/token | auto / dense | "
           "block lines | broken | row start | flow | not found |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    before_by = {r["name"]: r for r in before or []}
    for r in after + [_total(after)]:
        b = before_by.get(r["name"]) if r["name"] != "**all transcripts**" else (_total(before) if before else None)
        if b:
            out.append(f"| {r['name']} | before | {_cells(b)} |")
        out.append(f"| {r['name'] if not b else ''} | after | {_cells(r)} |")
    return "\n".join(out) + "\n"


def commit_label_at(path: str) -> str:
    """The short commit of the git worktree at ``path``, or ``unknown``."""
    try:
        return subprocess.run(["git", "-C", path, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="claude")
    ap.add_argument("--before", default=None, help="a worktree of an earlier commit to measure beside this one")
    ap.add_argument("--write", action="store_true", help="write the table into bench/RESULTS.md")
    args = ap.parse_args(argv)
    if not DATA.exists():
        print(f"SKIP: {DATA} is absent")
        return 0
    sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one ("before" sets PYTHONPATH)
    after = measure(args.profile)
    before = run_before(args.before, args.profile) if args.before else None
    text = table(after, before, args.profile, f"{args.before} ({commit_label_at(args.before)})" if args.before
                 else "nothing")
    print(text)
    if args.write:
            write_section("auto-density", "## Layout auto: characters per image token against dense, block lines "
                      "broken (issue 30)\n\n" + text, path=RESULTS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
