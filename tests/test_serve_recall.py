"""``snapglyph serve`` answers ``recall_messages`` itself: the official SDKs -> the proxy -> the simulator.

A conversation overflows the simulator's window, the proxy compacts it (the request now offers the recall tool),
the scripted model calls ``recall_messages`` and the proxy sends the exact stored text upstream; the client sees
only the final answer, streaming or not, in each dialect.
"""

from __future__ import annotations

import json
import logging

import anthropic
import httpx
import openai
import pytest

try:
    from snapglyph.testing import Simulator, Step, answer, call
except ImportError:                                        # the simulator before its move into the library
    from snapglyph_agent_demo.simulator import Simulator, Step, answer, call

from snapglyph import Message, Part, SourceStore
from snapglyph._config import RECALL_MARGIN
from snapglyph.serve.app import ServeConfig
from snapglyph.serve.recall_loop import RecallJob, RecallRelay
from snapglyph.serve.recall_shapes import STOPPED_NOTE, recall_answer, strip
from snapglyph.serve.recall_stream import splicer
from snapglyph.serve.run import Background
from snapglyph.serve.sse import encode, parse_event

pytest.importorskip("uvicorn")

DIALECTS = ["anthropic", "openai", "responses"]
PROVIDER = {"anthropic": "anthropic", "openai": "openai", "responses": "openai-responses"}
MODEL = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o", "responses": "gpt-5.4"}
SECRET = "exact: 3f2a9c1d \x1b[31mred\x1b[0m caf\u00e9 \U0001f680 tab\there  two  spaces"
READ = {"name": "read_file", "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}
TOOLS = {"anthropic": [READ],
         "openai": [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                                      "parameters": READ["input_schema"]}}],
         "responses": [{"type": "function", "name": "read_file", "description": "Read a file",
                        "parameters": READ["input_schema"]}]}


@pytest.fixture
def caplog_serve(caplog):
    caplog.set_level(logging.INFO, logger="snapglyph.serve")
    return caplog


def _log_text(n: int) -> str:
    return "\n".join(f"2026-12-01 03:{n % 60:02d}:{k:02d} worker[{n}] step {k}: batch {n * 100 + k} in "
                     f"{k * 7 % 93} ms, queue depth {k * 3 % 17}" for k in range(24))


def _conversation() -> list[dict]:
    """30 messages, about 10,000 tokens: message #3 (an assistant's) holds SECRET."""
    msgs = [{"role": "user", "content": "Task: watch the worker logs I paste and tell me what stands out."},
            {"role": "assistant", "content": "Ready."}, {"role": "user", "content": "turn 0\n" + _log_text(0)},
            {"role": "assistant", "content": "noted " + SECRET}]
    for n in range(1, 14):
        msgs += [{"role": "user", "content": f"turn {n}\n{_log_text(n)}"}, {"role": "assistant", "content": f"n{n}"}]
    return msgs + [{"role": "user", "content": "what was the exact text of message #3?"}]


