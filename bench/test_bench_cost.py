"""Image-vs-text token cost benchmark over the real transcripts, every profile, both layout modes.

Run as a script to regenerate the cost section of bench/RESULTS.md::

    python bench/test_bench_cost.py --write            # all transcripts in ../shared/data
    python bench/test_bench_cost.py --limit 300000     # first 300k document characters of each

Run with pytest for the checks: each page's image tokens as snapglyph reports them equal an independent
computation of the providers' published formulas (written out again below, not imported from
``snapglyph.providers.profiles``). Skips with a reason where ../shared/data is absent.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "bench" / "RESULTS.md"
sys.path.insert(0, str(ROOT))

from snapglyph.providers import tokens  # noqa: E402
from snapglyph.providers.profiles import profile, profile_names  # noqa: E402


# ------------------------------------------------------------------ independent formulas (from the docs, by hand)
def _claude(w, h, edge, budget):
    # a page that fits is never resized; pages here always fit, so the cost is the patch count
    assert math.ceil(w / 28) * 28 <= edge and math.ceil(h / 28) * 28 <= edge
    n = math.ceil(w / 28) * math.ceil(h / 28)
    assert n <= budget
    return n


def independent_tokens(name: str, w: int, h: int) -> int:
    """Image tokens of a w x h page that its provider does not resize, from the published rule."""
    if name == "claude":
        return _claude(w, h, 1568, 1568)
    if name == "claude-hires":
        return _claude(w, h, 2576, 4784)
    if name in ("openai", "openai-original"):
        side, budget = (2048, 2500) if name == "openai" else (6000, 10000)
        patches = math.ceil(w / 32) * math.ceil(h / 32)
        assert max(w, h) <= side and patches <= budget
        return math.ceil(patches * 12 / 10)
    if name == "openai-mini":  # 32 px patches capped at 1536, times gpt-5-mini's 1.2
        patches = math.ceil(w / 32) * math.ceil(h / 32)
        assert max(w, h) <= 2048 and patches <= 1536
        return math.ceil(patches * 12 / 10)
    if name in ("openai-tiles", "openai-tiles-5", "openai-tiles-o"):
        base, tile = {"openai-tiles": (85, 170), "openai-tiles-5": (70, 140), "openai-tiles-o": (75, 150)}[name]
        assert max(w, h) <= 2048 and min(w, h) <= 768
        return base + tile * math.ceil(w / 512) * math.ceil(h / 512)
    if name == "gemini":
        return 1120
    if name == "gemini-2":
        if w <= 384 and h <= 384:
            return 258
        unit = min(768, max(256, int(min(w, h) / 1.5)))
        return 258 * math.ceil(w / unit) * math.ceil(h / unit)
    if name in ("qwen2.5-vl", "qwen3-vl"):
        f = 28 if name == "qwen2.5-vl" else 32
        assert w % f == 0 and h % f == 0
        return (w // f) * (h // f)
    if name == "pixtral":
        assert max(w, h) <= 1024
        return (math.ceil(w / 16) + 1) * math.ceil(h / 16)
    raise KeyError(name)


def transcripts() -> list[Path]:
    if not DATA.exists():
        return []
    return sorted(p for p in DATA.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".traj", ".md")
                  and p.name not in ("README.md",))


def bench_one(path: Path, names: list[str], modes: list[str], limit: int | None) -> list[dict]:
    from snapglyph.model.document import Document, build_document
    from snapglyph.raster.render import render_document
    from snapglyph.readers.registry import load

    doc = build_document(load(path).messages)
    if limit:
        kept, n = [], 0
        for s in doc.segments:
            if n >= limit:
                break
            kept.append(s)
            n += len(s.text)
        doc = Document(segments=kept)
    text = "".join(s.text for s in doc.segments)
    rows = []
    for name in names:
        p = profile(name)
        tt = tokens.text_tokens(text, encoding=p.encoding)
        billed_text = tokens.count_for_profile(text, p)
        for mode in modes:
            t0 = time.perf_counter()
            pages = render_document(doc, profile=p, mode=mode)
            sec = time.perf_counter() - t0
            img = sum(p.image_tokens(pg.width, pg.height) for pg in pages)
            rows.append(dict(transcript=path.name, profile=name, mode=mode, chars=len(text), text_tokens=billed_text,
                             text_method=f"{tt.method} x {p.text_token_factor:g}", pages=len(pages), image_tokens=img,
                             indep=sum(independent_tokens(name, pg.width, pg.height) for pg in pages),
                             png_bytes=None, sec=sec))
    return rows


def _context() -> str:
    """Commit, date, machine and load of this run (the render seconds depend on them; the counts do not)."""
    import os
    import platform
    from provenance import commit_label
    commit = commit_label()
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return (f"Commit {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()} "
            f"{os.cpu_count()} cores, Python {platform.python_version()}, load average {load[0]:.1f} / {load[1]:.1f} "
            f"/ {load[2]:.1f}.")


def table(rows: list[dict], cmd: str) -> str:
    out = [f"Generated by `{cmd}`. {_context()} Text tokens: what the profile's provider would bill for the same document as text "
           "(counted with the named tiktoken encoding, times the profile's safety factor). Image tokens: the sum over "
           "pages of the profile's cost function (checked against an independent computation). Time: rendering only.",
           "", "| transcript | profile | mode | chars | text tokens | pages | image tokens | chars / image token | "
           "text / image | render s |", "|" + "---|" * 10]
    for r in rows:
        out.append(f"| {r['transcript'][:28]} | {r['profile']} | {r['mode']} | {r['chars']} | {r['text_tokens']} | "
                   f"{r['pages']} | {r['image_tokens']} | {r['chars'] / max(1, r['image_tokens']):.1f} | "
                   f"{r['text_tokens'] / max(1, r['image_tokens']):.2f} | {r['sec']:.2f} |")
    methods = sorted({r["text_method"] for r in rows})
    out += ["", "Text token methods: " + "; ".join(methods) + "."]
    return "\n".join(out) + "\n"


def write_section(text: str, key: str, title: str) -> None:
    start, end = f"<!-- {key}:start -->", f"<!-- {key}:end -->"
    old = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    block = f"{start}\n## {title}\n\n{text}{end}"
    if start in old and end in old:
        new = old[:old.index(start)] + block + old[old.index(end) + len(end):]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    RESULTS.write_text(new, encoding="utf-8")


# --------------------------------------------------------------------------------------------------- checks
def test_page_cost_matches_independent_formula():
    for name in profile_names():
        p = profile(name)
        assert p.image_tokens(*p.page_size) == independent_tokens(name, *p.page_size), name
        for h in range(p.patch, p.page_size[1] + 1, p.patch * max(1, p.page_size[1] // 7 // p.patch)):  # short pages
            if p.provider_resize(p.page_size[0], h) != (p.page_size[0], h):
                # only Qwen3-VL's 65,536-pixel minimum enlarges a very short last page (1024 x 32)
                assert name == "qwen3-vl" and p.page_size[0] * h < 65_536, (name, h)
                continue
            assert p.image_tokens(p.page_size[0], h) == independent_tokens(name, p.page_size[0], h), (name, h)


def test_bench_small_transcript():
    import pytest
    path = DATA / "swe-agent-traj" / "marshmallow-code__marshmallow-1867.traj"
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared is not beside the project)")
    rows = bench_one(path, ["claude", "openai-tiles"], ["dense"], limit=60_000)
    for r in rows:
        assert r["pages"] >= 1 and r["image_tokens"] == r["indep"]
        assert r["text_tokens"] > 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="image-vs-text token cost benchmark")
    ap.add_argument("--profile", action="append", help="profiles (default: all)")
    ap.add_argument("--mode", action="append", choices=["dense", "lines"], help="layout modes (default: both)")
    ap.add_argument("--limit", type=int, default=None, help="first N document characters of each transcript")
    ap.add_argument("--write", action="store_true", help="write the table into bench/RESULTS.md")
    args = ap.parse_args(argv)
    paths = transcripts()
    if not paths:
        print(f"SKIP: no transcripts under {DATA}")
        return 0
    rows = []
    for path in paths:
        got = bench_one(path, args.profile or profile_names(), args.mode or ["dense", "lines"], args.limit)
        for r in got:
            assert r["image_tokens"] == r["indep"], r
            print(f"{r['transcript'][:30]:30s} {r['profile']:16s} {r['mode']:6s} chars {r['chars']:8d} text "
                  f"{r['text_tokens']:8d} pages {r['pages']:4d} image {r['image_tokens']:8d} "
                  f"ratio {r['text_tokens'] / max(1, r['image_tokens']):5.2f} {r['sec']:.2f}s", flush=True)
        rows += got
    cmd = "python bench/test_bench_cost.py" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    text = table(rows, cmd)
    if args.write:
        write_section(text, "cost", "Image vs text tokens per transcript and profile")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
