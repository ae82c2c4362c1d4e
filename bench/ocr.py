"""OCR legibility proxy: how much of a snapglyph page an offline OCR engine reads back, per profile, cell and layout.

No vision model is reachable offline, so this asks weaker readers: tesseract 5 (Debian ``tesseract-ocr``, ``eng``)
on every configuration, and RapidOCR (``rapidocr-onnxruntime``, PP-OCRv4 models shipped in its wheel) on a subset,
as a second opinion. Tesseract runs in sparse-text mode (``--psm 11``: find all text, in any order, so a layout's
columns are read too) on the page binarized (every pixel darker than ``BINARIZE`` black): its own threshold dropped
whole regions of dim tool output (a 6x12 dense code strip read back empty at ``--psm 3``, 100% CER, against 8.6%
binarized), and fixed-order modes read the auto layout's columns across (25-32% CER against 9%). For each reader profile that matters
(claude, openai, gemini), each candidate cell and font family, and each layout (dense, auto, lines) it measures:

- character error rate (CER) on prose and on code, separately: samples cut from the real transcripts in
  ``../shared/data`` by :mod:`bench._ocr_sample` (printable ASCII); one strip page each (full page width,
  ``--rows`` rows), so a layout's columns are what they are on a real page;
- exact identifier reads: 200 seeded identifiers (git SHAs, UUIDs, paths with line numbers, long numbers, base64
  tokens) inside prose and tool output, every page of that document read; an identifier counts when it comes back
  verbatim (whitespace ignored, so one broken across rows still counts);
- source characters per image token: ``Page.chars`` over the profile's ``image_tokens`` of full pages, on the first
  ``--density-chars`` characters of each transcript (no OCR).

The reference of each page is ``Page.text`` (the exact text drawn, row by row), with the newline and continuation
marks read as spaces and whitespace runs collapsed; OCR output is collapsed the same way. CER = Levenshtein edits
(``rapidfuzz``) over reference characters, per page, summed. Reading order is not scored: of the OCR lines as read
and the same lines put in reference order (``rapidfuzz.fuzz.partial_ratio_alignment``), the closer one counts.
Pages are shown to the engines as the profile's model is assumed to see them (gemini: downscaled 2x with a box
filter, the profile's own assumption), then upscaled by an integer factor, nearest neighbour, to about 24 px glyph
height for tesseract (12 px for RapidOCR, whose detector rescales by itself).

What it can tell, and what not: see ``PROXY_NOTE`` (written into the table). Usage: ``python bench/ocr.py
[--rows N] [--write]``; ``--write`` puts the tables into bench/RESULTS.md between the ``ocr`` markers. Engines run
in a pool of at most 2 processes. Skips with a reason (exit 0) where tesseract or the sample data is absent.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import _ocr_sample as sample
from provenance import commit_label, write_section

RESULTS = ROOT / "bench" / "RESULTS.md"
LAYOUTS = ("dense", "auto", "lines")
CONFIGS = {  # profile -> candidate (cell, family); the profile's current default first
    "claude": [("6x12", "outline"), ("6x12", "bitmap"), ("5x8", "bitmap"), ("8x16", "outline")],
    "openai": [("6x12", "outline"), ("8x16", "outline")],
    "gemini": [("12x24", "outline"), ("10x20", "outline"), ("16x32", "outline")],
}
DOWN = {"gemini": 2}  # the model is assumed to see the page at 1/DOWN scale (see the gemini profile's doc)
RAPID = {("claude", "6x12", "outline"), ("claude", "8x16", "outline"), ("openai", "6x12", "outline"),
         ("gemini", "12x24", "outline"), ("gemini", "16x32", "outline")}  # RapidOCR: these, layout auto only
TESS_PX, RAPID_PX = 24, 12
BINARIZE = 200  # tesseract gets every pixel darker than this black, the rest white (see the module docstring)
GROUPS = {"0/O": set("0Oo"), "1/l/I": set("1lI|"), "5/S": set("5Ss"), "8/B": set("8B")}
MARKS = str.maketrans({"\u21b5": " ", "\u21aa": " "})
LABEL_ROW = re.compile(r"^ #\d+ \S+ \(cont\.\) (?:\n|$)")  # a page's label where it opens inside a message
LABEL_READ = re.compile(r"#?\s*\d+\s+[A-Za-z]+\s*\(\s*cont\s*\.?\s*\)?")  # the label as OCR reads it
PROXY_NOTE = """\
**What this proxy can tell.** Whether a cell, font and layout leave enough pixels per glyph for a generic reader
to tell characters apart (0/O, 1/l/I, 5/S, 8/B are counted), how that degrades from prose to code to random
identifiers, and how the layouts compare when the reader has no context to lean on. It ranks configurations; two
engines that agree on a ranking make it more credible.

