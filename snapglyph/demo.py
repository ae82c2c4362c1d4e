"""``snapglyph demo``: compact a real agent transcript bundled in ``examples/`` and write what it made.

The transcript is a real pi coding-agent session (``examples/pi-session/large-session.jsonl``, MIT, see the
``LICENSE`` and ``SOURCE.txt`` beside it). The demo writes into the output folder:

``pages/page-NNNN.png``   the snapshot pages, as sent
``request.json``          the compacted request body (Anthropic messages dialect for ``claude``)
``request.json.store.jsonl``  the source store (recall any message shown as pages by id)
``report.md``             head / middle / tail, pages, tokens before and after
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ._config import DEFAULT_BUDGET
from .errors import InputError

__all__ = ["demo_transcript", "run_demo"]


def demo_transcript() -> Path:
    """Path of the bundled demo transcript (a real pi session, 974 kB of JSON lines).

    The ``examples/`` folder ships inside the wheel as the package ``snapglyph.examples`` (see ``pyproject.toml``), so
    a plain ``pip install`` has it; a checkout run with ``PYTHONPATH`` set finds it beside the package.

    Raises
    ------
    InputError
        If neither the installed package data nor the repository's ``examples/`` folder holds the file.

    Examples
    --------
    >>> demo_transcript().name
    'large-session.jsonl'
    """
    rel = ("pi-session", "large-session.jsonl")
    candidates = []
    try:
        from importlib.resources import files
        candidates.append(Path(str(files("snapglyph.examples") / rel[0] / rel[1])))
    except (ModuleNotFoundError, TypeError):
        pass
    candidates.append(Path(__file__).resolve().parent.parent / "examples" / Path(*rel))
    for p in candidates:
        if p.is_file():
            return p
    raise InputError(f"the demo transcript {'/'.join(rel)} is missing from this install "
                     f"(looked in {', '.join(str(c) for c in candidates)})")


def run_demo(out: Path, *, profile_name: str = "claude", budget: int = DEFAULT_BUDGET) -> int:
    """Compact the bundled transcript at ``budget`` tokens and write pages, request, store and report to ``out``.

    Returns the exit status (0). Raises the errors of :func:`snapglyph.compaction.compactor.compact`.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> run_demo(out, budget=200_000)  # the transcript fits: passed through, the quickest run  # doctest: +ELLIPSIS
    snapglyph: input fits the budget, passed through (903 messages, 179 rewrites); tokens 190076 -> 190298 ...
    wrote 0 pages to .../pages/, the request to .../request.json, the report to .../report.md
    0
    >>> sorted(p.name for p in out.iterdir())
    ['pages', 'report.md', 'request.json', 'request.json.store.jsonl']
    """
    from .compaction.compactor import compact
    from .providers.profiles import profile
    from .readers.registry import load

    prof = profile(profile_name)
    src = demo_transcript()
    t0 = time.perf_counter()
    t = load(src)
    res = compact(t, profile=prof, budget=budget)
    took = time.perf_counter() - t0
    out.mkdir(parents=True, exist_ok=True)
    pages_dir = out / "pages"
    pages_dir.mkdir(exist_ok=True)
    for old in pages_dir.glob("page-*.png"):
        old.unlink()
    for i, page in enumerate(res.pages):
        (pages_dir / f"page-{i + 1:04d}.png").write_bytes(page.png)
    req_path = out / "request.json"
    req_path.write_text(json.dumps(res.request, ensure_ascii=False) + "\n", encoding="utf-8")
    store_path = res.store.save(out / "request.json.store.jsonl")
    chars = sum(p.chars for p in res.pages)
    img = sum(prof.image_tokens(p.width, p.height) for p in res.pages)
    ratio = f"{res.middle_text_tokens / img:.1f}x fewer as pages" if img else "no pages"
    report = [
        "# snapglyph demo",
        "",
        f"- transcript: `{src.name}` ({t.format}, {len(t.messages)} messages), real, MIT (see examples/)",
        f"- profile: {prof.name}, page {prof.page_size[0]}x{prof.page_size[1]} px, budget {budget} tokens",
        f"- head: {len(res.head_ids)} messages, middle: {len(res.middle_ids)} messages as {len(res.pages)} pages "
        f"({chars} characters), tail: {len(res.tail_ids)} messages verbatim",
        f"- estimated tokens: {res.tokens_before} before, {res.tokens_after} after",
        f"- the pages: {img} image tokens for the {len(res.middle_ids) - len(res.dropped_ids)} messages they show, "
        f"which would cost about {res.middle_text_tokens} tokens as text ({ratio})",
        f"- not shown (pages dropped to meet the budget; recallable by id): {len(res.dropped_ids)} messages",
        f"- normalization rewrites: {dict(res.rewrites) or 'none'}",
        f"- time: {took:.2f} s (reading, counting, rendering, encoding)",
        "",
        f"Recall a message shown as pages: `snapglyph recall {store_path} 12`",
    ]
    (out / "report.md").write_text("\n".join(report) + "\n", encoding="utf-8")
    print(res.summary())
    print(f"wrote {len(res.pages)} pages to {pages_dir}/, the request to {req_path}, the report to "
          f"{out / 'report.md'}")
    return 0
