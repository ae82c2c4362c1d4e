"""Issue 12 items 9, 10, 11, 13 and 15: one line and one exit code for each bad input, stdin read like a file, stale
pages cleared, no request written to a terminal, --version, help with defaults, errors that name the remedy."""

from __future__ import annotations

import io
import json
import subprocess
import sys


from conftest import ROOT
from snapglyph import Message, Part, SourceStore
from snapglyph.cli import main

TRAJ = ROOT / "examples" / "swe-agent" / "marshmallow-code__marshmallow-1867.traj"
BINARY = bytes(range(256)) * 40


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snapglyph.cli", *args], capture_output=True, input=stdin,
                          timeout=300)


def _one_line_error(r: subprocess.CompletedProcess, code: int = 2) -> str:
    err = r.stderr.decode()
    assert r.returncode == code and b"Traceback" not in r.stderr, err
    assert len(err.strip().splitlines()) == 1, err
    return err


def test_recall_of_a_lone_surrogate_is_printed_escaped(tmp_path):
    store = SourceStore()
    store.put([Message(id=3, role="user", parts=[Part(kind="text", text="bad \ud800 half")])])
    store.save(tmp_path / "s.jsonl")
    r = run("recall", str(tmp_path / "s.jsonl"), "3")
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == b"#3 user\nbad \\ud800 half\n"


def test_recall_given_the_request_names_its_store(tmp_path):
    a = tmp_path / "a.json"
    assert run("compact", str(TRAJ), "--budget", "9000", "--out", str(a)).returncode == 0
    err = _one_line_error(run("recall", str(a), "3"))
    assert f"{a} is a request (what compact writes), not its source store; use the store written beside it, " \
           f"{a}.store.jsonl" in err


def test_validate_binary_file(tmp_path):
    (tmp_path / "b.json").write_bytes(BINARY)
    err = _one_line_error(run("validate", str(tmp_path / "b.json"), "--dialect", "openai"))
    assert "is not UTF-8 text (byte 0x80 at offset 128); expected a JSON request body" in err


def test_overflow_detect_on_deeply_nested_bodies():
    from snapglyph.providers.overflow import detect
    deep: dict = {"message": "prompt is too long: 210000 tokens > 200000 maximum", "type": "invalid_request_error"}
    for _ in range(1000):
        deep = {"error": deep}
    assert detect(400, deep) is None                               # too deep to find the error: not an overflow
    text = '{"error": ' * 1000 + '"prompt is too long: 210000 tokens > 200000 maximum"' + "}" * 1000
    got = detect(400, text)                                        # not parseable as JSON: matched as text
    assert (got.provider, got.prompt_tokens, got.limit) == ("anthropic", 210000, 200000)
    assert detect(400, "[" * 5000 + "]" * 5000) is None


def test_binary_stdin_is_refused_like_the_same_file(tmp_path):
    (tmp_path / "b.bin").write_bytes(BINARY)
    by_file = _one_line_error(run("render", str(tmp_path / "b.bin"), "--out", str(tmp_path / "p1")))
    by_stdin = _one_line_error(run("render", "-", "--out", str(tmp_path / "p2"), stdin=BINARY))
    assert by_file.replace(str(tmp_path / "b.bin"), "<stdin>") == by_stdin
    assert "looks like a binary file" in by_stdin
    # text with a few bytes that are not UTF-8 is read alike too
    r = run("render", "-", "--out", str(tmp_path / "p3"), stdin=b"caf\xe9 ok\n")
    assert r.returncode == 0 and json.loads((tmp_path / "p3" / "manifest.json").read_text())["pages"][0]["chars"] == 8


