"""The ``snapglyph`` command: a thin layer over the Python API.

Every failure the project expects (missing file, unknown format, malformed JSON, unknown profile, a budget that
cannot be met) exits non-zero with one line on standard error naming the problem; never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Sequence

from ._files import same_file, write_atomic
from .errors import InputError, SnapglyphError

__all__ = ["main"]


def _err(msg: str) -> int:
    print(f"snapglyph: error: {msg}", file=sys.stderr)
    return 2


def _resolve_profile(args: argparse.Namespace, default: str = "claude"):
    """The :class:`~snapglyph.providers.profiles.Profile` --profile names, else the one --model picks, else
    ``default``; a name that is no profile is answered in the command line's terms."""
    from .providers.profiles import profile_for_model
    if args.model and not args.profile:
        return profile_for_model(args.model)
    return _cli_profile(args.profile or default)


def _cli_profile(name: str):
    """The profile called ``name``; an unknown one is an UnknownProfileError that names --profile and --model
    (a profile name in another case, or a model name given as a profile, is named as such)."""
    from .errors import UnknownProfileError
    from .providers.profiles import profile, profile_for_model, profile_names
    try:
        return profile(name)
    except UnknownProfileError:
        pass
    known = ", ".join(profile_names())
    if isinstance(name, str) and name.lower() in profile_names():
        raise UnknownProfileError(f"--profile {name}: profile names are lower case; use --profile {name.lower()}")
    try:
        as_model = profile_for_model(name)
    except UnknownProfileError:
        as_model = None
    if as_model is not None:
        raise UnknownProfileError(f"--profile {name}: that is a model name; use --model {name} (it reads by "
                                  f"profile {as_model.name}) or --profile {as_model.name}")
    raise UnknownProfileError(f"--profile {name}: no such profile; known profiles: {known} (or give --model NAME)")


def _session_profile(args: argparse.Namespace, t):
    """``(profile, dialect, note)`` of a compaction: --profile / --model where given (no note); else chosen from
    the session's own model and format (:func:`~snapglyph.providers.profiles.profile_for_session`), with the note
    line saying what and why that a compaction prints on standard error once it succeeds."""
    if args.profile or args.model:
        return _resolve_profile(args), args.dialect, None
    from .providers.profiles import profile_for_session
    prof, dialect, note = profile_for_session(t.format, t.model)
    return prof, args.dialect or dialect, note


def _load_input(path: str, *, say_notes: bool = True, conversation: int | None = None):
    from .readers.registry import load, load_bytes
    if path == "-":
        t = load_bytes(sys.stdin.buffer.read(), name="<stdin>", conversation=conversation)
    else:
        t = load(path, conversation=conversation)
    for note in t.notes if say_notes else ():  # what the reader repaired (torn line, records run together...)
        print(f"snapglyph: note: {note}", file=sys.stderr)
    return t


def _render_document(args: argparse.Namespace):
    """The document `render` draws: a plain text file or an aider history streamed from disk, else the loaded
    transcript's."""
    from .model.document import document_for
    from .readers.streamed_doc import streamed_document
    from .readers.textfile import TextFileDocument, is_plain_text_file
    if args.input != "-" and is_plain_text_file(args.input):
        return TextFileDocument(args.input)
    if args.input != "-" and args.conversation is None:
        with contextlib.suppress(OSError):  # an unreadable file: load says so
            doc = streamed_document(args.input, args.mode)
            if doc is not None:
                for note in doc.notes:  # what load would say it repaired
                    print(f"snapglyph: note: {note}", file=sys.stderr)
                return doc
    return document_for(_load_input(args.input, conversation=args.conversation).content, args.mode)


