"""A tool's line-number gutter (Claude Code's ``    12→code``, issue 30 item 3): drawn as it comes, without the
blanks before its digits, in light grey, or both; what each costs and how well an OCR reader reads it.

Four drawings of the same pages, switched by :data:`snapglyph.raster.flow.GUTTER_PAD` and
:data:`snapglyph.raster.flow.GUTTER_LIGHT` (the layout ``auto``, claude profile, cell 6x12 outline), on the file
reads of the Claude Code session in ../shared/data (its tool results whose lines carry the gutter; 5,098 such
lines in the session):

- source characters per image token (``Page.chars`` over the profile's image tokens): of the whole session, and
  of its file reads alone;
- the gutter's cells: of the pages' drawn characters (``Page.text``), those of the gutters' blanks, digits and
  arrows;
- OCR, on strips of 24 rows of the file reads (the first ``--chars`` characters of them): tesseract as
  bench/ocr.py runs it (binarized at 200: a light gutter binarizes as a dark one, so tesseract sees only the
  missing blanks) and RapidOCR (grey levels, what sees the light ink) on strips of 8 rows. Measured: the share of
  the gutters' numbers read back (of the numbers drawn, how many come back as a run of digits of their own, as a
  multiset), and the CER of the rest of the text (digits left out on both sides: the code's characters, the
  gutter not counted twice) by bench/ocr.py's scoring.

Usage: ``python bench/gutter.py [--chars 6000] [--write]``; ``--write`` puts the table into bench/RESULTS.md between
the ``gutter`` markers. Skips with a reason (exit 0) where ../shared or tesseract is absent.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import ocr  # noqa: E402
from provenance import commit_label, write_section  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
SESSION = DATA / "claude-code-spotter" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
RESULTS = ROOT / "bench" / "RESULTS.md"
GUTTER = re.compile(r"(?m)^ *[0-9]+\u2192")
SHOWN = re.compile("(?:(?<=^)|(?<=\n)|(?<=\u21b5))( *)([0-9]+)\u2192")  # a gutter on the pages' text
VARIANTS = [("as it comes", True, False), ("no blanks before", False, False), ("light", True, True),
            ("no blanks before, light", False, True)]


def documents(chars: int):
    """The whole session, its file reads (each tool result with a gutter line), and the first ``chars`` of those."""
    from snapglyph.model.document import Document, build_document
    from snapglyph.readers.registry import load

    whole = build_document(load(SESSION).messages)
    reads, head, n = [], [], 0
    for s in whole.segments:
        if GUTTER.search(s.text):
            reads.append(s)
            if n < chars:
                head.append(s)
                n += len(s.text)
    return whole, Document(reads), Document(head)


def gutter_cells(pages) -> tuple[int, int]:
    """Cells of the pages' gutters (blanks, digits and arrow) and of all the pages' drawn characters."""
    g = t = 0
    for p in pages:
        text = p.text.replace("\n", "")
        t += len(text)
        g += sum(len(m[0]) for m in SHOWN.finditer(text))
    return g, t


def numbers(text: str) -> list[str]:
    return [m[2] for m in SHOWN.finditer(text.replace("\n", ""))]


def score(pages_read) -> dict:
    """Gutter numbers read back and the CER of the rest, over ``(page text, OCR lines)`` pairs."""
    want, got, edits, total = Counter(), Counter(), 0, 0
    for ref, lines in pages_read:
        ref = ocr.LABEL_ROW.sub("", ref, count=1)
        want.update(numbers(ref))
        got.update(re.findall(r"[0-9]+", " ".join(lines)))
        e, n, _ = ocr.score_page(re.sub(r"[0-9]", "", ref), [re.sub(r"[0-9]", "", x) for x in lines])
        edits, total = edits + e, total + n
    found = sum(min(c, got[k]) for k, c in want.items())
    return {"numbers": sum(want.values()), "read": found, "cer": edits / max(1, total)}


def measure(chars: int, rows: int, rapid_rows: int) -> list[dict]:
    from snapglyph.providers.profiles import profile
    from snapglyph.raster import flow
    from snapglyph.raster.render import iter_pages

    prof = profile("claude")
    whole, reads, head = documents(chars)
    pool = ProcessPoolExecutor(max_workers=2, initializer=ocr._init_worker)
    defaults = flow.GUTTER_PAD, flow.GUTTER_LIGHT
    out = []
    for name, pad, light in VARIANTS:
        flow.GUTTER_PAD, flow.GUTTER_LIGHT = pad, light
        r = {"variant": name, "pad": pad, "light": light, "default": (pad, light) == defaults}
        for what, doc in (("whole", whole), ("reads", reads)):
            pages = list(iter_pages(doc, profile=prof, mode="auto"))
            r[what] = sum(p.chars for p in pages) / sum(prof.image_tokens(p.width, p.height) for p in pages)
            if what == "reads":
                r["gutter"], r["drawn"] = gutter_cells(pages)
        for engine, n, px in (("tesseract", rows, ocr.TESS_PX), ("rapidocr", rapid_rows, ocr.RAPID_PX)):
            sp = ocr.strip_profile(prof, n, 12)
            pages = list(iter_pages(head, profile=sp, mode="auto"))
            futs = [pool.submit(ocr.read_page, engine, p.pixels, -(-px // 12)) for p in pages]
            r[engine] = score([(p.text, f.result()[0]) for p, f in zip(pages, futs)])
        out.append(r)
        print(name, r, flush=True)
    pool.shutdown()
    flow.GUTTER_PAD, flow.GUTTER_LIGHT = defaults
    return out


def table(rows: list[dict], meta: dict, args) -> str:
    lines = [
        "## Line-number gutter: blanks before it, light ink (issue 30 item 3)", "",
        f"Generated by `python bench/gutter.py --chars {args.chars} --write` at commit {commit_label(ROOT)}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()} {os.cpu_count()} cores, "
        f"load {meta['load0'][0]:.1f} at the start, {meta['load1'][0]:.1f} at the end ({meta['sec']:.0f} s; counts, "
        f"not times). Claude profile, 6x12 outline, layout auto; the Claude Code session of ../shared/data "
        f"({SESSION.name}). Chars/token: `Page.chars` over image tokens, of the whole session and of its file reads "
        f"(its tool results with a gutter). Gutter cells: of the file reads' drawn characters, the gutters' blanks, "
        f"digits and arrows. OCR: the first {args.chars:,} characters of the file reads on strips of {args.rows} rows "
        f"(tesseract, binarized as bench/ocr.py does) and {args.rapid_rows} rows (RapidOCR, grey); numbers read: of "
        f"the gutters' numbers drawn, those read back as a run of digits; CER: the rest of the text, digits left out "
        f"on both sides. **Bold**: the default.", "",
        "| gutter drawn | chars/token, session | chars/token, file reads | gutter cells of drawn | "
        "tesseract: numbers read | CER rest | RapidOCR: numbers read | CER rest |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        t, q = r["tesseract"], r["rapidocr"]
        name = f"**{r['variant']}**" if r["default"] else r["variant"]
        lines.append(f"| {name} | {r['whole']:.2f} | {r['reads']:.2f} | {r['gutter'] / r['drawn']:.1%} | "
                     f"{t['read']}/{t['numbers']} ({t['read'] / t['numbers']:.0%}) | {t['cer']:.1%} | "
                     f"{q['read']}/{q['numbers']} ({q['read'] / q['numbers']:.0%}) | {q['cer']:.1%} |")
    return "\n".join(lines) + "\n"


def write(text: str) -> None:
    write_section("gutter", text, before="<!-- serve:start -->")

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chars", type=int, default=6000, help="characters of file reads read by OCR (default 6000)")
    ap.add_argument("--rows", type=int, default=24, help="rows of a tesseract strip (default 24)")
    ap.add_argument("--rapid-rows", type=int, default=8, help="rows of a RapidOCR strip (default 8)")
    ap.add_argument("--write", action="store_true", help="write the table into bench/RESULTS.md")
    args = ap.parse_args(argv)
    if not SESSION.exists():
        ocr.skip(f"no Claude Code session at {SESSION}")
    if shutil.which("tesseract") is None:
        ocr.skip("tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)")
    t0, load0 = time.time(), os.getloadavg()
    rows = measure(args.chars, args.rows, args.rapid_rows)
    text = table(rows, {"load0": load0, "load1": os.getloadavg(), "sec": time.time() - t0}, args)
    print(text)
    if args.write:
        write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
