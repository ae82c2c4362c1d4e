"""What the snapshot text costs beside its pages, section by section, before and after a change (issue 30 items 1, 2, 5).

For every transcript in ../shared/data, compacts it for the ``claude`` profile at a 100,000-token budget (the
``anthropic`` dialect, defaults otherwise; a transcript that fits that budget as it is at the first of a half, two
thirds, three quarters and nine tenths of its own tokens that it can be compacted to, at least 2,000, the budget
named beside it) and measures, with the project's own token counts
(:class:`snapglyph.compaction.estimate.TokenCosts`):

- the snapshot text's tokens by section: the ranges line with the reading guide, the user's words, the ledger;
- its share of the snapshot pages' image tokens (goal: at most 15%);
- the source characters the snapshot pages show (``Page.chars``) per token of the whole compaction (pages and
  snapshot text), beside the same messages' cost as text (``CompactResult.middle_text_tokens``): the ratio of the
  two is what a token of the compaction buys over sending the text;
- the ledger's tokens and its coverage of the shown messages' identifiers: of all the identifiers
  :func:`snapglyph.model.identifiers.find_identifiers` finds in them, and of those the ledger is meant to hold
  (:func:`snapglyph.model.identifiers.worth_listing`); an identifier is covered where the ledger holds it
  verbatim, or holds its path with its line number among the path's merged line numbers.

Both sides run in the same invocation, each in a process of its own (``PYTHONPATH`` names its checkout): the
"before" checkout (``--before DIR``, none by default) and this one. Coverage is computed here, with
this checkout's finder, from each side's ledger text, so both sides are held to the same identifiers.

Usage: ``python bench/snapshot_share.py [--before DIR] [--write]``; ``--write`` puts the tables into
bench/RESULTS.md between the ``snapshot-text`` markers. Skips with a reason (exit 0) where ../shared is absent.
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

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "bench" / "RESULTS.md"
BUDGET, PROFILE, DIALECT = 100_000, "claude", "anthropic"
SMALL_BUDGET_FLOOR = 2_000
SMALL_SHARES = (0.5, 2 / 3, 0.75, 0.9)


def files() -> list[Path]:
    """The shared transcripts (license and source notes left out)."""
    skip = ("LICENSE", "SOURCE", "README")
    return sorted(p for p in DATA.glob("*/*") if p.is_file() and not p.name.startswith(skip))


def _sections(text: str, user_heading: str, ledger_heading: str) -> dict[str, str]:
    """The snapshot text split at its headings: ``guide`` (ranges line and reading guide), ``user``, ``ledger``."""
    cuts = {k: text.find("\n\n" + h) for k, h in (("user", user_heading), ("ledger", ledger_heading))}
    ends = sorted([(i, k) for k, i in cuts.items() if i >= 0]) + [(len(text), "")]
    out = {"guide": text[:ends[0][0]], "user": "", "ledger": ""}
    for (i, k), (j, _) in zip(ends, ends[1:]):
        out[k] = text[i + 2:j]
    return out


def measure_one(path: Path) -> dict:
    """One compaction's figures (run in the process of the checkout measured)."""
    import snapglyph
    from snapglyph.compaction.estimate import TokenCosts
    from snapglyph.compaction.ledger import LEDGER_HEADING
    from snapglyph.compaction.user_words import USER_HEADING
    from snapglyph.providers.profiles import profile

    prof = profile(PROFILE)
    count = TokenCosts(prof).text
    transcript = snapglyph.load(path)
    budget = BUDGET
    res = snapglyph.compact(transcript, profile=PROFILE, dialect=DIALECT, budget=budget)
    if res.passthrough:          # a short transcript: compacted at the smallest share of its size that it takes
        size, last = res.tokens_before, None
        for share in SMALL_SHARES:
            budget = max(SMALL_BUDGET_FLOOR, int(size * share))
            try:
                res = snapglyph.compact(transcript, profile=PROFILE, dialect=DIALECT, budget=budget)
                break
            except snapglyph.BudgetError as e:
                last = e
        else:
            raise last
    middle = set(res.middle_ids)
    pages = [p for p in res.pages if p.first_id is None or p.first_id in middle]
    snap = ""
    for m in res.request["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "text" and b["text"].startswith("snapglyph snapshot:"):
                snap = b["text"]
    sec = _sections(snap, USER_HEADING, LEDGER_HEADING)
    shown = sorted(middle - set(res.dropped_ids))
    return {"name": f"{path.parent.name}/{path.name[:36]}" + (f" (budget {budget:,})" if budget != BUDGET else ""),
            "path": str(path), "passthrough": res.passthrough,
            "pages": len(pages), "image_tokens": sum(prof.image_tokens(p.width, p.height) for p in pages),
            "chars": sum(p.chars for p in pages), "text_tokens": res.middle_text_tokens,
            "snap_tokens": count(snap) if snap else 0, "tokens": {k: count(v) if v else 0 for k, v in sec.items()},
            "ledger": sec["ledger"], "user": sec["user"], "shown": shown, "tokens_after": res.tokens_after}


def measure(out) -> None:
    """Every transcript's figures as JSON lines on ``out`` (errors as a line with ``error``)."""
    from snapglyph.errors import SnapglyphError
    for f in files():
        try:
            row = measure_one(f)
        except SnapglyphError as e:
            row = {"name": f"{f.parent.name}/{f.name[:36]}", "error": f"{type(e).__name__}: {e}"[:160]}
        print(json.dumps(row, ensure_ascii=False), file=out, flush=True)


def side(checkout: Path) -> list[dict]:
    """The figures of the checkout at ``checkout``, measured in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    r = subprocess.run([sys.executable, __file__, "--measure"], env=env, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def _covered(ident: str, ledger: str) -> bool:
    """Whether ``ledger`` holds ``ident`` verbatim, or its path (or traceback file) with its line number among the
    merged ones (``src/app.py:12,40,77`` holds ``src/app.py:40``)."""
    from snapglyph.model.identifiers import line_of
    if ident in ledger:
        return True
    split = line_of(ident)
    return bool(split and re.search(re.escape(split[0]) + r"(?:\d+(?::\d+)?,)*" + re.escape(split[1]) + r"(?![\d:])",
                                    ledger))


def coverage(rows: list[dict]) -> None:
    """Add ``found``, ``worth``, ``covered_all`` and ``covered_worth`` to each row, in place (this checkout's finder)."""
    import snapglyph
    from snapglyph.compaction.ledger import drawn_text
    from snapglyph.model.identifiers import find_identifiers, worth_listing

    loaded: dict[str, dict] = {}
    for r in rows:
        if "error" in r:
            continue
        if r["path"] not in loaded:
            loaded[r["path"]] = {m.id: m for m in snapglyph.load(r["path"]).messages}
        by_id = loaded[r["path"]]
        found: dict[str, str] = {}
        for mid in r["shown"]:
            if mid in by_id:
                for kind, ident in find_identifiers(drawn_text(by_id[mid])):
                    found.setdefault(ident, kind)
        worth = {i: k for i, k in found.items() if worth_listing(k, i)}
        r["found"], r["worth"] = len(found), len(worth)
        r["covered_all"] = sum(_covered(i, r["ledger"]) for i in found)
        r["covered_worth"] = sum(_covered(i, r["ledger"]) for i in worth)


def _pct(a: float, b: float) -> str:
    return f"{a / b:.0%}" if b else "-"


def table(before: list[dict], after: list[dict], before_dir: Path) -> str:
    """The RESULTS.md section's body."""
    sys.path.insert(0, str(ROOT / "bench"))
    from provenance import commit_label
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    against = (f"against {commit_label(before_dir)} (before, {before_dir})" if before else
               "(no before side: `--before DIR` names a checkout to compare)")
    out = [f"Generated by `python bench/snapshot_share.py --write` at commit {commit_label()} (after) {against}, "
           f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
           f"{platform.machine()} {os.cpu_count()} cores, load {load:.1f} (counts, not times: load does not change "
           f"them). Profile `{PROFILE}`, dialect `{DIALECT}`, budget {BUDGET:,}; tokens are the project's estimates.",
           "", "| transcript | side | pages | image tokens | snapshot text tokens (guide / user's words / ledger) | "
           "text / images | chars shown | chars per token, all in | as text | all in / as text | ledger coverage "
           "(all / worth listing) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    olds = {r["name"]: r for r in before}
    for a in after:
        for label, r in ((("before", olds[a["name"]]),) if a["name"] in olds else ()) + (("after", a),):
            if "error" in r:
                out.append(f"| {r['name']} | {label} | {r['error']} |||||||||")
                continue
            if r["passthrough"]:
                out.append(f"| {r['name']} | {label} | fits the budget as it is: no compaction |||||||||")
                continue
            t = r["tokens"]
            allin = r["chars"] / max(1, r["image_tokens"] + r["snap_tokens"])
            astext = r["chars"] / max(1, r["text_tokens"])
            out.append(
                f"| {r['name']} | {label} | {r['pages']} | {r['image_tokens']:,} | {r['snap_tokens']:,} "
                f"({t['guide']:,} / {t['user']:,} / {t['ledger']:,}) | {_pct(r['snap_tokens'], r['image_tokens'])} | "
                f"{r['chars']:,} | {allin:.2f} | {astext:.2f} | {allin / astext:.2f}x | "
                f"{r['covered_all']}/{r['found']} ({_pct(r['covered_all'], r['found'])}) / {r['covered_worth']}/"
                f"{r['worth']} ({_pct(r['covered_worth'], r['worth'])}) |")
    done = [r for r in after if "error" not in r and not r["passthrough"]]
    worst = max(done, key=lambda r: r["snap_tokens"] / max(1, r["image_tokens"]), default=None)
    if worst is not None:
        out += ["", f"After: the snapshot text takes at most {worst['snap_tokens'] / worst['image_tokens']:.1%} of "
                f"the pages' image tokens ({worst['name']}; goal: at most 15%); the user's words at most "
                f"{max(r['tokens']['user'] / max(1, r['image_tokens']) for r in done):.1%}, the ledger at most "
                f"{max(r['tokens']['ledger'] / max(1, r['image_tokens']) for r in done):.1%}."]
    out += ["", "Chars shown: `Page.chars` of the snapshot pages; as text: the same messages' text tokens "
            "(`CompactResult.middle_text_tokens`). Ledger coverage: distinct identifiers of the shown messages held "
            "by the ledger, of all found and of those worth listing (numbers under 8 digits are not, by design). "
            "The tokens a smaller snapshot text frees buy pages or tail, so the middle, and with it the pages, can "
            "differ from before."]
    return "\n".join(out) + "\n"


def write(text: str) -> None:
    """Put ``text`` into bench/RESULTS.md between the snapshot-text markers (appended where they are absent)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from provenance import write_section
    write_section("snapshot-text", "## Snapshot text beside its pages: sections, share, ledger coverage (issue 30)\n\n"
                  + text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", type=Path, default=None, help="checkout of the commit before (default: none)")
    ap.add_argument("--write", action="store_true", help="write the tables into bench/RESULTS.md")
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if not DATA.exists():
        print(f"SKIP: {DATA} is absent")
        return 0
    if args.measure:
        measure(sys.stdout)
        return 0
    before, after = side(args.before) if args.before is not None else [], side(ROOT)
    coverage(before)
    coverage(after)
    text = table(before, after, args.before)
    print(text)
    if args.write:
        write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
