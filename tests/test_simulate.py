"""snapglyph.testing beyond the chat dialects: bodies that are no JSON object, Gemini through the official
google-genai SDK, the answer delay, and the `snapglyph simulate` command as a real process."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anthropic
import httpx
import pytest
from PIL import Image

import snapglyph
from snapglyph.providers.overflow import detect
from snapglyph.testing import Simulator, answer, call
from snapglyph.testing.provider_errors import overflow_body

genai = pytest.importorskip("google.genai")
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types as genai_types  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODEL = "gemini-2.5-flash"
READ_FILE = genai_types.Tool(function_declarations=[genai_types.FunctionDeclaration(
    name="read_file", description="Read a file",
    parameters_json_schema={"type": "object", "properties": {"path": {"type": "string"}}})])


def _genai(sim: Simulator):
    return genai.Client(api_key="gm-test", http_options=genai_types.HttpOptions(base_url=sim.base_url,
                                                                                api_version="v1beta", timeout=10_000))


def _png_b64(w: int, h: int) -> str:
    buf = io.BytesIO()
    Image.new("L", (w, h), 255).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


# -- bodies that are no JSON object --------------------------------------------------------------------------------
@pytest.mark.parametrize("path,dialect", [("/v1/chat/completions", "openai"), ("/v1/responses", "responses"),
                                          ("/v1/messages", "anthropic"),
                                          (f"/v1beta/models/{MODEL}:generateContent", "gemini")])
def test_a_body_that_is_no_json_object_is_a_400_in_the_dialects_shape(path, dialect):
    deep = b"[" * 100_000 + b"]" * 100_000
    with Simulator([answer("never")], context_window=1000) as sim, httpx.Client(timeout=10) as c:
        answers = [c.post(sim.base_url + path, content=raw) for raw in (b"[1, 2]", b'"text"', deep, b"{nope")]
        assert [r.status_code for r in answers] == [400, 400, 400, 400]
        messages = [(r.json()["error"]["message"]) for r in answers]
        assert messages == ["request body must be a JSON object, not an array",
                            "request body must be a JSON object, not str",
                            "request body nests too deeply to parse", "request body is not valid JSON"]
        shape = answers[0].json()
        if dialect == "anthropic":
            assert shape["type"] == "error" and shape["error"]["type"] == "invalid_request_error"
        elif dialect == "gemini":
            assert shape["error"]["status"] == "INVALID_ARGUMENT" and shape["error"]["code"] == 400
        else:
            assert shape["error"]["type"] == "invalid_request_error"
        assert [(e["kind"], e["dialect"], e["raw"][:6]) for e in sim.log][:2] == [
            ("bad_request", dialect, b"[1, 2]"), ("bad_request", dialect, b'"text"')]
        # the simulator still answers the next request: no handler died
        ok = c.post(sim.base_url + "/v1/chat/completions",
                    json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"] == "never"


# -- Gemini --------------------------------------------------------------------------------------------------------
def test_gemini_generate_content_tool_round_through_the_sdk():
    with Simulator([call(("read_file", {"path": "a.txt"})), answer("all done")], provider="gemini",
                   context_window=5000) as sim:
        client = _genai(sim)
        config = genai_types.GenerateContentConfig(tools=[READ_FILE], system_instruction="be brief",
                                                   max_output_tokens=100)
        history = [genai_types.Content(role="user", parts=[genai_types.Part(text="read a.txt please")])]
        r = client.models.generate_content(model=MODEL, contents=history, config=config)
        assert [(fc.name, fc.args) for fc in r.function_calls] == [("read_file", {"path": "a.txt"})]
        entry = sim.log[-1]
        assert entry["path"] == f"/v1beta/models/{MODEL}:generateContent" and entry["dialect"] == "gemini"
        assert r.usage_metadata.prompt_token_count == entry["prompt_tokens"] > 0
        assert r.model_version == MODEL
        sent = json.loads(entry["raw"])
        assert sent["systemInstruction"]["parts"][0]["text"] == "be brief"
        assert sent["generationConfig"]["maxOutputTokens"] == 100
        signature = r.candidates[0].content.parts[0].thought_signature
        assert signature == b"sim-signature-0001"                 # Gemini 3 style: on the first call part
        history += [r.candidates[0].content, genai_types.Content(role="user", parts=[
            genai_types.Part.from_function_response(name="read_file", response={"output": "file body"})])]
        r2 = client.models.generate_content(model=MODEL, contents=history, config=config)
        assert r2.text == "all done" and r2.candidates[0].finish_reason == "STOP"
        replayed = json.loads(sim.log[-1]["raw"])["contents"][1]["parts"][0]
        assert base64.b64decode(replayed["thoughtSignature"]) == b"sim-signature-0001"
        assert r2.usage_metadata.prompt_token_count > r.usage_metadata.prompt_token_count


def test_gemini_stream_through_the_sdk_is_many_crlf_events():
    text = "The build passed after the fix in parser.py; " * 3
    with Simulator([answer(text)], provider="gemini", context_window=5000) as sim:
        client = _genai(sim)                  # held: a client collected mid-stream closes its connections
        chunks = list(client.models.generate_content_stream(model=MODEL, contents="status?"))
        assert "".join(c.text for c in chunks) == text and len(chunks) == len(text) // 12 + 1
        assert chunks[-1].candidates[0].finish_reason == "STOP"
        assert chunks[-1].usage_metadata.prompt_token_count == sim.log[-1]["prompt_tokens"]
        sent = bytes(sim.log[-1]["sent"])
        assert sent.startswith(b"data: {") and sent.count(b"\r\n\r\n") == len(chunks)
        assert sim.log[-1]["path"] == f"/v1beta/models/{MODEL}:streamGenerateContent"
    with Simulator([answer("hi there")], provider="gemini", context_window=5000) as sim:   # without alt=sse
        r = httpx.post(sim.base_url + f"/v1beta/models/{MODEL}:streamGenerateContent", timeout=10,
                       json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
        assert isinstance(r.json(), list) and r.json()[-1]["candidates"][0]["finishReason"] == "STOP"


def test_gemini_overflow_is_googles_verbatim_body_and_detected():
    with Simulator(provider="gemini", context_window=300) as sim:
        client = _genai(sim)
        with pytest.raises(genai_errors.ClientError) as ei:
            client.models.generate_content(model=MODEL, contents="lorem ipsum dolor " * 200)
        entry = sim.log[-1]
        assert entry["kind"] == "overflow" and ei.value.code == 400
        status, body = overflow_body("gemini", prompt=entry["prompt_tokens"], output=0, window=300)
        assert entry["sent"] == json.dumps(body, separators=(",", ":")).encode()
        assert ei.value.message == (f"The input token count ({entry['prompt_tokens']}) exceeds the maximum number "
                                    f"of tokens allowed (300).")
        found = detect(400, entry["sent"])
        assert (found.provider, found.limit, found.prompt_tokens) == ("gemini", 300, entry["prompt_tokens"])


def test_native_provider_answers_each_dialect_with_its_own_body():
    big = "lorem ipsum dolor " * 200
    with Simulator(provider="native", context_window=300) as sim, httpx.Client(timeout=10) as c:
        c.post(sim.base_url + "/v1/messages", json={"model": "m", "max_tokens": 5,
                                                    "messages": [{"role": "user", "content": big}]})
        c.post(sim.base_url + "/v1/responses", json={"model": "m", "input": big})
        c.post(sim.base_url + f"/v1beta/models/{MODEL}:generateContent",
               json={"contents": [{"role": "user", "parts": [{"text": big}]}]})
        assert [e["provider"] for e in sim.log] == ["anthropic", "openai-responses", "gemini"]
        for e in sim.log:
            _, body = overflow_body(e["provider"], prompt=e["prompt_tokens"], output=0 if e["dialect"] != "anthropic"
                                    else 5, window=300, request_id=f"req_sim_{e['n']:04d}")
            assert e["sent"] == json.dumps(body, separators=(",", ":")).encode()
            assert detect(e["status"], e["sent"]) is not None


def test_gemini_grammar_errors_are_the_apis_messages():
    user = {"role": "user", "parts": [{"text": "go"}]}
    calls = {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}},
                                        {"functionCall": {"name": "cat", "args": {}}}]}
    one = {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a"}}}]}
    two = {"role": "user", "parts": one["parts"] + [{"functionResponse": {"name": "cat", "response": {}}}]}
    text = {"role": "model", "parts": [{"text": "ok"}]}
    cases = {
        "Please ensure that function call turn comes immediately after a user turn or after a function response "
        "turn.": [user, text, calls, two],
        "Please ensure that function response turn comes immediately after a function call turn.": [user, text, one],
        "Please ensure that the number of function response parts is equal to the number of function call parts of "
        "the function call turn.": [user, calls, one],
    }
    with Simulator([answer("fine")], provider="gemini", context_window=10_000) as sim:
        client = _genai(sim)
        for message, contents in cases.items():
            with pytest.raises(genai_errors.ClientError) as ei:
                client.models.generate_content(model=MODEL, contents=contents)
            assert ei.value.code == 400 and ei.value.status == "INVALID_ARGUMENT" and ei.value.message == message
        assert client.models.generate_content(model=MODEL, contents=[user, calls, two]).text == "fine"
        assert [e["kind"] for e in sim.log] == ["grammar", "grammar", "grammar", "ok"]


def test_gemini_image_cost_and_count_tokens():
    img = genai_types.Part.from_bytes(data=base64.b64decode(_png_b64(1536, 1536)), mime_type="image/png")
    with Simulator([answer("seen")], provider="gemini", context_window=10_000) as sim:
        client = _genai(sim)
        counted = client.models.count_tokens(model=MODEL, contents=[img, "what is this?"])
        r = client.models.generate_content(model=MODEL, contents=[img, "what is this?"])
        entry = sim.log[-1]
        assert entry["images"] == [(1536, 1536)]
        assert entry["image_tokens"] == snapglyph.profile("gemini").image_tokens(1536, 1536) == 1120
        assert counted.total_tokens == entry["prompt_tokens"] == r.usage_metadata.prompt_token_count
        assert sim.log[0]["kind"] == "count_tokens"


# -- the delay -----------------------------------------------------------------------------------------------------
def test_delay_holds_every_answer_back_until_the_client_gives_up():
    with Simulator([answer("late")], provider="anthropic", context_window=1000, delay=60) as sim:
        client = anthropic.Anthropic(base_url=sim.base_url, api_key="k", max_retries=0, timeout=0.3)
        with pytest.raises(anthropic.APITimeoutError):
            client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    with Simulator([answer("a moment later")], provider="anthropic", context_window=1000, delay=0.05) as sim:
        client = anthropic.Anthropic(base_url=sim.base_url, api_key="k", max_retries=0, timeout=30)
        r = client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
        assert r.content[0].text == "a moment later"
    with pytest.raises(snapglyph.InputError, match="delay"):
        Simulator(delay=-1)


# -- the command ---------------------------------------------------------------------------------------------------
def test_simulate_command_listens_answers_and_stops_on_ctrl_c():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "snapglyph", "simulate", "--window", "300", "--port", "0"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = proc.stdout.readline()
        assert first.startswith("snapglyph simulate: http://127.0.0.1:") and "window 300 tokens" in first, first
        url = first.split()[2]
        proc.stdout.readline()                                           # the endpoints line
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=30)
        r = client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hello"}])
        assert r.content[0].text == "simulated anthropic answer: 1 message received"
        with pytest.raises(anthropic.BadRequestError) as ei:
            client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "word " * 400}])
        assert ei.value.response.json()["error"]["message"] == "prompt is too long: 404 tokens > 300 maximum"
        assert proc.stdout.readline() == "request 1: anthropic, 5 tokens -> 200 ok\n"
        assert proc.stdout.readline() == ("request 2: anthropic, 404 tokens > window 300 -> 400 overflow "
                                          "(anthropic body)\n")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0 and out == "snapglyph simulate: stopped after 2 requests\n" and err == ""


def test_simulate_command_refuses_a_port_in_use_in_one_line():
    with Simulator() as sim:
        port = sim.port
        r = subprocess.run([sys.executable, "-m", "snapglyph", "simulate", "--port", str(port)], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"snapglyph: error: cannot listen on 127.0.0.1:{port}: ")
    assert "(pick another with --port)" in r.stderr


def test_a_chunked_request_body_is_read_whole():
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hello there"}]}).encode()
    with Simulator([answer("read")], context_window=1000) as sim, httpx.Client(timeout=10) as c:
        r = c.post(sim.base_url + "/v1/chat/completions", content=iter([body[:7], body[7:20], body[20:]]))
        assert r.request.headers["transfer-encoding"] == "chunked"
        assert r.json()["choices"][0]["message"]["content"] == "read" and sim.log[-1]["raw"] == body


def test_simulate_takes_a_body_cap_and_a_regions_windows():
    from snapglyph.cli import _parser
    args = _parser().parse_args(["simulate", "--max-body-bytes", "600000", "--model-window", "gemini-2.5-pro=65536",
                                 "--model-window", "m=8000"])
    assert args.max_body_bytes == 600_000 and dict(args.model_window) == {"gemini-2.5-pro": 65_536, "m": 8_000}
    with pytest.raises(SystemExit) as e:
        _parser().parse_args(["simulate", "--model-window", "gemini-2.5-pro"])
    assert e.value.code == 2