def _recall_result(dialect: str, body: dict) -> str | None:
    """The text of the recall answer the request ends with, else None."""
    items = body.get("input") if dialect == "responses" else body.get("messages")
    last = items[-1] if items else {}
    if dialect == "responses":
        return last.get("output") if last.get("type") == "function_call_output" else None
    if dialect == "openai":
        return last.get("content") if last.get("role") == "tool" else None
    results = [b for b in last.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
    return results[-1]["content"] if results else None


def _proxy(sim: Simulator, tmp_path, **kw) -> Background:
    return Background(ServeConfig(sim.base_url, state=tmp_path / "state", **kw)).start()


def _ask(url: str, dialect: str, stream: bool, tools: list | None = None) -> dict:
    """One request through the proxy with the official SDK: ``{"texts", "calls", "stop"}`` of the final answer."""
    msgs, kw = _conversation(), ({"tools": tools} if tools else {})
    if dialect == "anthropic":
        a = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=120)
        if stream:
            with a.messages.stream(model=MODEL[dialect], max_tokens=256, messages=msgs, **kw) as s:
                m = s.get_final_message()
        else:
            m = a.messages.create(model=MODEL[dialect], max_tokens=256, messages=msgs, **kw)
        return {"texts": [b.text for b in m.content if b.type == "text"], "stop": m.stop_reason,
                "calls": [b.name for b in m.content if b.type == "tool_use"]}
    o = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0, timeout=120)
    if dialect == "responses":
        if stream:
            with o.responses.stream(model=MODEL[dialect], input=msgs, max_output_tokens=256, **kw) as s:
                r = s.get_final_response()
        else:
            r = o.responses.create(model=MODEL[dialect], input=msgs, max_output_tokens=256, **kw)
        return {"texts": [c.text for i in r.output if i.type == "message" for c in i.content],
                "calls": [i.name for i in r.output if i.type == "function_call"], "stop": r.status}
    if stream:
        chunks = [c for c in o.chat.completions.create(model=MODEL[dialect], max_tokens=256, messages=msgs,
                                                       stream=True, **kw) if c.choices]
        calls: dict = {}
        for c in chunks:
            for tc in c.choices[0].delta.tool_calls or []:
                calls.setdefault(tc.index, tc.function.name)
        return {"texts": ["".join(c.choices[0].delta.content or "" for c in chunks)],
                "calls": [calls[k] for k in sorted(calls)], "stop": chunks[-1].choices[0].finish_reason}
    r = o.chat.completions.create(model=MODEL[dialect], max_tokens=256, messages=msgs, **kw).choices[0]
    return {"texts": [r.message.content], "calls": [c.function.name for c in r.message.tool_calls or []],
            "stop": r.finish_reason}


def _status(url: str) -> dict:
    return httpx.get(url + "/snapglyph/status").json()


def _offers_recall(raw: bytes) -> bool:
    tools = json.loads(raw).get("tools") or []
    return any((t.get("name") or t.get("function", {}).get("name")) == "recall_messages" for t in tools)


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "snapglyph.serve"]


# -- a recall round -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_recall_is_answered_with_the_exact_text_and_the_client_sees_the_final_answer(tmp_path, dialect, stream,
                                                                                     caplog_serve):
    def script(d: str, body: dict) -> Step:
        got = _recall_result(d, body)
        if got is not None:
            return answer("recalled: " + got)
        return Step(text="Let me check #3.", tool_calls=(("recall_messages", {"ids": "#3"}),))

    with Simulator(script, provider=PROVIDER[dialect], context_window=6000) as sim, _proxy(sim, tmp_path) as bg:
        got = _ask(bg.url, dialect, stream)
        status = _status(bg.url)
    exact = "#3 assistant\nnoted " + SECRET
    assert [e["kind"] for e in sim.log] == ["overflow", "ok", "ok"]
    assert not _offers_recall(sim.log[0]["raw"]) and _offers_recall(sim.log[1]["raw"])   # the proxy added it
    assert _recall_result(dialect, json.loads(sim.log[2]["raw"])) == exact                 # byte for byte
    assert got["calls"] == [] and got["stop"] in ("end_turn", "stop", "completed")
    if dialect == "openai":
        assert got["texts"] == ["Let me check #3.\n\nrecalled: " + exact]
    else:
        assert got["texts"] == ["Let me check #3.", "recalled: " + exact]
    (conv,) = status["conversations"]
    assert status["recall_rounds"] == 1 and conv["recalls"] == 1
    (line,) = [x for x in _lines(caplog_serve) if " recovered " in x]
    assert "recall_messages answered: 1 round(s), ids #3" in line


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_rounds_bound_holds(tmp_path, dialect, stream, caplog_serve):
    with Simulator(lambda d, b: call(("recall_messages", {"ids": "3"})), provider=PROVIDER[dialect],
                   context_window=6000) as sim, _proxy(sim, tmp_path, recall_rounds=2) as bg:
        got = _ask(bg.url, dialect, stream)
        status = _status(bg.url)
    assert [e["kind"] for e in sim.log] == ["overflow", "ok", "ok", "ok"]       # the compacted request, 2 rounds
    last = _recall_result(dialect, json.loads(sim.log[3]["raw"]))
    assert last.startswith("#3 assistant\nnoted " + SECRET) and "the last recall of this turn" in last
    assert got == {"texts": [STOPPED_NOTE], "calls": [], "stop": {"anthropic": "end_turn", "openai": "stop",
                                                                   "responses": "completed"}[dialect]}
    assert status["recall_rounds"] == 2 and status["conversations"][0]["recalls"] == 2
    (line,) = [x for x in _lines(caplog_serve) if " recovered " in x]
    assert "2 round(s)" in line and "again after 2 round(s) (the bound)" in line


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_recall_beside_the_clients_own_tools_is_relayed_without_it(tmp_path, dialect, stream, caplog_serve):
    both = call(("recall_messages", {"ids": "#3"}), ("read_file", {"path": "a.txt"}))
    with Simulator([both], provider=PROVIDER[dialect], context_window=6000) as sim, _proxy(sim, tmp_path) as bg:
        got = _ask(bg.url, dialect, stream, tools=TOOLS[dialect])
        status = _status(bg.url)
    assert [e["kind"] for e in sim.log] == ["overflow", "ok"]                 # no round: nothing waits for recall
    assert got["calls"] == ["read_file"] and got["stop"] in ("tool_use", "tool_calls", "completed")
    sent = json.loads(sim.log[1]["raw"])["tools"]
    assert len(sent) == 2 and sent[0] == TOOLS[dialect][0]                     # the client's tool first, as sent
    assert status["recall_rounds"] == 0
    assert any("beside 1 client tool call(s)" in x for x in _lines(caplog_serve))


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_without_recall_goes_to_the_client_byte_for_byte(tmp_path, stream):
    body = {"model": MODEL["anthropic"], "max_tokens": 256, "messages": _conversation(), "stream": stream}
    with Simulator([answer("nothing stands out")], provider="anthropic", context_window=6000) as sim, \
            _proxy(sim, tmp_path) as bg, httpx.Client(timeout=120) as c:
        with c.stream("POST", bg.url + "/v1/messages", content=json.dumps(body).encode(),
                      headers={"x-api-key": "k"}) as r:
            got = b"".join(r.iter_raw())
    assert [e["kind"] for e in sim.log] == ["overflow", "ok"] and _offers_recall(sim.log[1]["raw"])
    assert r.status_code == 200 and got == bytes(sim.log[1]["sent"])