**What it cannot tell.** How a vision LLM reads. A model sees the page through its own patch encoder at a
resolution the provider chooses (the gemini rows assume a 2x downscale that Google does not document), uses
language context to repair words (so it may read prose better than OCR does), and fails differently: it skips or
confabulates (an identifier read "almost right" is a silent wrong answer), where OCR substitutes visibly. OCR is
tuned for 20-30 px glyphs (hence the upscale), so it may under-rate small cells that a model trained on screenshots
reads. Tesseract's `eng` model also reads snapglyph's dotted zero as 8 or 9, and often 2 as ?: that is most of its
identifier misses at every cell (RapidOCR reads the same zeros right), so its identifier counts rank cells and are
not a rate. The column rules and continuation marks of the auto layout cost OCR characters that a model may simply
skip. No number here is a model's error rate; the public model sweeps cited in the next section are the evidence
for that, and the identifier ledger in the snapshot text exists because no cell makes pixels exact.
"""


def skip(reason: str) -> None:
    print(f"SKIP: {reason}")
    sys.exit(0)


# ---- engines (run in the worker processes) ---------------------------------------------------------------------

_RAPID = None


def _init_worker() -> None:
    os.environ["OMP_THREAD_LIMIT"] = "1"  # tesseract: one thread per worker process


def read_page(engine: str, pixels: np.ndarray, scale: int) -> tuple[list[str], float]:
    """OCR one page in a worker: the text lines read, in the engine's order, and the CPU-bound wall seconds."""
    global _RAPID
    t0 = time.perf_counter()
    img = np.repeat(np.repeat(pixels, scale, axis=0), scale, axis=1) if scale > 1 else pixels
    if engine == "tesseract":
        from PIL import Image
        buf = io.BytesIO()
        Image.fromarray(np.where(img < BINARIZE, 0, 255).astype(np.uint8)).save(buf, format="PNG")
        out = subprocess.run(["tesseract", "stdin", "stdout", "--psm", "11", "-l", "eng"], input=buf.getvalue(),
                             capture_output=True, check=True).stdout.decode("utf-8", "replace")
        lines = [ln for ln in out.split("\n") if ln.strip()]
    else:
        if _RAPID is None:
            from rapidocr_onnxruntime import RapidOCR
            _RAPID = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1, use_cls=False, max_side_len=8192)
        res, _ = _RAPID(np.ascontiguousarray(img))
        lines = [r[1] for r in res or []]
    return lines, time.perf_counter() - t0


def versions(rapid: bool) -> str:
    tv = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, check=False).stdout.split()[1]
    out = [f"tesseract {tv} (eng, psm 11, pages binarized at {BINARIZE})"]
    if rapid:
        from importlib.metadata import version
        out.append(f"rapidocr-onnxruntime {version('rapidocr-onnxruntime')} (PP-OCRv4 det/rec, no angle classifier) "
                   f"on onnxruntime {version('onnxruntime')}")
    from importlib.metadata import version
    out.append(f"rapidfuzz {version('rapidfuzz')}")
    return "; ".join(out)


