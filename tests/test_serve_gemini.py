"""``snapglyph serve`` speaking Gemini: the official google-genai SDK -> the proxy -> the simulator (provider
``gemini``), all on 127.0.0.1: ``generateContent`` and ``streamGenerateContent`` recover from an overflow,
``countTokens`` is relayed as it came."""

from __future__ import annotations

import base64
import json
import logging

import httpx
import pytest

from snapglyph import validate
from snapglyph.serve.app import ServeConfig
from snapglyph.serve.run import Background
from snapglyph.testing import Simulator, answer

genai = pytest.importorskip("google.genai")
types = pytest.importorskip("google.genai.types")
pytest.importorskip("uvicorn")

MODEL = "gemini-3-flash-preview"          # the "gemini" reader profile: the simulator's Gemini image rule too
WINDOW = 8000
OTHER_FIELDS = ("systemInstruction", "generationConfig", "safetySettings", "tools", "toolConfig", "cachedContent")
TOOL = {"name": "read_file", "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}


@pytest.fixture
def caplog_serve(caplog):
    caplog.set_level(logging.INFO, logger="snapglyph.serve")
    return caplog


def _log_text(tag: str, n: int) -> str:
    return "\n".join(f"2026-12-01 03:{n % 60:02d}:{k:02d} worker[{tag}-{n}] step {k}: processed batch {n * 100 + k} "
                     f"in {k * 7 % 93} ms, queue depth {k * 3 % 17}" for k in range(24))


def _client(url: str, conversation: str | None = None):
    opts: dict = {"base_url": url, "timeout": 120_000}
    if conversation:
        opts["headers"] = {"x-snapglyph-conversation": conversation}
    return genai.Client(api_key="x", http_options=opts)


def _config(**kw):
    return types.GenerateContentConfig(
        system_instruction="You read worker logs.", max_output_tokens=256, temperature=0.2,
        safety_settings=[types.SafetySetting(category="HARM_CATEGORY_HARASSMENT", threshold="BLOCK_NONE")],
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(**TOOL)])],
        tool_config=types.ToolConfig(function_calling_config=types.FunctionCallingConfig(mode="AUTO")),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True), **kw)


def _opening() -> list:
    return [types.Content(role="user", parts=[types.Part(text="Task: watch the worker logs I paste.")]),
            types.Content(role="model", parts=[types.Part(text="Ready.")])]


def _turn(client, hist: list, tag: str, n: int, stream: bool, config) -> str:
    hist.append(types.Content(role="user", parts=[types.Part(text=f"turn {n}: next log\n{_log_text(tag, n)}")]))
    if stream:
        text = "".join(c.text or "" for c in client.models.generate_content_stream(model=MODEL, contents=hist,
                                                                                    config=config))
    else:
        text = client.models.generate_content(model=MODEL, contents=hist, config=config).text
    hist.append(types.Content(role="model", parts=[types.Part(text=text)]))
    return text


def _images(body: dict) -> list[bytes]:
    """The decoded ``inline_data`` / ``inlineData`` blobs of a Gemini body, in order."""
    return [base64.b64decode((p.get("inline_data") or p.get("inlineData"))["data"])
            for c in body["contents"] for p in c["parts"] if p.get("inline_data") or p.get("inlineData")]


def _proxy(sim: Simulator, tmp_path) -> Background:
    return Background(ServeConfig(sim.base_url, state=tmp_path / "state")).start()


def _reply(d: str, b: dict):
    return answer(f"noted, {len(b.get('contents', []))} turns")


