"""The ``snapglyph`` command's argument grammar: subcommands, options, their types and one-line errors.

Kept apart from :mod:`snapglyph.cli`, which holds what each command does; :func:`parser` takes those functions by
subcommand name, so the grammar names no command's code.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Mapping

from ._config import (DEFAULT_BUDGET, HOLD_BYTES, HOLD_NEAR, HOLD_SECONDS, LEDGER_SHARE, RECALL_ROUNDS,
                      STORM_CUTS, STORM_REQUESTS, UPSTREAM_READ_TIMEOUT)
from .providers.dialects import DIALECTS

__all__ = ["COMMANDS", "parser"]

COMMANDS = ("render", "compact", "cost", "demo", "fonts", "formats", "validate", "recall", "serve", "simulate")
"""The subcommands, each needing its function in :func:`parser`'s ``commands``."""


def _port(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535, else a one-line error."""
    value = _at_least(0)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"must be a port from 0 to 65535, not {value}")
    return value


def _at_least(low: int):
    """An argparse type: a whole number of at least ``low``, else a one-line error."""
    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, {low} or more, not {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, not {value}")
        return value
    return check


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, not {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {value}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the usage is one `snapglyph -h` away)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message} (see {self.prog} -h)", file=sys.stderr)
        raise SystemExit(2)


def _profile_options(sp: argparse.ArgumentParser, names: str) -> None:
    """--profile and --model (``names``: the profile list shown in the help)."""
    sp.add_argument("--profile", "-p", default=None, metavar="NAME",
                    help=f"reader profile: {names} (default: the one --model or the session's model picks)")
    sp.add_argument("--model", default=None,
                    help="pick the profile from a model name (claude-*, gpt-*, o1/o3/o4-mini, gemini-*, qwen*, "
                         "pixtral*) unless --profile is given (default: the session's own model, else its format's "
                         "provider)")


def _page_options(sp: argparse.ArgumentParser) -> None:
    """--cell, --family and --mode."""
    sp.add_argument("--cell", default=None, help="cell size: 5x8, 6x12, 8x16 or WxH (default: the profile's)")
    sp.add_argument("--family", choices=["outline", "bitmap"], default=None,
                    help="font family (default: bitmap below 10 px cell height, else outline)")
    sp.add_argument("--mode", default="auto", choices=["auto", "dense", "lines"],
                    help="layout mode (default: auto)")


def _add_render(sub: Any, names: str, commands: Mapping[str, Callable]) -> None:
    """The ``render`` subcommand."""
    r = sub.add_parser("render", help="render a transcript or text file to PNG pages + manifest.json")
    r.add_argument("input", help="transcript file, .txt file, or - for standard input")
    _profile_options(r, names)
    r.add_argument("--out", "-o", default="pages",
                   help="output folder; pages an earlier run left there are replaced (default: ./pages)")
    r.add_argument("--conversation", type=int, default=None, metavar="N",
                   help="which conversation of a file holding several to draw (1 = the first; default: the last)")
    r.add_argument("--workers", type=_at_least(1), default=None,
                   help="threads encoding PNGs beside layout (default: the number of cores; 1: serial)")
    _page_options(r)
    r.set_defaults(func=commands["render"])


def _add_compact(sub: Any, names: str, commands: Mapping[str, Callable]) -> None:
    """The ``compact`` subcommand."""
    c = sub.add_parser("compact", help="compact a conversation into a request: head + page images + tail")
    c.add_argument("input", help="transcript or request JSON file, or - for standard input")
    _profile_options(c, names)
    c.add_argument("--dialect", choices=list(DIALECTS), default=None,
                   help="wire format of the request written: OpenAI chat completions, Anthropic messages, OpenAI "
                        "Responses or Gemini generateContent (default: the profile's own, e.g. anthropic for claude)")
    c.add_argument("--budget", type=int, default=DEFAULT_BUDGET,
                   help="most tokens the whole request may cost, reserved output included (default: 100000)")
    c.add_argument("--max-tokens", type=int, default=None,
                   help="output tokens reserved inside the budget, written as the request's output limit "
                        "(default: the input request's own limit, else 4096)")
    c.add_argument("--request-model", default=None,
                   help="model name written into the request (default: --model, else the source's, else the profile)")
    c.add_argument("--recall-tool", action="store_true",
                   help="add the recall_messages tool so the model can ask for the exact text of a message by id")
    c.add_argument("--ledger-share", type=_share, default=LEDGER_SHARE, metavar="SHARE",
                   help="cap of the identifier ledger in the snapshot text, as a share of the pages' image tokens "
                        f"(0 leaves it out; default: {LEDGER_SHARE})")
    c.add_argument("--store", default=None,
                   help="source store (default: write OUT.store.jsonl, read INPUT.store.jsonl where it exists)")
    c.add_argument("--out", "-o", default=None,
                   help="write the request to this file, or - for standard output (default: standard output, "
                        "but never to a terminal)")
    c.add_argument("--free-tiers", action="store_true",
                   help="first omit uneventful old tool results and drop old images (originals go to the store)")
    c.add_argument("--allow-empty-middle", action="store_true",
                   help="write the request even when every page of the middle is dropped (its messages are then "
                        "only recallable from the store); without it that is an error (exit 2)")
    c.add_argument("--keep-images", type=_at_least(0), default=4,
                   help="newest images kept by --free-tiers (default: 4)")
    c.add_argument("--resume-file", action="store_true",
                   help="also write the compacted conversation as a new session of the agent beside the input "
                        "(Claude Code, Codex, pi, Gemini CLI), with a new id, and print the agent's command to "
                        "resume it; the input is never modified (the request is then written only with --out)")
    c.add_argument("--conversation", type=int, default=None, metavar="N",
                   help="which conversation of a file holding several to read (1 = the first; default: the last)")
    _page_options(c)
    c.set_defaults(func=commands["compact"])


def _add_cost(sub: Any, names: str, commands: Mapping[str, Callable]) -> None:
    """The ``cost`` subcommand (one transcript or a corpus)."""
    k = sub.add_parser("cost", help="text tokens vs image tokens per profile, whole transcript and middle")
    k.add_argument("input", nargs="+", help="transcript file, .txt file, or - for standard input; several files, "
                   "a folder, a glob or @LIST (a file of paths) price a corpus on Dask, one row per transcript")
    k.add_argument("--profile", "-p", action="append", default=None, metavar="NAME",
                   help=f"profile, repeat for several: {names} (default: claude)")
    k.add_argument("--model", default=None, help="add the profile picked from a model name (default: none)")
    k.add_argument("--budget", type=int, default=DEFAULT_BUDGET,
                   help="budget for the middle, as compact --budget (default: 100000)")
    k.add_argument("--mode", default="auto", choices=["auto", "dense", "lines"],
                   help="layout mode (default: auto)")
    k.add_argument("--json", action="store_true", help="print JSON instead of a table")
    k.add_argument("--plot", default=None, metavar="FILE.png", help="draw the numbers (needs matplotlib)")
    k.add_argument("--out", "-o", default=None, metavar="FILE", help="corpus rows as CSV, or Parquet for .parquet")
    k.add_argument("--workers", type=_at_least(1), default=None,
                   help="corpus: worker processes of the local Dask cluster (default: the number of cores)")
    k.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="corpus: run on an existing Dask cluster (tcp://host:8786) instead of a local one")
    k.set_defaults(func=commands["cost"])


def _add_inspect(sub: Any, names: str, commands: Mapping[str, Callable]) -> None:
    """The small subcommands: ``demo``, ``fonts``, ``formats``, ``validate`` and ``recall``."""
    d = sub.add_parser("demo", help="compact a bundled real transcript into ./snapglyph-demo/")
    d.add_argument("--out", default="snapglyph-demo", help="output folder (default: ./snapglyph-demo)")
    _profile_options(d, names)
    d.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="token budget of the request (default: 100000)")
    d.set_defaults(func=commands["demo"])

    f = sub.add_parser("fonts", help="list the bundled fonts, cell sizes and coverage")
    f.set_defaults(func=commands["fonts"])

    fm = sub.add_parser("formats", help="list the transcript formats read, with an example path for each")
    fm.add_argument("--json", action="store_true", help="print JSON")
    fm.set_defaults(func=commands["formats"])

    v = sub.add_parser("validate", help="check a request body against a dialect's grammar and a profile's limits")
    v.add_argument("file", help="a request body (JSON file)")
    v.add_argument("--dialect", choices=list(DIALECTS), required=True,
                   help="the request's wire format (required)")
    _profile_options(v, names)
    v.set_defaults(func=commands["validate"])

    rc = sub.add_parser("recall", help="print the source of messages shown as pages")
    rc.add_argument("store", help="source store JSONL file (compact writes it beside the request: "
                                  "REQUEST.store.jsonl)")
    rc.add_argument("ids", nargs="+", help="message ids: 12 or #12 or 3-9 or 3,5,7, one argument or several "
                                         "(12 13 is 12,13)")
    rc.set_defaults(func=commands["recall"])


def _add_serve(sub: Any, commands: Mapping[str, Callable]) -> None:
    """The ``serve`` subcommand (the proxy)."""
    s = sub.add_parser("serve", help="a local proxy that compacts a conversation when the provider says too long")
    s.add_argument("--upstream", required=True, help="the provider's base URL, e.g. https://api.anthropic.com")
    s.add_argument("--port", type=_port, default=8787, help="port to listen on (default: 8787)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    s.add_argument("--window", type=_at_least(1), default=None,
                   help="context window in tokens, when the provider's errors do not say it")
    s.add_argument("--profile", "-p", default=None, help="reader profile (default: from each request's model)")
    s.add_argument("--compact-at", type=float, default=None, metavar="FRACTION",
                   help="compact before sending above this share of --window (default: only after an overflow)")
    s.add_argument("--state", default=None, help="state folder (default: snapglyph/serve in the user cache)")
    s.add_argument("--dry-run", action="store_true", help="log what would be done; pass everything through")
    s.add_argument("--text-only", default=None, metavar="PATTERNS",
                   help="comma-separated model patterns never sent pages (default: a built-in list)")
    s.add_argument("--upstream-timeout", type=_seconds, default=UPSTREAM_READ_TIMEOUT, metavar="SECONDS",
                   help="longest wait for the upstream's next bytes, its first answer included; 0: no limit "
                        f"(default: {UPSTREAM_READ_TIMEOUT:g})")
    s.add_argument("--recall-rounds", type=_at_least(0), default=RECALL_ROUNDS, metavar="N",
                   help="answer at most N rounds of the model's recall_messages calls per request; 0: offer no "
                        f"recall tool (default: {RECALL_ROUNDS})")
    _serve_recovery_options(s)
    s.set_defaults(func=commands["serve"])


def _serve_recovery_options(s: argparse.ArgumentParser) -> None:
    """``serve``'s options for the answers it holds and retries (:mod:`snapglyph.serve.answers`)."""
    s.add_argument("--hold-bytes", type=_at_least(0), default=HOLD_BYTES, metavar="N",
                   help="hold at most N bytes of a streamed answer's start until its first content event, to "
                        "retry an error event or a refusal there; 0: hold no stream (a whole answer is read for a "
                        "refusal either way; default: %(default)s)")
    s.add_argument("--hold-seconds", type=_seconds, default=HOLD_SECONDS, metavar="SECONDS",
                   help="hold an answer's start at most this long (default: %(default)s)")
    s.add_argument("--hold-near", type=float, default=HOLD_NEAR, metavar="FRACTION",
                   help="hold a streamed request's start for an error event above this share of the window known "
                        "(always where no window is known; default: %(default)s)")
    s.add_argument("--storm-cuts", type=_at_least(0), default=STORM_CUTS, metavar="N",
                   help=f"answer with one error instead of a rewrite when a conversation would get more than N new "
                        f"cuts in {STORM_REQUESTS} requests; 0: no limit (default: %(default)s)")
    s.add_argument("--clear-refused", action="store_true",
                   help="forget the models remembered as refusing page images (state folder), then serve")


def _seconds(text: str) -> float:
    """An argparse type: seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, not {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 seconds or more, not {text}")
    return value


def _add_simulate(sub: Any, commands: Mapping[str, Callable]) -> None:
    """The ``simulate`` subcommand (the provider simulator, :mod:`snapglyph.testing`)."""
    m = sub.add_parser("simulate", help="a local provider that overflows, to try serve or an agent offline")
    m.add_argument("--window", type=_at_least(1), default=20000, help="context window in tokens (default: 20000)")
    m.add_argument("--port", type=_port, default=8788, help="port to listen on (default: 8788)")
    m.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    m.add_argument("--provider", default="native", metavar="NAME",
                   help="whose overflow bodies to send: anthropic, openai, gemini, bedrock, vllm, ... (an unknown "
                        "name lists them all; default: native, each dialect's own provider's)")
    m.add_argument("--delay", type=_seconds, default=0.0, metavar="SECONDS",
                   help="hold every answer back this long (default: 0)")
    m.add_argument("--refuse-images", action="store_true",
                   help="answer a request carrying images with a successful refusal (default: off)")
    m.add_argument("--max-images", type=_at_least(0), default=None, metavar="N",
                   help="refuse a request of more than N images with an image-count error (default: no limit)")
    m.add_argument("--overflow-after-200", action="store_true",
                   help="answer a streamed overflow with a 200 whose first event is the error (default: off)")
    m.add_argument("--max-body-bytes", type=_at_least(1), default=None, metavar="N",
                   help="answer a body longer than N bytes with a gateway's 413 (default: no limit)")
    m.add_argument("--model-window", action="append", default=[], metavar="MODEL=TOKENS", type=_model_window,
                   help="serve MODEL at a smaller window, as a region does (repeatable; default: --window for all)")
    m.set_defaults(func=commands["simulate"])


def _model_window(text: str) -> tuple[str, int]:
    """``MODEL=TOKENS`` of ``--model-window`` as ``(model, tokens)``.

    >>> _model_window("gemini-2.5-pro=65536")
    ('gemini-2.5-pro', 65536)
    """
    model, _, tokens = text.rpartition("=")
    if not model or not tokens.isdigit() or int(tokens) < 1:
        raise argparse.ArgumentTypeError(f"expected MODEL=TOKENS (e.g. gemini-2.5-pro=65536), got {text!r}")
    return model, int(tokens)


def parser(commands: Mapping[str, Callable[[argparse.Namespace], int]]) -> argparse.ArgumentParser:
    """The ``snapglyph`` argument grammar; each subcommand's ``func`` is ``commands[name]``.

    Raises
    ------
    KeyError
        If ``commands`` lacks a subcommand's function (render, compact, cost, demo, fonts, formats, validate,
        recall, serve, simulate).

    Examples
    --------
    >>> p = parser(dict.fromkeys(COMMANDS, lambda args: 0))
    >>> args = p.parse_args(["render", "notes.txt", "--out", "pages"])
    >>> args.command, args.out, args.func(args)
    ('render', 'pages', 0)
    """
    from . import __version__
    from .providers.profiles import profile_names
    names = ", ".join(profile_names())
    p = _Parser(prog="snapglyph", description="Render the old middle of an agent conversation as "
                                "dense glyph pages and rebuild the request: head + pages + tail.")
    p.add_argument("--version", action="version", version=f"snapglyph {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    for add in (_add_render, _add_compact, _add_cost, _add_inspect):
        add(sub, names, commands)
    _add_serve(sub, commands)
    _add_simulate(sub, commands)
    return p
