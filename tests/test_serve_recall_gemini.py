"""``snapglyph serve`` answers ``recall_messages`` for Gemini: a client -> the proxy -> the simulator (provider
``gemini``), ``generateContent`` and ``streamGenerateContent?alt=sse``.

A conversation overflows the simulator's window, the proxy compacts it (the request now declares the recall
function), the scripted model calls ``recall_messages`` and the proxy answers with a ``functionResponse`` holding
the exact stored text; the client sees only the final turn. The bytes the client gets are checked exactly against
what the simulator sent, and the follow-up request against the compacted one.
"""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from snapglyph.serve.app import ServeConfig
from snapglyph.serve.recall_shapes import STOPPED_NOTE
from snapglyph.serve.run import Background
from snapglyph.serve.sse import encode, parse_event
from snapglyph.testing import Simulator, Step, answer, call

pytest.importorskip("uvicorn")

MODEL = "gemini-2.5-flash"
SECRET = "exact: 3f2a9c1d \x1b[31mred\x1b[0m caf\u00e9 \U0001f680 tab\there  two  spaces"
EXACT = "#3 assistant\nnoted " + SECRET
READ = {"name": "read_file", "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}


@pytest.fixture
def caplog_serve(caplog):
    caplog.set_level(logging.INFO, logger="snapglyph.serve")
    return caplog


def _log_text(n: int) -> str:
    return "\n".join(f"2026-12-01 03:{n % 60:02d}:{k:02d} worker[{n}] step {k}: batch {n * 100 + k} in "
                     f"{k * 7 % 93} ms, queue depth {k * 3 % 17}" for k in range(24))


def _body(tools: list | None = None) -> dict:
    """30 turns, about 10,000 tokens: turn #3 (the model's) holds SECRET."""
    turns = [("user", "Task: watch the worker logs I paste and tell me what stands out."), ("model", "Ready."),
             ("user", "turn 0\n" + _log_text(0)), ("model", "noted " + SECRET)]
    for n in range(1, 14):
        turns += [("user", f"turn {n}\n{_log_text(n)}"), ("model", f"n{n}")]
    turns.append(("user", "what was the exact text of message #3?"))
    body = {"contents": [{"role": r, "parts": [{"text": t}]} for r, t in turns],
            "generationConfig": {"maxOutputTokens": 256, "temperature": 0.2}}
    return {**body, "tools": tools} if tools else body


def _recall_result(body: dict) -> str | None:
    """The text of the recall answer the request ends with, else None."""
    last = body["contents"][-1]
    frs = [p["functionResponse"] for p in last["parts"] if "functionResponse" in p]
    return frs[-1]["response"]["output"] if frs and frs[-1]["name"] == "recall_messages" else None


def _script(dialect: str, body: dict) -> Step:
    got = _recall_result(body)
    if got is not None:
        return answer("recalled: " + got)
    return Step(text="Let me check #3.", tool_calls=(("recall_messages", {"ids": "#3"}),))


def _declared(body: dict) -> list[str]:
    return [d["name"] for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]


def _post(url: str, body: dict, stream: bool) -> httpx.Response:
    path = f"/v1beta/models/{MODEL}:" + ("streamGenerateContent?alt=sse" if stream else "generateContent")
    return httpx.post(url + path, content=json.dumps(body).encode(), timeout=120,
                      headers={"content-type": "application/json", "x-goog-api-key": "x"})


def _events(raw: bytes) -> list:
    """The events of an SSE body, each with its raw bytes."""
    out, start = [], 0
    while start < len(raw):
        end = raw.find(b"\r\n\r\n", start)
        end = len(raw) if end < 0 else end + 4
        out.append(parse_event(raw[start:end]))
        start = end
    return out


def _chunks(raw: bytes) -> list[dict]:
    """The chunks of an SSE body, whatever its line ends."""
    return [parse_event(x + b"\n\n").data for x in bytes(raw).replace(b"\r\n", b"\n").split(b"\n\n") if x.strip()]


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "snapglyph.serve"]


def _run(tmp_path, script, stream: bool, tools: list | None = None, **kw) -> tuple[Simulator, httpx.Response, dict]:
    with Simulator(script, provider="gemini", context_window=6000) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state", **kw)).start() as bg:
        r = _post(bg.url, _body(tools), stream)
        status = httpx.get(bg.url + "/snapglyph/status").json()
    return sim, r, status