def cmd_render(args: argparse.Namespace) -> int:
    """`snapglyph render`: write DIR/page-NNNN.png and DIR/manifest.json, page by page; returns the exit status."""
    from .raster.page_folder import render_folder
    prof = _resolve_profile(args)
    out = Path(args.out)
    with _progress("snapglyph: rendering"):
        pages, stale = render_folder(out, _render_document(args), prof, mode=args.mode, cell=args.cell,
                                     family=args.family, workers=args.workers)
    if stale:
        n, names = len(stale), ", ".join(stale) if len(stale) <= 3 else f"{stale[0]} ... {stale[-1]}"
        print(f"snapglyph: removed {n} page{'s' * (n != 1)} of an earlier run ({names})", file=sys.stderr)
    print(f"{len(pages)} page{'s' * (len(pages) != 1)} ({prof.name}) written to {out}/", file=sys.stderr)
    return 0


def _default_store(args: argparse.Namespace) -> tuple[Path | None, Path]:
    """(store to read, store to write): --store for both; else read INPUT.store.jsonl (the store a first pass wrote
    beside its output) and write OUT.store.jsonl, or NAME.store.jsonl in the current folder without --out."""
    from .compaction.store import store_beside
    if args.store:
        return Path(args.store), Path(args.store)
    read = store_beside(args.input) if args.input != "-" else None
    if args.out and args.out != "-":
        return read, store_beside(args.out)
    return read, store_beside(Path(args.input).name if args.input != "-" else "stdin")


def _check_outputs(source: str, out: str | None, store: Path) -> None:
    """Refuse, before any work, a request or store that would be written over the input or over each other.

    Raises
    ------
    InputError
        ``--out`` is the input (the session would be replaced by the request), or ``--out`` is the store.
    """
    if out and out != "-":
        if source != "-" and same_file(out, source):
            raise InputError(f"--out {out} is the input: the request would replace it; give another path")
        if same_file(out, store):
            raise InputError(f"--out {out} is the source store too: the request and its store must be two files")
    if source != "-" and same_file(store, source):
        raise InputError(f"--store {store} is the input: the store would replace it; give another path")


@contextlib.contextmanager
def _progress(desc: str):
    """A progress bar of pages drawn on standard error: shown after one second, and only on a terminal (tqdm is
    not even imported otherwise: 20-25 ms of a compaction's start-up)."""
    if not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    from .raster.pool import PROGRESS
    with tqdm(desc=desc, unit=" pages", file=sys.stderr, delay=1.0, disable=None, leave=False) as bar:
        token = PROGRESS.set(bar.update)
        try:
            yield bar
        finally:
            PROGRESS.reset(token)