@pytest.mark.parametrize("rounds", [3, 0])
def test_a_compaction_that_shows_no_page_only_where_recall_is_answered(tmp_path, rounds, caplog_serve):
    def script(d: str, body: dict) -> Step:
        got = _recall_result(d, body)
        return answer("recalled: " + got) if got is not None else call(("recall_messages", {"ids": "#3"}))

    # at 4,000 tokens no 3,000-token page of gpt-5.4 fits beside the tail
    body = {"model": "gpt-5.4", "max_tokens": 256, "messages": _conversation()}
    with Simulator(script, provider="openai", context_window=4000) as sim, \
            _proxy(sim, tmp_path, recall_rounds=rounds) as bg:
        r = httpx.post(bg.url + "/v1/chat/completions", json=body, timeout=120)
    lines = _lines(caplog_serve)
    if not rounds:                                   # refused: the overflow reaches the client as it came
        assert r.status_code == 400 and r.content == sim.log[0]["sent"]
        assert [e["kind"] for e in sim.log] == ["overflow"]
        assert "allow an empty middle" in lines[-1]
        return
    assert r.status_code == 200 and [e["kind"] for e in sim.log] == ["overflow", "ok", "ok"]
    assert sim.log[1]["image_tokens"] == 0 and " pages 0 " in lines[-1]
    assert "no page of the middle shown: recall_messages offered and answered here" in lines[-1]
    assert r.json()["choices"][0]["message"]["content"] == "recalled: #3 assistant\nnoted " + SECRET


def test_without_recall_no_tool_is_offered(tmp_path):
    with Simulator([answer("fine")], provider="anthropic", context_window=6000) as sim, \
            _proxy(sim, tmp_path, recall_rounds=0) as bg:
        got = _ask(bg.url, "anthropic", False)
    assert [e["kind"] for e in sim.log] == ["overflow", "ok"] and not _offers_recall(sim.log[1]["raw"])
    assert got["texts"] == ["fine"]


