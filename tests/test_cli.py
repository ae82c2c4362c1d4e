"""The `snapglyph` command in a real subprocess: outputs, exit codes, one-line errors (never a traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from conftest import ROOT

TRAJ = ROOT / "examples" / "swe-agent" / "marshmallow-code__marshmallow-1867.traj"


def run(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snapglyph.cli", *args], capture_output=True, text=True,
                          cwd=cwd, input=stdin, timeout=300)


def test_render_writes_pages_and_manifest(tmp_path):
    r = run("render", str(TRAJ), "--profile", "claude", "--out", str(tmp_path / "p"))
    assert r.returncode == 0, r.stderr
    man = json.loads((tmp_path / "p" / "manifest.json").read_text())
    assert man["profile"] == "claude" and man["pages"]
    for page in man["pages"]:
        im = Image.open(tmp_path / "p" / page["file"])
        assert im.size == (page["width"], page["height"]) and page["width"] == 1092
        assert set(page) == {"file", "width", "height", "chars", "first_id", "last_id"}
    assert man["pages"][0]["first_id"] == 0 and man["pages"][-1]["last_id"] == 27


def test_render_stdin_text(tmp_path):
    r = run("render", "-", "--out", str(tmp_path / "p"), stdin="hello\nworld\n")
    assert r.returncode == 0, r.stderr
    man = json.loads((tmp_path / "p" / "manifest.json").read_text())
    assert len(man["pages"]) == 1 and man["pages"][0]["chars"] == len("hello\nworld\n")
    assert r.stderr == f"1 page (claude) written to {tmp_path / 'p'}/\n"


def test_compact_twice_with_the_store(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    r = run("compact", str(TRAJ), "--profile", "claude", "--budget", "9000", "--mode", "dense", "--out", str(a))
    assert r.returncode == 0, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("snapglyph: head 2 / middle ") and "pages" in line and "tokens" in line
    assert (tmp_path / "a.json.store.jsonl").exists()
    r = run("compact", str(a), "--profile", "claude", "--budget", "8000", "--mode", "dense", "--out", str(b))
    assert r.returncode == 0, r.stderr
    r = run("validate", str(b), "--dialect", "anthropic", "--profile", "claude")
    assert r.returncode == 0 and "no faults" in r.stderr
    # without its store the second pass fails with one clear line
    (tmp_path / "a.json.store.jsonl").unlink()
    r = run("compact", str(a), "--profile", "claude", "--budget", "8000")
    assert r.returncode != 0 and "Traceback" not in r.stderr and "store" in r.stderr


def test_compact_quotes_lone_surrogates_of_the_middle_as_replacement_characters(tmp_path):
    """A lone surrogate in a middle user message and in an identifier of the middle (quoted by the snapshot text)
    becomes U+FFFD in the request, as in the verbatim messages: the request is written, whole, over the earlier
    file (it used to fail at the output, leaving that file empty). Found by a fresh-eyes test."""
    msgs = [{"role": "user", "content": "task"}]
    for i in range(40):
        msgs += [{"role": "assistant", "content": f"step {i} " + "lorem ipsum " * 300 + " see https://e.com/a\udfffb"},
                 {"role": "user", "content": f"ok {i}"}]
    msgs[10] = {"role": "user", "content": "bad \ud800 here"}
    src, out = tmp_path / "u.json", tmp_path / "req.json"
    src.write_text(json.dumps({"messages": msgs}), encoding="utf-8")
    old = "<< the earlier file >>\n"  # spaces and brackets: never in JSON text of base64 pages by chance ("OLD" was)
    out.write_text(old, encoding="utf-8")
    r = run("compact", str(src), "--budget", "20000", "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    json.loads(text)
    assert "bad \ufffd here" in text and "e.com/a\ufffdb" in text and old.strip() not in text
    assert not any(0xD800 <= ord(c) < 0xE000 for c in text)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["req.json", "req.json.store.jsonl", "u.json"]


def test_recall_cli(tmp_path):
    a = tmp_path / "a.json"
    assert run("compact", str(TRAJ), "--budget", "9000", "--out", str(a)).returncode == 0
    r = run("recall", str(tmp_path / "a.json.store.jsonl"), "#3")
    assert r.returncode == 0 and r.stdout.startswith("#3 tool\nAUTHORS.rst\t")
    both = run("recall", str(tmp_path / "a.json.store.jsonl"), "#3", "4")  # several arguments: 3,4
    assert both.returncode == 0 and both.stdout == run("recall", str(tmp_path / "a.json.store.jsonl"), "3,4").stdout
    assert both.stdout.startswith(r.stdout.rstrip("\n")) and "\n#4 " in both.stdout


def test_validate_reports_faults(tmp_path):
    bad = {"model": "m", "max_tokens": 5, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "no result"}]}]}
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    r = run("validate", str(f), "--dialect", "anthropic")
    assert r.returncode == 1
    assert "messages[1]: `tool_use` ids were found without `tool_result` blocks immediately after: t1" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (["compact", "/no/such/file.json"], "no such file"),
    (["compact", "{tmp}/bad.json"], "malformed JSON"),
    (["compact", str(TRAJ), "--profile", "nope"], "--profile nope: no such profile; known profiles: claude"),
    (["compact", "{tmp}/unknown.json"], "no supported transcript format"),
    (["render", str(TRAJ), "--model", "mystery-model-9"], "mystery-model-9"),
    (["compact", str(TRAJ), "--budget", "100"], "budget"),
])
def test_bad_input_is_one_line(tmp_path, args, needle):
    (tmp_path / "bad.json").write_text("{bad")
    (tmp_path / "unknown.json").write_text('{"hello": 1}')
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    r = run(*args)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert needle in r.stderr, r.stderr


def test_binary_files_and_folders_are_refused(tmp_path):
    import random
    rnd = random.Random(1)
    (tmp_path / "bin.dat").write_bytes(bytes(rnd.randrange(256) for _ in range(4000)))
    r = run("render", str(tmp_path / "bin.dat"), "--out", str(tmp_path / "p"))
    assert r.returncode == 2 and "binary" in r.stderr and "Traceback" not in r.stderr
    r = run("compact", str(TRAJ), "--budget", "9000", "--out", str(tmp_path))
    assert r.returncode == 2 and "is a folder" in r.stderr


def test_stores_do_not_mix_conversations(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"messages": [{"role": "user", "content": "another task " * 3000},
                                              {"role": "assistant", "content": "ok " * 3000},
                                              {"role": "user", "content": "next"}]}))
    store = str(tmp_path / "s.jsonl")
    assert run("compact", str(TRAJ), "--budget", "9000", "--store", store, "--out", str(tmp_path / "a.json")
               ).returncode == 0
    r = run("compact", str(other), "--budget", "5000", "--store", store)
    assert r.returncode == 2 and "belongs to another conversation" in r.stderr


def test_fast_exit_loses_no_output(tmp_path):
    """The command ends by os._exit once the kernels are loaded (snapglyph._exit): what it wrote to a pipe is whole,
    byte for byte what it writes to a file, and a subprocess that loaded them still gets the exit status it set."""
    piped = subprocess.run([sys.executable, "-m", "snapglyph.cli", "compact", str(TRAJ), "--budget", "9000",
                            "--out", "-", "--store", str(tmp_path / "a.store.jsonl")], capture_output=True,
                           timeout=300)
    assert piped.returncode == 0, piped.stderr
    r = run("compact", str(TRAJ), "--budget", "9000", "--out", str(tmp_path / "req.json"),
            "--store", str(tmp_path / "b.store.jsonl"))
    assert r.returncode == 0, r.stderr
    assert len(piped.stdout) > 65_536 and piped.stdout == (tmp_path / "req.json").read_bytes()
    assert json.loads(piped.stdout)["messages"]
    code = ("import snapglyph.raster._kernels, sys; from snapglyph._exit import exit_fast; "
            "sys.stdout.write('x' * 300_000); exit_fast(5)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert (r.returncode, len(r.stdout)) == (5, 300_000)


def test_validate_checks_the_limits_of_the_profile_its_model_reads_by(tmp_path):
    # No --profile: the request's own model picks the profile (serve's rule), so its limits are checked too.
    import base64
    import io

    from PIL import Image
    buf = io.BytesIO()
    Image.new("L", (8, 8), 255).save(buf, "PNG")
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                       "data": base64.b64encode(buf.getvalue()).decode()}}
    body = {"model": "claude-sonnet-4-5", "max_tokens": 5,
            "messages": [{"role": "user", "content": [img] * 101 + [{"type": "text", "text": "hi"}]}]}
    f = tmp_path / "many.json"
    f.write_text(json.dumps(body))
    r = run("validate", str(f), "--dialect", "anthropic")
    assert r.returncode == 1 and r.stdout == "101 images in one request; profile claude allows 100\n"
    assert run("validate", str(f), "--dialect", "anthropic", "--profile", "openai").returncode == 0