def cmd_compact(args: argparse.Namespace) -> int:
    """`snapglyph compact`: write the request (JSON) and its store; one summary line on stderr; returns 0."""
    from .compaction.compactor import compact
    from .compaction.store import SourceStore
    if args.out is None and sys.stdout.isatty() and not args.resume_file:
        raise InputError("refusing to write the request (JSON with base64 page images, often megabytes) to a "
                         "terminal; give --out FILE, or --out - to write it to standard output anyway")
    t = _load_input(args.input, say_notes=False, conversation=args.conversation)  # the summary names repairs
    if t.format == "text":
        raise InputError(f"{args.input}: plain text is not a conversation; use `snapglyph render` for text")
    prof, args.dialect, chosen = _session_profile(args, t)
    if args.resume_file:
        from .resume import RESUME_DIALECTS, check_writable
        check_writable(t)
        args.dialect = _resume_dialect(t.format, args.dialect, RESUME_DIALECTS)
    read, write = _default_store(args)
    if args.out and args.out != "-" and Path(args.out).is_dir():
        raise InputError(f"--out {args.out} is a folder; give the request file's path")
    _check_outputs(args.input, args.out, write)
    store = SourceStore(read)  # None: a store in memory only
    kw = dict(profile=prof, dialect=args.dialect, budget=args.budget, store=store, max_tokens=args.max_tokens,
              model=args.request_model or args.model, cell=args.cell, mode=args.mode, family=args.family,
              recall_tool=args.recall_tool, allow_empty_middle=args.allow_empty_middle, ledger=args.ledger_share)
    with _progress("snapglyph: drawing the middle (the budget then picks the pages sent)"):
        if args.free_tiers:
            from .compaction.tiers import compact_ladder
            ladder = _with_remedy(compact_ladder, t, args, keep_images=args.keep_images, **kw)
            res, reports = ladder.result, ladder.reports
        else:
            res, reports = _with_remedy(compact, t, args, **kw), []
    for rep in reports:
        print(f"snapglyph: tier {rep.tier}: {rep.detail}", file=sys.stderr)
    body = json.dumps(res.request, ensure_ascii=False, indent=None)
    data = (body + "\n").encode("utf-8")  # before any file is touched: a request UTF-8 cannot hold writes nothing
    if res.middle_ids:  # the store first: a request whose pages cannot be recalled is not written
        res.store.save(write)
    resumed = None
    if args.resume_file:
        from .resume import write_resume
        resumed = write_resume(t, res)
    if args.out and args.out != "-":
        write_atomic(Path(args.out), data)
    elif args.out == "-" or not args.resume_file:
        sys.stdout.write(body + "\n")
    if chosen:
        print(f"snapglyph: note: {chosen}", file=sys.stderr)
    print(res.summary() + (f"; store {write}" if res.middle_ids else ""), file=sys.stderr)
    if resumed is not None:
        print(f"snapglyph: wrote {resumed.path} ({resumed.records} records, session {resumed.session_id}); resume "
              f"it with: {resumed.command}", file=sys.stderr)
    return 0


def _resume_dialect(fmt: str, dialect: str | None, dialects: dict) -> str | None:
    """The dialect a --resume-file compaction is made in: the agent's own (an InputError for another one given)."""
    own = dialects.get(fmt)
    if own is not None and dialect not in (None, own):
        raise InputError(f"--resume-file writes a {fmt} session, which speaks {own}; leave --dialect {dialect} out")
    return own or dialect


def _with_remedy(fn, t, args: argparse.Namespace, **kw):
    """Call ``fn(t, **kw)``; a BudgetError gains the options that would meet it (--budget, --max-tokens)."""
    from .errors import BudgetError
    try:
        return fn(t, **kw)
    except BudgetError as e:
        if e.needed is None or e.budget is None or e.needed <= e.budget:
            raise
        from .providers.params import output_reserve
        reserve = output_reserve(args.max_tokens, t.meta.get("params") or {})
        fix = f"; raise --budget to {e.needed} or more"
        if reserve > e.needed - e.budget:
            fix += (f", or lower --max-tokens (the output reserve: {reserve} of the {e.needed} tokens "
                    f"needed) to {reserve - (e.needed - e.budget)} or less")
        raise BudgetError(str(e) + fix, needed=e.needed, budget=e.budget) from None