def test_render_clears_pages_of_an_earlier_run(tmp_path):
    out = tmp_path / "p"
    assert run("render", str(TRAJ), "--out", str(out)).returncode == 0
    first = json.loads((out / "manifest.json").read_text())["pages"]
    assert len(first) >= 2
    (out / "notes.txt").write_text("mine")
    (tmp_path / "short.txt").write_text("one page\n")
    r = run("render", str(tmp_path / "short.txt"), "--out", str(out))
    assert r.returncode == 0
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "notes.txt", "page-0001.png"]
    line = r.stderr.decode().splitlines()[0]  # the count, then the names (the first and last of more than 3)
    assert line.startswith(f"snapglyph: removed {len(first) - 1} pages of an earlier run (page-0002.png")
    assert line.endswith(f"{first[-1]['file']})") and line.count(".png") == min(len(first) - 1, 3 if
                                                                                len(first) <= 4 else 2)


def test_compact_refuses_a_terminal_unless_out_dash(tmp_path, monkeypatch, capsys):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdout", Tty())
    assert main(["compact", str(TRAJ), "--budget", "9000"]) == 2
    assert sys.stdout.getvalue() == ""
    err = capsys.readouterr().err
    assert "refusing to write the request" in err and "--out -" in err
    monkeypatch.setattr(sys, "stdout", Tty())
    assert main(["compact", str(TRAJ), "--budget", "9000", "--out", "-"]) == 0
    assert json.loads(sys.stdout.getvalue())["messages"]
    assert (tmp_path / "marshmallow-code__marshmallow-1867.traj.store.jsonl").exists()


def test_version_and_help_defaults():
    from snapglyph import __version__
    r = run("--version")
    assert r.returncode == 0 and r.stdout.decode().strip() == f"snapglyph {__version__}"
    h = " ".join(run("compact", "-h").stdout.decode().split())
    for needle in ("(default: 100000)", "else 4096)", "(default: the profile's own", "claude-hires, gemini",
                   "or - for standard output", "(default: 4)", "(default: auto)"):
        assert needle in h, needle


def test_budget_error_names_the_remedy(tmp_path):
    err = _one_line_error(run("compact", str(TRAJ), "--budget", "6000", "--out", str(tmp_path / "a.json")))
    assert err.strip().endswith("already need 6308 tokens; the largest message of that round is #27 (tool, 243 "
                                "tokens); raise --budget to 6308 or more, or lower --max-tokens (the output reserve: "
                                "4096 of the 6308 tokens needed) to 3788 or less")
    # Following the remedy fits the head and the newest round; no page fits beside them, which is its own error
    # (issue 12 item 12) unless an empty middle is allowed.
    r = run("compact", str(TRAJ), "--budget", "6000", "--max-tokens", "3788", "--allow-empty-middle",
            "--out", str(tmp_path / "a.json"))
    assert r.returncode == 0, r.stderr.decode()


# ------------------------------------------------------------------------------------------------ agent demo
def _demo(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snapglyph_agent_demo", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_agent_demo_refuses_a_file_that_is_not_a_transcript(tmp_path):
    precious = tmp_path / "precious.json"
    precious.write_text('{"keep": "me"}\n')
    r = _demo("--simulate", "--transcript", str(precious), "--workspace", str(tmp_path / "ws"), "hi")
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert f"{precious} is not an agent_demo transcript" in r.stderr
    assert precious.read_text() == '{"keep": "me"}\n' and not (tmp_path / "precious.json.torn").exists()


def test_agent_demo_says_when_there_is_nothing_to_resume(tmp_path):
    t = tmp_path / "t.jsonl"
    r = _demo("--simulate", "--script", "short", "--resume", "--transcript", str(t), "--workspace",
              str(tmp_path / "ws"), "hi")
    assert r.returncode == 0, r.stderr
    assert f"resume: nothing to resume: {t} does not exist yet; starting a new conversation" in r.stdout


def test_agent_demo_unreachable_server_is_one_line(tmp_path):
    import socket
    with socket.socket() as s:                     # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = _demo("--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m", "--transcript", str(tmp_path / "t.jsonl"),
              "--workspace", str(tmp_path / "ws"), "hello")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == ["python -m snapglyph_agent_demo: error: provider error None: Connection error. "
                                             "(is the server at --base-url running and reachable?)"]