@pytest.mark.parametrize("stream", [False, True])
def test_recall_is_answered_with_the_exact_text_and_the_client_sees_the_final_turn(tmp_path, stream, caplog_serve):
    sim, r, status = _run(tmp_path, _script, stream)
    assert r.status_code == 200 and [e["kind"] for e in sim.log] == ["overflow", "ok", "ok"]
    compacted, follow = json.loads(sim.log[1]["raw"]), json.loads(sim.log[2]["raw"])
    assert _declared(json.loads(sim.log[0]["raw"])) == [] and _declared(compacted) == ["recall_messages"]
    # the follow-up: the compacted request as sent, the model's turn as it came (its signature), the answer
    assert {k: v for k, v in follow.items() if k != "contents"} == {k: v for k, v in compacted.items()
                                                                     if k != "contents"}
    assert follow["contents"][:-2] == compacted["contents"]
    model_turn = {"role": "model", "parts": [{"text": "Let me check #3."}, {
        "functionCall": {"name": "recall_messages", "args": {"ids": "#3"}},
        "thoughtSignature": "c2ltLXNpZ25hdHVyZS0wMDAy"}]}
    assert follow["contents"][-2:] == [model_turn, {"role": "user", "parts": [
        {"functionResponse": {"name": "recall_messages", "response": {"output": EXACT}}}]}]
    first = sim.log[1]["sent"]
    last = sim.log[2]["sent"]
    if not stream:
        want = json.loads(last)
        want["candidates"][0]["content"]["parts"] = [{"text": "Let me check #3."}, {"text": "\n\n"},
                                                     {"text": "recalled: " + EXACT}]
        assert r.content == json.dumps(want, ensure_ascii=False, separators=(",", ":")).encode()
        assert r.headers["content-length"] == str(len(r.content))
    else:
        ones, twos = _events(bytes(first)), _events(bytes(last))
        assert "functionCall" in json.dumps(ones[-1].data) and "functionCall" not in json.dumps([e.data for e in ones[:-1]])
        rid = ones[0].data["responseId"]
        want = b"".join(e.raw for e in ones[:-1])           # the first round's text as it came, byte for byte
        for k, e in enumerate(twos):                         # the last round's: one response id, the separator
            d = {**e.data, "responseId": rid}
            if k == 0:
                d["candidates"] = [{**d["candidates"][0], "content": {
                    "parts": [{"text": "\n\n"}] + d["candidates"][0]["content"]["parts"], "role": "model"}}]
            want += encode(None, d)
        assert r.content == want
        parts = [p for c in _chunks(r.content) for p in c["candidates"][0]["content"]["parts"]]
        assert "".join(p["text"] for p in parts) == "Let me check #3.\n\nrecalled: " + EXACT
        assert not any("functionCall" in p for p in parts)
    (conv,) = status["conversations"]
    assert status["recall_rounds"] == 1 and conv["recalls"] == 1 and conv["dialect"] == "gemini"
    (line,) = [x for x in _lines(caplog_serve) if " recovered " in x]
    assert " gemini POST " in line and "recall_messages answered: 1 round(s), ids #3" in line


@pytest.mark.parametrize("stream", [False, True])
def test_the_rounds_bound_holds(tmp_path, stream, caplog_serve):
    sim, r, status = _run(tmp_path, lambda d, b: call(("recall_messages", {"ids": "3"})), stream, recall_rounds=2)
    assert r.status_code == 200 and [e["kind"] for e in sim.log] == ["overflow", "ok", "ok", "ok"]
    last = _recall_result(json.loads(sim.log[3]["raw"]))
    assert last.startswith(EXACT) and "the last recall of this turn" in last
    contents = json.loads(sim.log[3]["raw"])["contents"]
    assert [c["role"] for c in contents[-4:]] == ["model", "user", "model", "user"]
    if stream:
        (got,), (want,) = _chunks(r.content), _chunks(sim.log[3]["sent"])
        assert got["responseId"] == _chunks(sim.log[1]["sent"])[0]["responseId"]
        assert got == {**want, "responseId": got["responseId"], "candidates": [
            {**want["candidates"][0], "content": {"parts": [{"text": STOPPED_NOTE}], "role": "model"}}]}
    else:
        want = json.loads(sim.log[3]["sent"])
        want["candidates"][0]["content"]["parts"] = [{"text": STOPPED_NOTE}]
        assert r.json() == want
    assert status["recall_rounds"] == 2 and status["conversations"][0]["recalls"] == 2
    (line,) = [x for x in _lines(caplog_serve) if " recovered " in x]
    assert "2 round(s)" in line and "again after 2 round(s) (the bound)" in line


