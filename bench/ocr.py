"""OCR legibility proxy: character error rate of tesseract reading snapglyph pages, per cell size and font family.

No vision model is reachable offline, so this asks a weaker reader: tesseract 5 (Debian ``tesseract-ocr``,
``eng``), on pages upscaled by a declared integer factor (nearest neighbour) so that a cell is >= 24 px tall,
the glyph height tesseract is tuned for. It reads a fixed sample: lines of the real transcripts in
``../shared/data`` (code, tracebacks, JSON, shell output; printable ASCII only, since the ``eng`` model reads
nothing else) and lines of random confusable strings (``0O 1lI 5S 8B`` mixed with hex). Layout mode ``lines``,
each source line cut to the page width, so rows map 1:1 to source lines.

What it can tell: whether glyphs at a cell size keep enough pixels to be told apart by a generic reader, and which
pairs get confused. What it cannot: how a vision LLM reads (it sees the page through its own patch embedding,
uses context to repair words, and fails differently: skipping or hallucinating rather than substituting), so
use the numbers to rank cells, not as a model's error rate.

Usage: ``python bench/ocr.py [--pages N] [--write]``; ``--write`` puts the table into bench/RESULTS.md between
the ``ocr`` markers. Skips with a reason (exit 0) where tesseract or the sample data is absent.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "bench" / "RESULTS.md"
GROUPS = {"0/O": set("0Oo"), "1/l/I": set("1lI|"), "5/S": set("5Ss"), "8/B": set("8B")}
TARGET_PX = 24      # upscale each page by ceil(TARGET_PX / cell_h)


def skip(reason: str) -> None:
    print(f"SKIP: {reason}")
    sys.exit(0)


def sample_lines() -> list[str]:
    """Printable-ASCII, non-empty lines from the real transcripts (deterministic order)."""
    texts = []
    traj = DATA / "swe-agent-traj" / "marshmallow-code__marshmallow-1867.traj"
    if traj.exists():
        for m in json.loads(traj.read_text(encoding="utf-8")).get("history", []):
            c = m.get("content")
            texts.append(c if isinstance(c, str) else json.dumps(c))
    for p in (DATA / "pi-session" / "large-session.jsonl", DATA / "claude-code-spotter" / "agent-acompact-e1f845.jsonl"):
        if p.exists():
            texts.append(p.read_text(encoding="utf-8", errors="replace")[:400_000])
    out = []
    for t in texts:
        for line in t.replace("\r\n", "\n").split("\n"):
            line = line.expandtabs(4).rstrip()
            if len(line.strip()) >= 3 and all(32 <= ord(ch) < 127 for ch in line):
                out.append(line)
    return out


def confusable_lines(n: int, width: int, rng: random.Random) -> list[str]:
    alpha = "0O1lI5S8B" * 3 + "0123456789abcdef"
    return [" ".join("".join(rng.choice(alpha) for _ in range(rng.randint(4, 12))) for _ in range(width // 10))
            for _ in range(n)]


def levenshtein_ops(a: str, b: str) -> tuple[int, list[tuple[str, str]]]:
    """Edit distance of ``a`` -> ``b`` and the substituted ``(a_char, b_char)`` pairs on one optimal path."""
    n, m = len(a), len(b)
    d = np.zeros((n + 1, m + 1), dtype=np.int32)
    d[:, 0] = np.arange(n + 1)
    d[0, :] = np.arange(m + 1)
    bb = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32) if m else np.zeros(0, np.uint32)
    for i in range(1, n + 1):
        cost = (bb != ord(a[i - 1])).astype(np.int32)
        row = np.minimum(d[i - 1, 1:] + 1, d[i - 1, :-1] + cost)
        # insertions along the row need a running minimum: d[i, j] = min(row[j-1], d[i, j-1] + 1)
        cur = np.empty(m + 1, dtype=np.int32)
        cur[0] = i
        cur[1:] = row
        cur = np.minimum.accumulate(cur - np.arange(m + 1)) + np.arange(m + 1)
        d[i] = cur
    subs, i, j = [], n, m
    while i > 0 and j > 0:
        if d[i, j] == d[i - 1, j - 1] + (a[i - 1] != b[j - 1]):
            if a[i - 1] != b[j - 1]:
                subs.append((a[i - 1], b[j - 1]))
            i, j = i - 1, j - 1
        elif d[i, j] == d[i - 1, j] + 1:
            i -= 1
        else:
            j -= 1
    return int(d[n, m]), subs


def norm(s: str) -> str:
    return " ".join(s.split())


def ocr(pixels: np.ndarray, scale: int, tmp: Path) -> list[str]:
    from PIL import Image
    img = np.repeat(np.repeat(pixels, scale, axis=0), scale, axis=1)
    path = tmp / "page.png"
    Image.fromarray(img).save(path)
    out = subprocess.run(["tesseract", str(path), "stdout", "--psm", "6", "-l", "eng",
                          "-c", "preserve_interword_spaces=1"], capture_output=True, text=True, check=True).stdout
    return [ln for ln in out.split("\n") if ln.strip()]


def score(src: list[str], got: list[str]) -> dict:
    """Pair lines in order (re-synchronising on a line-count mismatch) and sum edits."""
    import difflib
    src_n, got_n = [norm(s) for s in src], [norm(g) for g in got]
    edits = chars = 0
    conf = {k: 0 for k in GROUPS}
    sm = difflib.SequenceMatcher(None, src_n, got_n, autojunk=False)
    pairs: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        a, b = src_n[i1:i2], got_n[j1:j2]
        if tag == "equal" or (tag == "replace" and len(a) == len(b)):
            pairs += list(zip(a, b))
        elif tag == "replace":
            pairs.append(("\n".join(a), "\n".join(b)))
        elif tag == "delete":
            pairs += [(x, "") for x in a]
        else:
            pairs += [("", y) for y in b]
    for a, b in pairs:
        e, subs = levenshtein_ops(a, b) if a != b else (0, [])
        edits += e
        chars += len(a)
        for x, y in subs:
            for k, g in GROUPS.items():
                if x in g and y in g:
                    conf[k] += 1
    return {"edits": edits, "chars": chars, **conf}


def run(pages: int) -> list[dict]:
    if shutil.which("tesseract") is None:
        skip("tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)")
    lines = sample_lines()
    if not lines:
        skip(f"no sample transcripts under {DATA}")
    sys.path.insert(0, str(ROOT))
    from snapglyph.providers.profiles import profile
    from snapglyph.raster.render import render

    configs = [("6x12", "outline", "claude", 1), ("6x12", "bitmap", "claude", 1), ("5x8", "bitmap", "claude", 1),
               ("8x16", "outline", "claude", 1), ("8x16", "bitmap", "claude", 1),
               # Gemini 3 probably sees a 2048 page at about half scale (1120 tokens ~ 1.1 Mpx): read it that way
               ("12x24", "outline", "gemini", 2), ("6x12", "outline", "gemini", 2)]
    rows_out = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        for cell, fam, prof_name, down in configs:
            prof = profile(prof_name)
            cw, ch = map(int, cell.split("x"))
            cols, nrows = prof.page_size[0] // cw, prof.page_size[1] // ch
            rng = random.Random(42)
            start = 0
            tot = {"edits": 0, "chars": 0, **{k: 0 for k in GROUPS}}
            ctot = {"edits": 0, "chars": 0, **{k: 0 for k in GROUPS}}
            t0 = time.perf_counter()
            for _ in range(pages):
                n_conf = max(4, nrows // 10)
                body = [ln[:cols] for ln in lines[start:start + nrows - n_conf]]
                start += nrows - n_conf
                conf = confusable_lines(n_conf, cols, rng)
                src = body + conf
                page = render("\n".join(src), profile=prof, cell=(cw, ch), mode="lines", family=fam)[0]
                px = page.pixels
                if down > 1:
                    from PIL import Image
                    h, w = px.shape
                    px = np.asarray(Image.fromarray(px).resize((w // down, h // down), Image.BOX))
                seen_h = ch / down
                scale = max(1, math.ceil(TARGET_PX / seen_h))
                got = ocr(px, scale, tmp)
                # split the OCR output at the first confusable line by position (rows are 1:1)
                s_body = score(body, got[:len(body)])
                s_conf = score(conf, got[len(body):])
                for k in tot:
                    tot[k] += s_body[k]
                    ctot[k] += s_conf[k]
            rows_out.append({"cell": cell, "family": fam, "page": f"{prof_name} {prof.page_size[0]}x{prof.page_size[1]}",
                             "seen": f"{cw / down:g}x{ch / down:g}", "scale": max(1, math.ceil(TARGET_PX / (ch / down))),
                             "chars_per_page": cols * nrows, "cer": tot["edits"] / max(1, tot["chars"]),
                             "cer_conf": ctot["edits"] / max(1, ctot["chars"]),
                             **{f"conf {k}": tot[k] + ctot[k] for k in GROUPS},
                             "sec": time.perf_counter() - t0})
            r = rows_out[-1]
            print(f"{cell:6s} {fam:8s} {r['page']:20s} seen {r['seen']:7s} x{r['scale']}  CER {r['cer']:.3%}  "
                  f"confusable-lines CER {r['cer_conf']:.3%}  "
                  + " ".join(f"{k}:{r['conf ' + k]}" for k in GROUPS) + f"  {r['sec']:.1f}s", flush=True)
    return rows_out


def table(rows: list[dict], pages: int) -> str:
    head = ("| cell | family | page | seen as | upscale | chars/page | CER (transcript lines) | CER (confusable "
            "lines) | " + " | ".join(GROUPS) + " |")
    out = [head, "|" + "---|" * (8 + len(GROUPS))]
    for r in rows:
        out.append(f"| {r['cell']} | {r['family']} | {r['page']} | {r['seen']} | x{r['scale']} | {r['chars_per_page']} | "
                   f"{r['cer']:.2%} | {r['cer_conf']:.2%} | " + " | ".join(str(r['conf ' + k]) for k in GROUPS) + " |")
    return (f"Generated by `python bench/ocr.py --pages {pages} --write` (tesseract "
            f"{subprocess.run(['tesseract', '--version'], capture_output=True, text=True).stdout.split()[1]}, "
            f"psm 6, eng). Confusion columns count substitutions within each group, both kinds of line.\n\n"
            + "\n".join(out) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=2, help="pages per configuration (default 2)")
    ap.add_argument("--write", action="store_true", help="write the table into bench/RESULTS.md")
    args = ap.parse_args(argv)
    rows = run(args.pages)
    text = table(rows, args.pages)
    print(text)
    if args.write:
        start, end = "<!-- ocr:start -->", "<!-- ocr:end -->"
        old = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
        block = f"{start}\n## OCR legibility proxy\n\n{text}{end}"
        if start in old and end in old:
            new = old[:old.index(start)] + block + old[old.index(end) + len(end):]
        else:
            new = old.rstrip("\n") + "\n\n" + block + "\n"
        RESULTS.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