@pytest.mark.parametrize("stream", [False, True])
def test_long_conversation_overflows_once_and_recovers(tmp_path, stream, caplog_serve):
    turns = 16
    with Simulator(_reply, provider="gemini", context_window=WINDOW) as sim, _proxy(sim, tmp_path) as bg:
        client, hist = _client(bg.url), _opening()
        config = _config(cached_content="cachedContents/worker-logs-1")
        for n in range(turns):
            assert _turn(client, hist, "w", n, stream, config).startswith("noted")   # no error reached the client
        status = httpx.get(bg.url + "/snapglyph/status").json()
    kinds = [e["kind"] for e in sim.log]
    assert kinds.count("overflow") == 1 and kinds.count("ok") == turns, kinds
    assert all(e["path"].endswith(":streamGenerateContent" if stream else ":generateContent") for e in sim.log)
    assert all(e["stream"] == stream for e in sim.log if e["kind"] == "ok")
    at = kinds.index("overflow")
    sent, recovered = json.loads(sim.log[at]["raw"]), json.loads(sim.log[at + 1]["raw"])
    assert _images(sent) == [] and sim.log[at + 1]["prompt_tokens"] <= WINDOW
    pages = _images(recovered)
    assert pages and all(p.startswith(b"\x89PNG\r\n\x1a\n") for p in pages)
    assert '"inline_data"' not in sim.log[at + 1]["raw"].decode()     # the pages in the SDK's spelling: inlineData
    assert validate(recovered, "gemini") == []
    for k in OTHER_FIELDS:                                  # the client's other fields, as sent
        assert k in sent and (recovered[k] == sent[k] or k == "tools"), k
    (tool,) = recovered["tools"]                            # recall_messages after the client's own declarations
    assert tool["functionDeclarations"][:-1] == sent["tools"][0]["functionDeclarations"]
    assert tool["functionDeclarations"][-1]["name"] == "recall_messages"
    assert recovered["contents"][0] == sent["contents"][0]                   # head and tail as sent
    tail = len(recovered["contents"]) - 2
    assert tail >= 1 and recovered["contents"][-tail:] == sent["contents"][-tail:]
    assert len(recovered["contents"]) < len(sent["contents"])
    later = [json.loads(e["raw"]) for e in sim.log[at + 2:]]          # compacted first: pages, under the window
    assert later and all(_images(b) for b in later) and all(e["prompt_tokens"] <= WINDOW for e in sim.log[at + 1:])
    (conv,) = status["conversations"]
    assert conv["dialect"] == "gemini" and conv["model"] == MODEL and conv["window"] == WINDOW
    assert conv["profile"] == "gemini" and conv["cuts"] >= 1
    lines = [r.getMessage() for r in caplog_serve.records if r.name == "snapglyph.serve"]
    rec = [line for line in lines if " recovered " in line]
    assert len(rec) == 1 and " gemini POST /v1" in rec[0] and "recall_messages not offered" not in rec[0]


def test_two_conversations_with_the_same_opening_are_kept_apart_by_the_header(tmp_path):
    with Simulator(_reply, provider="gemini", context_window=WINDOW) as sim, _proxy(sim, tmp_path) as bg:
        clients = {tag: _client(bg.url, conversation=f"session-{tag}") for tag in ("alpha", "beta")}
        hists = {tag: _opening() for tag in clients}
        config = _config()
        for n in range(16):                                  # interleaved, one turn each
            for tag, client in clients.items():
                assert _turn(client, hists[tag], tag, n, n % 2 == 1, config).startswith("noted")
        status = httpx.get(bg.url + "/snapglyph/status").json()
    # the first to overflow taught the model's window; the other was compacted before it was sent (issue 35 item 3)
    assert [e["kind"] for e in sim.log].count("overflow") == 1
    for e in sim.log:                                       # never one conversation's text in the other's request
        raw = e["raw"].decode()
        assert ("worker[alpha-" in raw) != ("worker[beta-" in raw), raw[:200]
        assert "x-snapglyph-conversation" not in {k.lower() for k in e["headers"]}   # not sent upstream
    convs = status["conversations"]
    assert len(convs) == 2 and len({c["key"] for c in convs}) == 2
    assert all(c["dialect"] == "gemini" and c["cuts"] >= 1 and c["compactions"] >= 1 for c in convs)