# ---- pages -----------------------------------------------------------------------------------------------------

def strip_profile(prof, rows: int, ch: int):
    """``prof`` with pages ``rows`` cell rows high (same width, so the same columns and block bands)."""
    return dataclasses.replace(prof, page_size=(prof.page_size[0], min(prof.page_size[1], rows * ch)))


def seen(pixels: np.ndarray, down: int) -> np.ndarray:
    if down == 1:
        return pixels
    from PIL import Image
    h, w = pixels.shape
    return np.asarray(Image.fromarray(pixels).resize((w // down, h // down), Image.BOX))


def documents(convs, chars: int):
    """The three sample documents by kind; ``ids`` is a function of the layout (headers on their own row in lines)."""
    from snapglyph.model.document import Document, Segment, document_for

    prose, code = sample.prose_and_code(convs, chars)
    msgs = sample.identifier_messages(sample.identifiers())

    def doc(chunks):
        return Document([Segment(t + "\n", st) for t, st in chunks])
    return {"prose": lambda mode: doc(prose), "code": lambda mode: doc(code),
            "ids": lambda mode: document_for(msgs, mode)}


# ---- scoring ---------------------------------------------------------------------------------------------------

def norm(s: str) -> str:
    return " ".join(s.translate(MARKS).split())


def in_order(lines: list[str], ref: str) -> list[str]:
    """``lines`` sorted by where each one best matches in ``ref``; a line under 6 characters keeps its place after
    the line before it."""
    from rapidfuzz import fuzz

    keyed, pos = [], -1.0
    for i, ln in enumerate(lines):
        t = norm(ln)
        if len(t) >= 6:
            pos = float(fuzz.partial_ratio_alignment(t, ref).dest_start)
        keyed.append((pos, i, ln))
    return [ln for _, _, ln in sorted(keyed)]


def score_page(ref_text: str, lines: list[str]) -> tuple[int, int, str]:
    """``(edits, reference characters, OCR text in the better order)`` of one page."""
    from rapidfuzz.distance import Levenshtein

    ref = norm(ref_text)
    best = None
    for cand in (lines, in_order(lines, ref)):
        hyp = norm(" ".join(cand))
        d = Levenshtein.distance(ref, hyp)
        if best is None or d < best[0]:
            best = (d, hyp)
    return best[0], len(ref), best[1]


def confusions(ref_text: str, hyp: str) -> dict[str, int]:
    from rapidfuzz.distance import Levenshtein

    ref = norm(ref_text)
    out = {k: 0 for k in GROUPS}
    for op in Levenshtein.editops(ref, hyp):
        if op.tag == "replace":
            a, b = ref[op.src_pos], hyp[op.dest_pos]
            for k, g in GROUPS.items():
                if a in g and b in g:
                    out[k] += 1
    return out


def score_ids(pages: list[tuple[str, list[str]]], ids: list[tuple[str, str]]) -> dict:
    """Identifiers shown on ``pages`` (reference, OCR lines) and read back verbatim, per kind, plus confusions."""
    refs, hyps = [], []
    conf = {k: 0 for k in GROUPS}
    for ref, lines in pages:  # a page's label is left out where the pages are joined (an id may span two pages)
        refs.append(LABEL_ROW.sub("", ref, count=1))
        _, _, hyp = score_page(ref, lines)
        hyps.append((LABEL_READ.sub(" ", hyp, count=1), LABEL_READ.sub(" ", " ".join(lines), count=1)))
        for k, v in confusions(ref, hyp).items():
            conf[k] += v
    squash = "".join(norm(r).replace(" ", "") for r in refs)
    got = ["".join(h[0].replace(" ", "") for h in hyps), "".join("".join(h[1].split()) for h in hyps)]
    shown, read, near = ({k: 0 for k in sample.KINDS} for _ in range(3))
    for kind, x in ids:
        if x in squash:
            shown[kind] += 1
            ok = any(x in g for g in got)
            read[kind] += ok
            near[kind] += ok or min(_nearest(x, g) for g in got) <= 1
    return {"shown": shown, "read": read, "near": near, "conf": conf}


def _nearest(x: str, text: str) -> int:
    """About the fewest edits that turn ``x`` into a substring of ``text`` (at the best partial-ratio match)."""
    from rapidfuzz import fuzz
    from rapidfuzz.distance import Levenshtein

    al = fuzz.partial_ratio_alignment(x, text)
    a, b = al.dest_start, al.dest_end
    return min(Levenshtein.distance(x, text[max(0, a + i):b + j]) for i in (-1, 0, 1) for j in (-1, 0, 1))


# ---- density (no OCR) ------------------------------------------------------------------------------------------

def density(convs, chars: int) -> dict[tuple[str, str, str], float]:
    """Source characters per image token of full pages, per (profile, cell, layout), over the transcripts' starts."""
    from snapglyph.model.document import Document, build_document
    from snapglyph.providers.profiles import profile
    from snapglyph.raster.render import iter_pages

    docs = {}
    for mode in LAYOUTS:
        docs[mode] = []
        for _, msgs in convs:
            segs, n = [], 0
            for s in build_document(msgs, header_row=mode == "lines").segments:
                segs.append(s)
                n += len(s.text)
                if n >= chars:
                    break
            docs[mode].append(Document(segs))
    out = {}
    for name, cands in CONFIGS.items():
        prof = profile(name)
        for cell in dict.fromkeys(c for c, _ in cands):
            for mode in LAYOUTS:
                shown = tok = 0
                for d in docs[mode]:
                    for p in iter_pages(d, profile=prof, cell=cell, mode=mode):
                        shown += p.chars
                        tok += prof.image_tokens(p.width, p.height)
                out[(name, cell, mode)] = shown / max(1, tok)
    return out


# ---- the run ---------------------------------------------------------------------------------------------------

def plan(docs, rows: int, rapid_rows: int, rapid_id_rows: int):
    """Yield ``(config, kind, engine, page, pixels, scale)`` for every page to read: tesseract reads one strip of
    prose and of code and every page of the identifiers; RapidOCR one strip of each (``RAPID`` configs only)."""
    from snapglyph.providers.profiles import profile
    from snapglyph.raster.render import iter_pages, resolve_cell

    for name, cands in CONFIGS.items():
        prof, down = profile(name), DOWN.get(name, 1)
        for cell, fam in cands:
            ch = resolve_cell(cell, prof)[1]
            for mode in LAYOUTS:
                cfg = (name, cell, fam, mode)
                runs = [("tesseract", rows, ("prose", "code", "ids"))]
                if (name, cell, fam) in RAPID and mode == "auto":
                    runs += [("rapidocr", rapid_rows, ("prose", "code")), ("rapidocr", rapid_id_rows, ("ids",))]
                for engine, nrows, kinds in runs:
                    sp = strip_profile(prof, nrows, ch)
                    px = TESS_PX if engine == "tesseract" else RAPID_PX
                    scale = max(1, math.ceil(px / (ch / down)))
                    for kind in kinds:
                        for i, page in enumerate(iter_pages(docs[kind](mode), profile=sp, cell=cell, mode=mode,
                                                            family=fam)):
                            if i >= 1 and (kind != "ids" or engine == "rapidocr"):
                                break
                            yield cfg, kind, engine, page, seen(page.pixels, down), scale


def run(args) -> tuple[list[dict], dict]:
    from tqdm import tqdm

    if shutil.which("tesseract") is None:
        skip("tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)")
    if not sample.DATA.exists():
        skip(f"no sample transcripts under {sample.DATA}")
    t0 = time.time()
    meta = {"load0": os.getloadavg(), "t0": t0}
    pool = ProcessPoolExecutor(max_workers=min(2, args.workers), initializer=_init_worker)
    convs = sample.transcripts()
    docs = documents(convs, args.chars)
    futures, pages = {}, {}
    for cfg, kind, engine, page, px, scale in plan(docs, args.rows, args.rapid_rows, args.rapid_id_rows):
        key = (engine, hashlib.sha1(px.tobytes()).hexdigest(), px.shape, scale)
        if key not in futures:  # identical pages (e.g. prose in dense and auto) are read once
            futures[key] = pool.submit(read_page, engine, px, scale)
        pages.setdefault((cfg, kind, engine), []).append((page.text, key))
    dens = density(convs, args.density_chars)
    got, cpu = {}, {"tesseract": 0.0, "rapidocr": 0.0}
    keys = {fut: key for key, fut in futures.items()}
    for fut in tqdm(as_completed(keys), total=len(keys), desc="OCR pages", unit="page"):
        got[keys[fut]], sec = fut.result()
        cpu[keys[fut][0]] += sec
    pool.shutdown()
    ids = sample.identifiers()
    rows = []
    for name, cands in CONFIGS.items():
        for cell, fam in cands:
            for mode in LAYOUTS:
                cfg = (name, cell, fam, mode)
                r = {"profile": name, "cell": cell, "family": fam, "layout": mode, "down": DOWN.get(name, 1),
                     "cpt": dens[(name, cell, mode)]}
                for engine in ("tesseract", "rapidocr"):
                    for kind in ("prose", "code"):
                        pl = pages.get((cfg, kind, engine))
                        if pl:
                            sc = [score_page(t, got[k]) for t, k in pl]
                            r[f"{engine} {kind}"] = sum(s[0] for s in sc) / max(1, sum(s[1] for s in sc))
                for engine in ("tesseract", "rapidocr"):
                    if (cfg, "ids", engine) in pages:
                        r[f"{engine} ids"] = score_ids([(t, got[k]) for t, k in pages[(cfg, "ids", engine)]], ids)
                rows.append(r)
    meta.update(sec=time.time() - t0, load1=os.getloadavg(), cpu=cpu, pages=len(futures))
    return rows, meta


# ---- output ----------------------------------------------------------------------------------------------------

def _machine() -> str:
    model = ""
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                model = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.machine()} {model} {os.cpu_count()} cores, {platform.system()} {platform.release()}, " \
           f"Python {platform.python_version()}"


def table(rows: list[dict], meta: dict, args) -> str:
    commit = commit_label()
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(meta["t0"]))
    l0, l1 = meta["load0"], meta["load1"]
    head = (f"Generated by `python bench/ocr.py --rows {args.rows} --chars {args.chars} --density-chars "
            f"{args.density_chars} --write` at commit {commit}, {when}, {_machine()}; load average "
            f"{l0[0]:.1f}/{l0[1]:.1f}/{l0[2]:.1f} at the start, {l1[0]:.1f}/{l1[1]:.1f}/{l1[2]:.1f} at the end; "
            f"{meta['pages']} pages read in {meta['sec']:.0f} s (engine time tesseract {meta['cpu']['tesseract']:.0f}"
            f" s, RapidOCR {meta['cpu']['rapidocr']:.0f} s, 2 worker processes). Engines: {versions(True)}.\n\n"
            f"Seen as: the cell as the engine gets it (gemini pages downscaled 2x, the profile's assumption), then "
            f"upscaled by the integer factor shown (nearest neighbour). Chars/token: `Page.chars` over the profile's "
            f"image tokens of full pages, first {args.density_chars:,} characters of each of the "
            f"{len(sample.transcripts())} transcripts. CER: one strip page ({args.rows} rows, full width) of each "
            f"sample, about {args.chars:,} characters of prose or code offered. Ids: of {len(sample.identifiers())} "
            f"identifiers, how many came back verbatim (all are shown in every configuration), and how many with at most "
            f"about one character wrong (an OCR near miss, which a model would turn into a silent wrong value). Confusions: "
            f"substitutions within 0/O, 1/l/I, 5/S, 8/B on the identifier pages. **Bold**: the profile's current "
            f"default cell.\n\n")
    kinds = " | ".join(sample.KINDS)
    out = ["| profile | cell | family | seen as | layout | chars/token | CER prose | CER code | ids exact | ids <=1 edit | "
           + kinds + " | confusions 0O/1lI/5S/8B |", "|" + "---|" * (11 + len(sample.KINDS))]
    for r in rows:
        cw, ch = map(int, r["cell"].split("x"))
        sc = max(1, math.ceil(TESS_PX / (ch / r["down"])))
        ids = r["tesseract ids"]
        cell = f"**{r['cell']}**" if (r["cell"], r["family"]) == CONFIGS[r["profile"]][0] else r["cell"]
        out.append(f"| {r['profile']} | {cell} | {r['family']} | {cw / r['down']:g}x{ch / r['down']:g} x{sc} | "
                   f"{r['layout']} | {r['cpt']:.1f} | {r['tesseract prose']:.1%} | {r['tesseract code']:.1%} | "
                   f"{_frac(ids, 'read')} | {_frac(ids, 'near')} | "
                   + " | ".join(f"{ids['read'][k]}/{ids['shown'][k]}" for k in sample.KINDS)
                   + " | " + "/".join(str(v) for v in ids["conf"].values()) + " |")
    rap = [("| profile | cell | family | layout | CER prose | CER code | ids exact | ids <=1 edit | "
            "tesseract: CER prose | CER code |"), "|" + "---|" * 10]
    for r in rows:
        if "rapidocr prose" in r:
            ids = r["rapidocr ids"]
            rap.append(f"| {r['profile']} | {r['cell']} | {r['family']} | {r['layout']} | {r['rapidocr prose']:.1%}"
                       f" | {r['rapidocr code']:.1%} | {_frac(ids, 'read')} | {_frac(ids, 'near')} | "
                       f"{r['tesseract prose']:.1%} | {r['tesseract code']:.1%} |")
    return (head + "\n".join(out) + f"\n\nRapidOCR as a second reader (layout auto; one strip of {args.rapid_rows} "
            f"rows of each sample and one of {args.rapid_id_rows} rows of the identifier document, so its ids count "
            f"only those on that strip; it is about 10x slower than tesseract here). Tesseract's CER on its larger "
            f"strips beside it:\n\n" + "\n".join(rap) + "\n\n" + PROXY_NOTE)


def _frac(ids: dict, what: str) -> str:
    n, k = sum(ids["shown"].values()), sum(ids[what].values())
    return f"{k}/{n} ({k / max(1, n):.0%})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=24, help="rows of cells per OCR page (default 24)")
    ap.add_argument("--rapid-rows", type=int, default=6, help="rows of cells per RapidOCR page (default 6)")
    ap.add_argument("--rapid-id-rows", type=int, default=10,
                    help="rows of cells of the one RapidOCR identifier page (default 10)")
    ap.add_argument("--chars", type=int, default=6000, help="characters of prose and of code sampled (default 6000)")
    ap.add_argument("--density-chars", type=int, default=100_000,
                    help="characters of each transcript for chars/token (default 100000)")
    ap.add_argument("--workers", type=int, default=2, help="OCR processes (at most 2)")
    ap.add_argument("--profiles", default=",".join(CONFIGS), help="profiles to measure (default: all of CONFIGS)")
    ap.add_argument("--write", action="store_true", help="write the tables into bench/RESULTS.md")
    args = ap.parse_args(argv)
    for name in list(CONFIGS):
        if name not in args.profiles.split(","):
            del CONFIGS[name]
    rows, meta = run(args)
    text = table(rows, meta, args)
    print(text)
    if args.write:
            write_section("ocr", "## OCR legibility proxy (issue 10 item 7)\n\n" + text, path=RESULTS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