# -- the parts ------------------------------------------------------------------------------------------------------
def test_a_recall_is_cut_to_the_room_the_budget_leaves():
    store = SourceStore()
    big = "".join(f"line {k}: " + "abcdef0123456789" * 4 + "\n" for k in range(400))       # 30,000 characters
    store.put([Message(5, "tool", [Part("tool_result", call_id="c1", content=[Part("text", text=big)])]),
               Message(6, "assistant", [Part("text", text="short")])])
    job = RecallJob(None, "POST", "/v1/messages", b"", [], "anthropic", b"{}", store, "claude", room=1500,
                    bound=3)
    relay = RecallRelay(httpx.Response(200), job)
    (cid, text), = relay._answers({"content": []}, [("t1", "#5")])
    assert cid == "t1" and text.startswith("#5 tool\nline 0: ") and "[snapglyph: cut here," in text
    assert 0 < job.room <= RECALL_MARGIN                                       # what was sent is counted
    (_, small), (_, none) = relay._answers({"content": []}, [("t2", "6"), ("t3", "5")])
    assert small == "#6 assistant\nshort" and "no room in the context window for the text of 5" in none


def test_recall_answer_names_ids_it_does_not_hold():
    store = SourceStore()
    store.put([Message(3, "user", [Part("text", text="a\r\nb")])])
    assert recall_answer(store, "#2-#4, 9") == ("#3 user\na\r\nb\n\n#2, #4, #9: not held by snapglyph (no message "
                                                "of that id was shown as pages)")
    assert recall_answer(store, "").startswith("snapglyph could not read the ids")


def test_server_sent_events_parse_with_any_line_end():
    for eol in ("\n", "\r\n", "\r"):
        ev = parse_event(f"event: message_start{eol}data: {{\"a\": 1}}{eol}{eol}".encode())
        assert (ev.name, ev.data) == ("message_start", {"a": 1})


def _ev(name: str | None, data: dict):
    return parse_event(encode(name, data))


def test_a_thinking_block_right_before_a_recall_call_goes_with_it():
    blocks = [{"type": "thinking", "thinking": "", "signature": ""}, {"type": "tool_use", "id": "t1",
                                                                      "name": "recall_messages", "input": {}}]
    events = [_ev("message_start", {"type": "message_start", "message": {"id": "m1", "content": []}})]
    for i, b in enumerate(blocks):
        events.append(_ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": b}))
        delta = ({"type": "thinking_delta", "thinking": "I need #3"} if i == 0 else
                 {"type": "input_json_delta", "partial_json": '{"ids": "#3"}'})
        events.append(_ev("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
        if i == 0:
            events.append(_ev("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                      "delta": {"type": "signature_delta", "signature": "sig"}}))
        events.append(_ev("content_block_stop", {"type": "content_block_stop", "index": i}))
    sp = splicer("anthropic")
    sent = [b for e in events for b in sp.feed(e)]
    reply = sp.reply()                                  # the follow-up sends both back, signature included
    sent += sp.end_round(go_on=True)
    assert [parse_event(b).name for b in sent] == ["message_start"]                 # the thinking went with it
    assert reply["content"] == [{"type": "thinking", "thinking": "I need #3", "signature": "sig"},
                                {"type": "tool_use", "id": "t1", "name": "recall_messages", "input": {"ids": "#3"}}]
    assert strip("anthropic", {**reply, "stop_reason": "tool_use"}) == {**reply, "content": [],
                                                                        "stop_reason": "end_turn"}


def test_a_reasoning_item_right_before_a_recall_call_goes_with_it_in_a_responses_stream():
    items = [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"},
             {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text",
                                                                                   "text": "hi"}]},
             {"type": "reasoning", "id": "rs_2", "summary": []},
             {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "recall_messages",
              "arguments": '{"ids": "4"}'}]
    events = [_ev("response.created", {"type": "response.created", "sequence_number": 0,
                                       "response": {"id": "resp_1", "output": []}})]
    for i, it in enumerate(items):
        for kind in ("added", "done"):
            events.append(_ev(f"response.output_item.{kind}", {"type": f"response.output_item.{kind}",
                                                               "sequence_number": len(events), "output_index": i,
                                                               "item": it}))
    sp = splicer("responses")
    sent = [parse_event(b).data for e in events for b in sp.feed(e)] + [
        parse_event(b).data for b in sp.end_round(go_on=False)]
    done = [(d["output_index"], d["item"]["id"]) for d in sent if d["type"] == "response.output_item.done"]
    assert done == [(0, "rs_1"), (1, "msg_1")]                  # rs_2 went with the recall call
    seqs = [d["sequence_number"] for d in sent]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