def test_count_tokens_is_relayed_unchanged(tmp_path, caplog_serve):
    with Simulator(_reply, provider="gemini", context_window=WINDOW) as sim, _proxy(sim, tmp_path) as bg:
        client, hist = _client(bg.url), _opening()
        for n in range(14):                                  # past the overflow: the conversation is compacted
            _turn(client, hist, "w", n, False, _config())
        assert [e["kind"] for e in sim.log].count("overflow") == 1
        total = client.models.count_tokens(model=MODEL, contents=hist).total_tokens
        entry = sim.log[-1]
        assert entry["kind"] == "count_tokens" and entry["path"].endswith(f"/models/{MODEL}:countTokens")
        assert total == entry["prompt_tokens"] > WINDOW and _images(json.loads(entry["raw"])) == []
        raw = json.dumps({"contents": [{"role": "user", "parts": [{"text": "caf\u00e9 " * 20}]}]}, indent=1).encode()
        r = httpx.post(bg.url + f"/v1beta/models/{MODEL}:countTokens", content=raw,
                       headers={"content-type": "application/json", "x-goog-api-key": "x"})
        assert r.status_code == 200 and sim.log[-1]["raw"] == raw and r.content == sim.log[-1]["sent"]
        assert r.json()["totalTokens"] == sim.log[-1]["prompt_tokens"] > 0
    lines = [r.getMessage() for r in caplog_serve.records if r.name == "snapglyph.serve" and "countTokens" in
             r.getMessage()]
    assert len(lines) == 2 and all(" relay POST " in line and " passed " in line for line in lines)


def test_a_tail_shown_as_pages_falls_back_to_the_rebuild_with_the_clients_fields():
    from snapglyph.serve.rewrite import compact_body
    body = {"systemInstruction": {"parts": [{"text": "be brief"}]},
            "generationConfig": {"maxOutputTokens": 200, "temperature": 0.1},
            "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
            "tools": [{"functionDeclarations": [{"name": "ls", "description": "list",
                                                 "parameters": {"type": "object"}}]}],
            "contents": [{"role": "model" if i % 2 else "user", "parts": [{"text": f"step {i} " + "word " * 300}]}
                         for i in range(8)]}
    listing = "\n".join(f"file_{k}.py  {k * 37} bytes" for k in range(600))
    body["contents"] += [{"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
                         {"role": "user", "parts": [{"functionResponse": {"name": "ls",
                                                                          "response": {"output": listing}}}]}]
    # the output reserve is the request's generationConfig.maxOutputTokens (200): a budget that pages the listing
    out, res, _ = compact_body(body, "gemini", profile="gemini", budget=5200, recall_tool=True)
    assert [p[0] for p in res.paged] == [10]                # the listing in the tail is shown as pages
    assert any(n.startswith("head and tail rebuilt by snapglyph") for n in res.notes)
    assert not any(n.startswith("recall_messages not offered") for n in res.notes)
    assert {k: v for k, v in out.items() if k not in ("contents", "tools")} == {
        k: v for k, v in body.items() if k not in ("contents", "tools")}
    assert [d["name"] for d in out["tools"][0]["functionDeclarations"]] == ["ls", "recall_messages"]
    assert validate(out, "gemini") == [] and _images(out) and out["contents"][0] == body["contents"][0]
    assert list(out["contents"][-1]["parts"][0]) == ["functionResponse"] and listing not in json.dumps(out)
    assert '"inline_data"' not in json.dumps(out) and '"mimeType": "image/png"' in json.dumps(out)
    snake = {**body, "contents": body["contents"][:-2] + [   # a client of the snake-case names gets its spelling
        {"role": "model", "parts": [{"function_call": {"name": "ls", "args": {}}}]},
        {"role": "user", "parts": [{"function_response": {"name": "ls", "response": {"output": listing}}}]}]}
    out, res, _ = compact_body(snake, "gemini", profile="gemini", budget=5200)
    assert _images(out) and '"inlineData"' not in json.dumps(out) and validate(out, "gemini") == []