def cmd_cost(args: argparse.Namespace) -> int:
    """`snapglyph cost`: text vs image tokens per profile as a table or JSON (optionally a plot); returns 0."""
    from .report import cost_report, format_table, plot, rows_as_json
    if _is_corpus(args):
        return _cost_corpus(args)
    args.input = args.input[0]
    t = _load_input(args.input)
    names = _cost_profiles(args)
    if not (args.profile or args.model) and t.format != "text":  # the profile the session's own model reads by
        from .providers.profiles import profile_for_session
        names = [profile_for_session(t.format, t.model)[0].name]
    rows = cost_report(t.content, profiles=names, budget=args.budget, mode=args.mode)
    if args.json:
        print(json.dumps({"input": args.input, "format": t.format, "budget": args.budget, "mode": args.mode,
                          "rows": rows_as_json(rows)}, indent=1))
    else:
        print(format_table(rows))
    if args.plot:
        plot(rows, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _cost_profiles(args: argparse.Namespace) -> list[str]:
    """The profiles `cost` prices: each --profile, then the one --model picks; claude when neither is given."""
    from .providers.profiles import profile_for_model
    names = [_cli_profile(n).name for n in args.profile or []]
    if args.model:
        names.append(profile_for_model(args.model).name)
    return names or ["claude"]


def _is_corpus(args: argparse.Namespace) -> bool:
    one = args.input[0]
    return (len(args.input) > 1 or one.startswith("@") or any(c in one for c in "*?[") or Path(one).is_dir()
            or bool(args.out or args.scheduler or args.workers))


def _cost_corpus(args: argparse.Namespace) -> int:
    """`snapglyph cost` over many transcripts on Dask: rows to --out (CSV or Parquet) or stdout, summary on stderr."""
    from .corpus import check_rows_path, corpus_cost, corpus_paths, write_rows
    if args.json or args.plot:
        raise InputError("--json and --plot take one transcript; a corpus writes rows with --out FILE.csv|.parquet")
    check_rows_path(args.out or "-")  # before the run, not after it
    paths = corpus_paths(args.input)
    res = corpus_cost(paths, profiles=_cost_profiles(args), mode=args.mode, workers=args.workers,
                      scheduler=args.scheduler)
    write_rows(res.rows, args.out or "-")
    print(res.summary(), file=sys.stderr)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """`snapglyph demo`: compact the bundled transcript into ./snapglyph-demo/; returns 0."""
    from .demo import run_demo
    return run_demo(Path(args.out), profile_name=_resolve_profile(args).name, budget=args.budget)


def cmd_fonts(args: argparse.Namespace) -> int:
    """`snapglyph fonts`: print the bundled fonts, cell sizes and coverage; returns 0."""
    from .raster.font_report import fonts_report
    print(fonts_report())
    return 0


def cmd_formats(args: argparse.Namespace) -> int:
    """`snapglyph formats`: print the formats the readers detect, with an example path for each; returns 0."""
    from .readers.formats import format_rows, formats_table
    if args.json:
        print(json.dumps(format_rows(), indent=1))
    else:
        print(formats_table())
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    """`snapglyph recall`: print the exact source of messages by id from a store; returns 0."""
    from .compaction.recall import format_recall, parse_ids
    from .compaction.store import SourceStore
    if not Path(args.store).exists():
        raise InputError(f"{args.store}: no such source store")
    store = SourceStore(args.store)
    ids = [args.ids] if isinstance(args.ids, str) else args.ids
    _write_text(format_recall(store, parse_ids(",".join(ids))) + "\n")
    return 0


def _write_text(text: str) -> None:
    """Write ``text`` to standard output as UTF-8; a character UTF-8 cannot hold (a lone surrogate from a JSON
    escape in the source) is written as its escape (``\\udc80``), never a crash."""
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # a text-only stream (tests): escape in the text
        sys.stdout.write(text.encode("utf-8", "backslashreplace").decode("utf-8"))
        return
    sys.stdout.flush()
    out.write(text.encode("utf-8", "backslashreplace"))
    out.flush()


def cmd_validate(args: argparse.Namespace) -> int:
    """`snapglyph validate`: print every fault of a request; returns 1 if there is one, else 0."""
    from .providers.validation import validate
    from .readers.decode import read_json_body
    body = read_json_body(args.file)
    if args.profile or args.model:
        prof = _resolve_profile(args)
    else:  # the profile the request's own model reads by (serve's rule), so its limits are checked too
        from .providers.profiles import profile_for_request
        prof = profile_for_request(body.get("model") if isinstance(body, dict) else None, args.dialect)
    faults = validate(body, args.dialect, profile=prof)
    for f in faults:
        print(str(f))
    if faults:
        print(f"{len(faults)} fault(s)", file=sys.stderr)
        return 1
    print("no faults", file=sys.stderr)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """`snapglyph serve`: the proxy (see :mod:`snapglyph.serve`); runs until interrupted, returns 0. Without the
    serve extra installed: one line naming the pip command."""
    try:
        from .serve.app import ServeConfig
        from .serve.run import serve
    except ModuleNotFoundError as e:
        from ._extras import extra_hint
        raise InputError(f"snapglyph serve needs {extra_hint('serve', e.name)}") from None
    if args.compact_at is not None and not 0 < args.compact_at < 1:
        raise InputError(f"--compact-at must be a fraction of the window between 0 and 1, not {args.compact_at}")
    if args.compact_at is not None and not args.window:
        raise InputError("--compact-at needs --window (the window to take the fraction of)")
    text_only = tuple(p.strip() for p in args.text_only.split(",") if p.strip()) if args.text_only else None
    cfg = ServeConfig(args.upstream, window=args.window, profile=args.profile, compact_at=args.compact_at,
                      dry_run=args.dry_run, state=Path(args.state) if args.state else None,
                      upstream_timeout=args.upstream_timeout, recall_rounds=args.recall_rounds,
                      hold_bytes=args.hold_bytes, hold_seconds=args.hold_seconds, hold_near=args.hold_near,
                      storm_cuts=args.storm_cuts)
    if args.clear_refused:
        from .serve.refusal import RefusedPages
        from .serve.state import StateDir, default_state_dir
        n = RefusedPages(StateDir(cfg.state or default_state_dir()).path).clear()
        print(f"snapglyph serve: forgot {n} model(s) remembered as refusing page images", file=sys.stderr)
    if text_only is not None:
        cfg.text_only = text_only
    serve(cfg, host=args.host, port=args.port)
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    """`snapglyph simulate`: the provider simulator (see :mod:`snapglyph.testing`) until Ctrl-C; returns 0."""
    from .testing.command import run
    return run(window=args.window, port=args.port, host=args.host, provider=args.provider, delay=args.delay,
               refuse_images=args.refuse_images, max_images=args.max_images,
               overflow_after_200=args.overflow_after_200, max_body_bytes=args.max_body_bytes,
               model_windows=dict(args.model_window) or None)


def _parser() -> argparse.ArgumentParser:
    """The argument grammar (:mod:`snapglyph._cli_grammar`), each subcommand running this module's ``cmd_NAME``
    (looked up when the parser is built)."""
    from ._cli_grammar import COMMANDS, parser
    return parser({name: globals()[f"cmd_{name}"] for name in COMMANDS})


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``snapglyph`` command line; returns the exit status (0 ok, 2 on an expected error).

    ``--version``, ``-h`` and malformed arguments end in :class:`SystemExit` (status 0, 0 and 2), as argparse
    does; every other failure the project expects is one line on standard error and a returned status.

    Examples
    --------
    >>> try:
    ...     main(["--version"])
    ... except SystemExit as e:
    ...     print("exit status", e.code)
    snapglyph 0.1.0
    exit status 0
    >>> main(["recall", "/no/such/store.jsonl", "3"])   # one line on standard error names the problem
    2
    """
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except SnapglyphError as e:
        return _err(str(e))
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:  # Ctrl-C: one line; every file is written whole or not at all (write_atomic)
        print("snapglyph: interrupted", file=sys.stderr)
        return 1
    except RecursionError:
        return _err("the input nests too deeply to process")
    except UnicodeError as e:
        return _err(f"text that cannot be encoded or decoded as UTF-8 ({e.reason}, {type(e).__name__})")
    except (FileNotFoundError, IsADirectoryError, FileExistsError) as e:
        why = {FileNotFoundError: "no such file or folder", IsADirectoryError: "is a folder, not a file",
               FileExistsError: "exists and is not a folder"}[type(e)]
        return _err(f"{e.filename}: {why}")
    except OSError as e:
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        return _err(f"{where}{e.strerror or e}")


if __name__ == "__main__":  # pragma: no cover - the console script is snapglyph.__main__:run
    from ._exit import exit_fast

    exit_fast(main())