def test_agent_demo_help_is_plain_text():
    h = " ".join(_demo("-h").stdout.split())
    assert "``" not in h and ":class:" not in h and ":func:" not in h
    assert "(default: 512)" in h and "default: 32768)" in h


def test_compact_writes_no_request_when_its_store_cannot_be_written(tmp_path):
    # A request whose pages cannot be recalled must not be left behind: the store is written first.
    out = tmp_path / "req.json"
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    r = run("compact", str(TRAJ), "--budget", "9000", "--out", str(out), "--store", str(blocker / "s.jsonl"))
    err = r.stderr.decode()
    assert r.returncode == 2 and err.count("\n") == 1 and "a-file" in err, err
    assert not out.exists()


def test_recall_without_a_store_is_an_input_error():
    import pytest

    import snapglyph
    with pytest.raises(snapglyph.InputError, match="needs the SourceStore a compaction returned, not NoneType"):
        snapglyph.recall(None, "#1")


def test_an_error_without_a_file_name_has_no_empty_prefix(monkeypatch, capsys):
    import snapglyph.cli as cli

    def boom(args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(cli, "cmd_fonts", boom)
    assert main(["fonts"]) == 2
    assert capsys.readouterr().err.strip() == "snapglyph: error: No space left on device"


def test_an_integer_past_pythons_digit_limit_is_a_format_error(tmp_path, capsys):
    """JSON whose integer has more digits than Python converts (4300) is a one-line FormatError, as malformed
    JSON is, in a JSON file, a JSON lines file and a request body (it was a bare ValueError's traceback; found by
    a fresh-eyes test)."""
    import pytest

    from snapglyph.errors import FormatError, InputError
    from snapglyph.readers.decode import read_json_body
    from snapglyph.readers.registry import load

    big = "9" * 5000
    one = tmp_path / "b.json"
    one.write_text('{"messages": [{"role": "user", "content": "hi"}], "max_tokens": %s}' % big)
    lines = tmp_path / "b.jsonl"
    lines.write_text('{"type": "user", "n": 1}\n{"type": "x", "n": %s}\n' % big)
    for path in (one, lines):
        with pytest.raises(FormatError, match="4300 digits"):
            load(path)
        assert main(["render", str(path), "--out", str(tmp_path / "o")]) != 0
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "digits" in err and "Traceback" not in err
    with pytest.raises(InputError, match="malformed JSON"):
        read_json_body(one)


def test_serve_simulate_and_cost_refuse_bad_addresses_in_one_line():
    """A port out of range, an upstream that is no URL (or has a query the proxy would drop), a scheduler address
    without a port: one line each, no traceback (found by a fresh-eyes run)."""
    assert "0 to 65535" in _one_line_error(run("serve", "--upstream", "http://127.0.0.1:9", "--port", "99999"))
    assert "0 to 65535" in _one_line_error(run("simulate", "--port", "70000"))
    assert "is not a URL" in _one_line_error(run("serve", "--upstream", "http://[::1", "--port", "0"))
    assert "query" in _one_line_error(run("serve", "--upstream", "http://127.0.0.1:9/?x=1", "--port", "0"))
    r = run("cost", str(TRAJ), "--scheduler", "garbage")
    assert "scheduler garbage" in _one_line_error(r)


def test_compact_never_writes_over_its_input_or_its_store(tmp_path):
    # --out naming the session (even read-only: a rename ignores the target's mode) or the store is refused before
    # any work, and the session is left byte for byte.
    import shutil
    import stat

    src = tmp_path / "s.traj"
    shutil.copy(TRAJ, src)
    src.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    before = src.read_bytes()
    err = _one_line_error(run("compact", str(src), "-o", str(src)))
    assert err.strip() == f"snapglyph: error: --out {src} is the input: the request would replace it; give another path"
    err = _one_line_error(run("compact", str(src), "--out", str(tmp_path / "q.req"), "--store",
                              str(tmp_path / "q.req")))
    assert err.strip() == (f"snapglyph: error: --out {tmp_path / 'q.req'} is the source store too: the request and its "
                           "store must be two files")
    assert src.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["s.traj"]
