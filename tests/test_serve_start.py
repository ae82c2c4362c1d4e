"""`snapglyph serve`'s start-up checks and its upstream read timeout, against the provider simulator."""

from __future__ import annotations

import anthropic
import pytest

from snapglyph._config import UPSTREAM_READ_TIMEOUT
from snapglyph.cli import main
from snapglyph.serve.app import ServeConfig
from snapglyph.serve.run import Background
from snapglyph.testing import Simulator, answer

pytest.importorskip("uvicorn")


@pytest.mark.parametrize("upstream,base", [("http://127.0.0.1:9/v1", "http://127.0.0.1:9"),
                                           ("https://api.openai.com/v1/", "https://api.openai.com"),
                                           ("https://example.com/gemini/v1beta", "https://example.com/gemini")])
def test_serve_refuses_an_upstream_ending_in_a_version(upstream, base, tmp_path, capsys):
    assert main(["serve", "--upstream", upstream, "--state", str(tmp_path / "state"), "--port", "0"]) == 2
    err = capsys.readouterr().err
    version = upstream.rstrip("/").rsplit("/", 1)[1]
    assert err.count("\n") == 1 and err.startswith(f"snapglyph: error: --upstream {upstream} ends in /{version}")
    assert err.rstrip().endswith(f"every request would 404: drop the /{version} (--upstream {base})")


def test_the_upstream_timeout_is_named_in_help_and_checked(capsys):
    with pytest.raises(SystemExit) as ei:
        main(["serve", "-h"])
    assert ei.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--upstream-timeout SECONDS" in text and f"(default: {UPSTREAM_READ_TIMEOUT:g})" in text
    assert UPSTREAM_READ_TIMEOUT == 600
    for bad in ("-1", "soon", "inf"):
        with pytest.raises(SystemExit) as ei:
            main(["serve", "--upstream", "http://127.0.0.1:9", "--upstream-timeout", bad])
        assert ei.value.code == 2
    assert "--upstream-timeout: must be" in capsys.readouterr().err


def test_the_upstream_read_timeout_takes_effect(tmp_path):
    """An upstream that holds its answer past the read timeout: the proxy answers 502 naming the timeout, the
    request having reached the upstream; with the default timeout the same delay is waited out."""
    msgs = [{"role": "user", "content": "hello"}]
    with Simulator([answer("late")] * 2, provider="anthropic", context_window=5000, delay=60) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "a", upstream_timeout=0.3)) as bg:
        assert bg.proxy.upstream.read_timeout == 0.3
        client = anthropic.Anthropic(base_url=bg.url, api_key="k", max_retries=0, timeout=120)
        with pytest.raises(anthropic.APIStatusError) as ei:
            client.messages.create(model="claude-sonnet-4-6", max_tokens=5, messages=msgs)
        assert ei.value.status_code == 502 and "ReadTimeout" in ei.value.response.json()["error"]["message"]
        assert [e["raw"] for e in sim.log] and b'"hello"' in sim.log[0]["raw"]
    with Simulator([answer("worth the wait")], provider="anthropic", context_window=5000, delay=1) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "b")) as bg:
        assert bg.proxy.upstream.read_timeout == UPSTREAM_READ_TIMEOUT
        client = anthropic.Anthropic(base_url=bg.url, api_key="k", max_retries=0, timeout=120)
        r = client.messages.create(model="claude-sonnet-4-6", max_tokens=5, messages=msgs)
        assert r.content[0].text == "worth the wait"
    assert Background(ServeConfig("http://127.0.0.1:9", state=tmp_path / "c",
                                  upstream_timeout=0)).proxy.upstream.read_timeout is None
