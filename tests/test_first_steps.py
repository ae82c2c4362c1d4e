"""Issue 32, item 5: first steps as a person meets them: the warm-up says what it did, a missing extra is a
one-line pip hint, Ctrl-C ends a long render with one line and nothing torn, the README says the package is
installed from its repository."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str, env: dict | None = None, code: str | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})))


def test_warm_up_says_in_one_line_what_it_built_or_found():
    r = _run("snapglyph.raster.warm")
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("snapglyph: kernels ready in ")
    assert ": the ahead-of-time build found at " in lines[0] or ": the ahead-of-time build made at " in lines[0]


def test_serve_without_its_extra_is_a_one_line_pip_hint():
    code = ("import sys; sys.modules['anyio'] = None\n"            # as if the serve extra were not installed
            "from snapglyph.cli import main; raise SystemExit(main(['serve', '--upstream', 'http://127.0.0.1:9']))")
    r = _run(code=code)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("snapglyph: error: snapglyph serve needs the serve extra (module anyio is not installed): "
                        "pip install -e '.[serve]' in the snapglyph repository\n")


def test_ctrl_c_ends_a_long_render_with_one_line_and_nothing_torn(tmp_path):
    src = tmp_path / "big.txt"
    with src.open("w", encoding="utf-8") as f:
        for i in range(400_000):
            f.write(f"line {i}: worker-{i % 7} finished batch {i * 13 % 9973} in {i * 37 % 1000} ms, status ok\n")
    out = tmp_path / "pages"
    proc = subprocess.Popen([sys.executable, "-m", "snapglyph", "render", str(src), "--out", str(out)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    deadline = time.monotonic() + 300
    while not out.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1 and err == "snapglyph: interrupted\n"
    left = sorted(p.name for p in out.iterdir()) if out.exists() else []
    assert all(name.startswith("page-") and name.endswith(".png") for name in left), left   # no temporary file
    from PIL import Image
    for name in left:                                        # every page written is whole
        with Image.open(out / name) as im:
            im.load()


def test_readme_says_the_package_installs_from_its_repository():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "snapglyph is installed from its repository (it is not on PyPI)" in text
    assert "pip install 'snapglyph[" not in text and 'pip install "snapglyph[' not in text