@pytest.mark.parametrize("stream", [False, True])
def test_recall_beside_the_clients_own_tools_is_relayed_without_it(tmp_path, stream, caplog_serve):
    both = call(("recall_messages", {"ids": "#3"}), ("read_file", {"path": "a.txt"}))
    tools = [{"functionDeclarations": [READ]}]
    sim, r, status = _run(tmp_path, [both], stream, tools=tools)
    assert r.status_code == 200 and [e["kind"] for e in sim.log] == ["overflow", "ok"]
    sent = json.loads(sim.log[1]["raw"])["tools"]            # one function tool: the client's, then recall
    assert sent == [{"functionDeclarations": [READ, sent[0]["functionDeclarations"][1]]}]
    assert _declared({"tools": sent}) == ["read_file", "recall_messages"]
    reply = json.loads(sim.log[1]["sent"]) if not stream else None
    if stream:
        chunks = _chunks(r.content)
        parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
        assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    else:
        parts = r.json()["candidates"][0]["content"]["parts"]
        assert r.json()["usageMetadata"] == reply["usageMetadata"]
    assert parts == [{"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}}]   # the signed call gone
    assert status["recall_rounds"] == 0
    assert any("beside 1 client tool call(s)" in x for x in _lines(caplog_serve))


def test_an_answer_without_recall_goes_to_the_client_byte_for_byte(tmp_path):
    for stream in (False, True):
        sim, r, _ = _run(tmp_path / str(stream), [answer("nothing stands out")], stream)
        assert [e["kind"] for e in sim.log] == ["overflow", "ok"] and _declared(json.loads(sim.log[1]["raw"]))
        assert r.status_code == 200 and r.content == bytes(sim.log[1]["sent"])


def test_a_compaction_that_shows_no_page_only_where_recall_is_answered(tmp_path, caplog_serve):
    def script(d: str, body: dict) -> Step:
        got = _recall_result(body)
        return answer("recalled: " + got) if got is not None else call(("recall_messages", {"ids": "#3"}))

    # at 3,000 tokens, with 256 asked for and the recall tool, no page of the middle fits beside the tail
    body = {**_body(), "generationConfig": {"maxOutputTokens": 256}}
    for rounds in (3, 0):
        with Simulator(script, provider="gemini", context_window=3000) as sim, \
                Background(ServeConfig(sim.base_url, state=tmp_path / f"s{rounds}", recall_rounds=rounds)).start() \
                as bg:
            r = _post(bg.url, body, False)
        line = _lines(caplog_serve)[-1]
        if not rounds:                               # no recall: never a middle shown on no page
            assert " pages 0 " not in line and not any(e.get("image_tokens") == 0 for e in sim.log[1:])
            continue
        assert r.status_code == 200 and [e["kind"] for e in sim.log] == ["overflow", "ok", "ok"]
        assert sim.log[1]["image_tokens"] == 0 and " pages 0 " in line
        assert "no page of the middle shown: recall_messages offered and answered here" in line
        assert "".join(p["text"] for p in r.json()["candidates"][0]["content"]["parts"]) == "recalled: " + EXACT


def test_the_google_genai_sdk_reads_the_spliced_answer(tmp_path):
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    contents = [types.Content(role=c["role"], parts=[types.Part(text=c["parts"][0]["text"])])
                for c in _body()["contents"]]
    config = types.GenerateContentConfig(max_output_tokens=256)
    for stream in (False, True):
        with Simulator(_script, provider="gemini", context_window=6000) as sim, \
                Background(ServeConfig(sim.base_url, state=tmp_path / str(stream))).start() as bg:
            client = genai.Client(api_key="x", http_options={"base_url": bg.url, "timeout": 120_000})
            if stream:
                text = "".join(c.text or "" for c in client.models.generate_content_stream(
                    model=MODEL, contents=contents, config=config))
            else:
                text = client.models.generate_content(model=MODEL, contents=contents, config=config).text
        assert [e["kind"] for e in sim.log] == ["overflow", "ok", "ok"]
        assert text == "Let me check #3.\n\nrecalled: " + EXACT


def test_a_stream_without_sse_is_answered_as_one_array(tmp_path):
    with Simulator(_script, provider="gemini", context_window=6000) as sim, \
            Background(ServeConfig(sim.base_url, state=tmp_path / "state")).start() as bg:
        r = httpx.post(bg.url + f"/v1beta/models/{MODEL}:streamGenerateContent", content=json.dumps(_body()).encode(),
                       timeout=120, headers={"content-type": "application/json", "x-goog-api-key": "x"})
    assert r.status_code == 200 and [e["kind"] for e in sim.log] == ["overflow", "ok", "ok"]
    assert _recall_result(json.loads(sim.log[2]["raw"])) == EXACT
    first, last = json.loads(sim.log[1]["sent"]), json.loads(sim.log[2]["sent"])
    assert "functionCall" in json.dumps(first[-1]) and len(last) > 1           # the upstream's arrays of chunks
    want = {**last[-1], "candidates": [{**last[-1]["candidates"][0], "content": {"parts": [
        {"text": "Let me check #3."}, {"text": "\n\n"}, {"text": "recalled: " + EXACT}], "role": "model"}}]}
    assert r.content == json.dumps([want], ensure_ascii=False, separators=(",", ":")).encode()


# -- the parts ------------------------------------------------------------------------------------------------------
def _chunk(parts: list, rid: str = "r1", **fields) -> object:
    return parse_event(encode(None, {"candidates": [{"content": {"role": "model", "parts": parts}, **fields}],
                                     "responseId": rid}))


def test_a_thought_right_before_a_recall_call_goes_with_it_and_one_before_text_goes_out():
    from snapglyph.serve.recall_gemini_stream import GeminiSplicer
    thought = {"text": "I need #3", "thought": True}
    recall = {"functionCall": {"name": "recall_messages", "args": {"ids": "#3"}, "id": "fc1"},
              "thoughtSignature": "c2ln"}
    sp = GeminiSplicer()
    sent = sp.feed(_chunk([{"text": "checking"}])) + sp.feed(_chunk([thought])) + sp.feed(
        _chunk([recall], finishReason="STOP"))
    assert [parse_event(b).data["candidates"][0]["content"]["parts"] for b in sent] == [[{"text": "checking"}]]
    reply = sp.reply()                                 # the follow-up sends the thought and the signed call back
    assert reply["candidates"][0]["content"]["parts"] == [{"text": "checking"}, thought, recall]
    assert sp.end_round(go_on=True) == []
    from snapglyph.serve.recall_shapes import follow_up
    out = follow_up("gemini", {"contents": [{"role": "user", "parts": [{"text": "q"}]}]}, reply, [("fc1", "x")])
    assert out["contents"][-1] == {"role": "user", "parts": [{"functionResponse": {
        "name": "recall_messages", "response": {"output": "x"}, "id": "fc1"}}]}
    sent = sp.feed(_chunk([thought], "r2")) + sp.feed(_chunk([{"text": "3f2a"}], "r2", finishReason="STOP"))
    sent += sp.end_round(go_on=False)
    got = [parse_event(b).data for b in sent]
    assert [c["candidates"][0]["content"]["parts"] for c in got] == [[thought, {"text": "\n\n"}, {"text": "3f2a"}]]
    assert got[0]["responseId"] == "r1" and got[0]["candidates"][0]["finishReason"] == "STOP"


def test_a_client_call_after_a_recall_call_releases_what_was_held():
    from snapglyph.serve.recall_gemini_stream import GeminiSplicer
    sp = GeminiSplicer()
    recall = {"functionCall": {"name": "recall_messages", "args": {"ids": "#3"}}}
    read = {"functionCall": {"name": "read_file", "args": {"path": "a"}}}
    first = _chunk([{"text": "a"}, recall, {"text": "b"}])
    assert [parse_event(b).data["candidates"][0]["content"]["parts"] for b in sp.feed(first)] == [[{"text": "a"}]]
    last = _chunk([read], finishReason="STOP")
    sent = [parse_event(b).data for b in sp.feed(last)]
    assert [c["candidates"][0]["content"]["parts"] for c in sent] == [[{"text": "b"}, read]]
    from snapglyph.serve.recall_shapes import calls_of, strip
    assert calls_of("gemini", sp.reply()) == ([("", "#3")], 1)         # relayed: nothing waits for recall
    assert strip("gemini", sp.reply())["candidates"][0]["content"]["parts"] == [{"text": "a"}, {"text": "b"}, read]
    assert sent[0]["candidates"][0]["finishReason"] == "STOP" and sp.end_round(go_on=False) == []
