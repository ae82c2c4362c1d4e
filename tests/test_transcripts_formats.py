"""Transcript readers on small synthetic inputs: every dialect's corners, snapshots, and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapglyph import FormatError, from_request, load, load_text
from snapglyph.readers.registry import FORMATS, parse_snapshot_text

DATA = Path(__file__).resolve().parent / "data"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAAAAAC4HznGAAAAC0lEQVR4nGNggAAAAAgAAbdYc5UAAAAASUVORK5CYII="  # 3x2


# ---------------------------------------------------------------------------------------------------- snapshot text
@pytest.mark.parametrize("text,expected", [
    ("snapglyph snapshot: the images above show messages #3-#418 as pages.", {"covered": [[3, 418]], "dropped": []}),
    ("snapglyph snapshot: the images above show messages #3-#418 as pages. Not shown (recall by id): #3-#40.",
     {"covered": [[3, 418]], "dropped": [[3, 40]]}),
    ("snapglyph snapshot: the images above show messages #2-#9, #11, #14-#20 as pages. "
     "Not shown (recall by id): #2-#3, #7.",
     {"covered": [[2, 9], [11, 11], [14, 20]], "dropped": [[2, 3], [7, 7]]}),
    ("snapglyph snapshot: the images above show messages #7 as pages.", {"covered": [[7, 7]], "dropped": []}),
    ("the images above show messages #3-#418 as pages.", None),
    ("snapglyph snapshot: no ranges here", None),
    ("", None),
])
def test_parse_snapshot_text(text, expected):
    assert parse_snapshot_text(text) == expected


def _snapshot_request(dialect: str) -> dict:
    text = "snapglyph snapshot: the images above show messages #2-#9 as pages. Not shown (recall by id): #2-#3."
    if dialect == "openai":
        img = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
        return {"model": "gpt-x", "messages": [
            {"role": "system", "content": "sys"}, {"role": "user", "content": "task"},
            {"role": "user", "content": [img, img, {"type": "text", "text": text}]},
            {"role": "assistant", "content": "next"}, {"role": "user", "content": "more"}]}
    img = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    return {"model": "claude-x", "system": "sys", "max_tokens": 10, "messages": [
        {"role": "user", "content": "task"},
        {"role": "user", "content": [img, img, {"type": "text", "text": text}]},
        {"role": "assistant", "content": "next"}, {"role": "user", "content": "more"}]}


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_compacted_request_keeps_ids(dialect):
    t = from_request(_snapshot_request(dialect))
    assert t.format == dialect
    assert [m.id for m in t.messages] == [0, 1, 2, 10, 11]
    snap = t.messages[2]
    assert snap.role == "user" and snap.meta["snapshot"] == {"covered": [[2, 9]], "dropped": [[2, 3]]}
    assert [(p.kind, p.media_type, p.width, p.height) for p in snap.parts[:2]] == [("image", "image/png", 3, 2)] * 2
    assert t.meta["snapshots"] == 1


# ---------------------------------------------------------------------------------------------------- OpenAI chat
def test_openai_chat_corners():
    body = {"model": "gpt-x", "temperature": 0, "tools": [
        {"type": "function", "function": {"name": "bash", "description": "run", "parameters": {"type": "object"}}}],
        "messages": [
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}",
                                                                         "detail": "high"}},
                                     {"type": "image_url", "image_url": {"url": "https://x.invalid/a.png"}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"cmd":  "ls"}'}},
            {"id": "c2", "type": "function", "function": {"name": "read", "arguments": "{}"}}],
         "agent": "main"},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "tool", "content": "no id: answers the oldest open call"},
        {"role": "system", "content": "a later system note"},
    ]}
    t = from_request(body)
    assert t.format == "openai" and t.model == "gpt-x" and t.meta == {"temperature": 0, "params": {"temperature": 0}}
    assert t.tools == [{"name": "bash", "description": "run", "parameters": {"type": "object"}}]
    sys_, user, asst, r1, r2, later = t.messages
    assert sys_.role == "system" and sys_.id == 0 and sys_.meta["source_role"] == "developer"
    img, url = user.parts[1], user.parts[2]
    assert (img.media_type, img.data, img.width, img.height, img.meta) == ("image/png", PNG, 3, 2, {"detail": "high"})
    assert (url.kind, url.url, url.data) == ("image", "https://x.invalid/a.png", "")
    assert [p.arguments for p in asst.tool_calls()] == ['{"cmd":  "ls"}', "{}"]  # exactly as sent
    assert asst.meta["extra"] == {"agent": "main"}
    assert (r1.role, r1.tool_results()[0].name, r1.tool_results()[0].result_text()) == ("tool", "bash", "a.py")
    assert r2.tool_results()[0].call_id == "c2" and r2.meta["inferred_call_id"] is True
    assert later.role == "system" and later.meta["source_role"] == "system"


def test_openai_tool_call_ids_list_and_orphan():
    t = from_request([
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "y", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_ids": ["a", "b"], "content": "both"},
        {"role": "user", "content": "hi"},
        {"role": "tool", "content": "nobody asked"},
    ])
    res = t.messages[1].tool_results()
    assert [(p.call_id, p.name, p.result_text()) for p in res] == [("a", "x", "both"), ("b", "y", "")]
    assert t.messages[3].meta["orphan"] is True and t.messages[3].tool_results()[0].call_id == ""


# ------------------------------------------------------------------------------------------------------ Anthropic
def test_anthropic_corners():
    body = {"model": "claude-x", "max_tokens": 100,
            "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "Read", "description": "read", "input_schema": {"type": "object"}},
                      {"type": "web_search_20250305", "name": "web_search"}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image", "source": {
                    "type": "base64", "media_type": "image/png", "data": PNG}}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig=="},
                    {"type": "redacted_thinking", "data": "opaque"},
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "é.py"}}]},
                {"role": "user", "content": [
                    {"type": "text", "text": "also this"},
                    {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                     "content": [{"type": "text", "text": "boom"}, {"type": "image", "source": {
                         "type": "url", "url": "https://x.invalid/i.png"}}]}]},
            ]}
    t = from_request(body)
    assert t.format == "anthropic" and [m.id for m in t.messages] == [0, 1, 2, 3, 4]
    assert t.messages[0].role == "system" and t.messages[0].parts[0].meta["extra"] == {
        "cache_control": {"type": "ephemeral"}}
    assert t.tools[0] == {"name": "Read", "description": "read", "parameters": {"type": "object"}}
    assert t.tools[1]["name"] == "web_search" and t.tools[1]["source"]["type"] == "web_search_20250305"
    assert (t.messages[1].parts[1].width, t.messages[1].parts[1].height) == (3, 2)
    th, red, call = t.messages[2].parts
    assert (th.kind, th.text, th.signature, th.meta) == ("thinking", "hmm", "sig==", {})
    assert (red.kind, red.text, red.signature, red.meta) == ("thinking", "", "opaque", {"redacted": True})
    assert call.arguments == '{"path": "é.py"}'
    tool = t.messages[3]
    assert tool.role == "tool" and [p.kind for p in tool.parts] == ["tool_result"]
    assert (t.messages[4].role, t.messages[4].text()) == ("user", "also this")   # the user's words stay theirs
    res = tool.parts[0]
    assert (res.name, res.is_error, [c.kind for c in res.content]) == ("Read", True, ["text", "image"])
    assert res.content[1].url == "https://x.invalid/i.png" and tool.meta["reordered"] is True


# ------------------------------------------------------------------------------------------------------ Responses
def test_responses_request():
    body = {"model": "gpt-5.4", "instructions": "be terse", "store": False,
            "tools": [{"type": "function", "name": "shell", "description": "run", "parameters": {"type": "object"}}],
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "list"},
                                             {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}]},
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}],
                 "encrypted_content": "ENC"},
                {"type": "message", "role": "assistant", "id": "msg_1",
                 "content": [{"type": "output_text", "text": "ok"}]},
                {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": '{"cmd":"ls"}'},
                {"type": "function_call", "call_id": "call_2", "name": "shell", "arguments": '{"cmd":"pwd"}'},
                {"type": "function_call_output", "call_id": "call_1", "output": "a.py"},
                {"type": "function_call_output", "call_id": "call_2", "output": "/repo"},
                {"role": "user", "content": "thanks"},
            ]}
    t = from_request(body)
    assert t.format == "responses" and t.model == "gpt-5.4" and t.meta == {"store": False, "params": {"store": False}}
    assert t.tools == [{"name": "shell", "description": "run", "parameters": {"type": "object"}}]
    assert [(m.id, m.role) for m in t.messages] == [(0, "system"), (1, "user"), (2, "assistant"), (3, "tool"),
                                                    (4, "tool"), (5, "user")]
    assert t.messages[1].parts[1].media_type == "image/png"
    a = t.messages[2]
    assert [p.kind for p in a.parts] == ["thinking", "text", "tool_call", "tool_call"]
    assert a.parts[0].signature == "ENC" and a.parts[0].text == "think"
    assert [(p.call_id, p.name, p.result_text()) for m in t.messages[3:5] for p in m.tool_results()] == [
        ("call_1", "shell", "a.py"), ("call_2", "shell", "/repo")]
    assert from_request({"input": "just text"}).messages[0].text() == "just text"


def test_detection_of_bare_lists():
    assert from_request([{"role": "user", "content": "x"}]).format == "openai"
    assert from_request([{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "n",
                                                            "input": {}}]}]).format == "anthropic"
    assert from_request([{"type": "function_call_output", "call_id": "a", "output": "x"}]).format == "responses"


# ------------------------------------------------------------------------------------------------- session files
def test_claude_code_synthetic_branch():
    t = load(DATA / "claude_code_branch.jsonl")
    assert t.format == "claude-code" and t.model == "claude-test-1"
    assert [m.role for m in t.messages] == ["user", "assistant", "tool", "tool", "user", "assistant"]
    # the abandoned branch (x1, x2) is gone; the four per-block lines of msg_a are one message
    assert "abandoned answer" not in "".join(m.text() for m in t.messages)
    a = t.messages[1]
    assert a.meta["uuids"] == ["a1", "a2", "a3", "a4"]
    assert [p.kind for p in a.parts] == ["thinking", "text", "tool_call", "tool_call"]
    assert a.parts[0].signature == "c2lnbmF0dXJl" and a.parts[3].arguments == '{"file_path": "/repo/b.py", "note": "é"}'
    assert a.parts[2].meta == {"extra": {"caller": {"type": "direct"}}}
    # the first result hangs off a side branch (parent a3) and is added back
    assert [m.tool_results()[0].call_id for m in t.messages[2:4]] == ["toolu_1", "toolu_2"]
    r2 = t.messages[3].tool_results()[0]
    assert r2.is_error and [c.kind for c in r2.content] == ["text", "image"] and r2.content[1].width == 3
    # compaction crossed via logicalParentUuid; the summary is an ordinary user message
    assert t.messages[4].meta["compact_summary"] is True
    assert t.meta["summaries"] == ["Fixing the parser"] and t.meta["side_entries"] == 1


def test_pi_synthetic_tree():
    t = load(DATA / "pi_tree.jsonl")
    assert t.format == "pi" and t.model == "claude-test-2"
    roles = [m.role for m in t.messages]
    assert roles == ["user", "assistant", "tool", "tool", "assistant", "user", "user", "user", "user", "user"]
    assert "delete them" not in "".join(m.text() for m in t.messages)  # abandoned branch
    assert t.messages[0].parts[1].kind == "image" and t.messages[0].parts[1].height == 2
    th = t.messages[1].parts[0]
    assert (th.kind, th.text, th.signature) == ("thinking", "use ls", "RXE0S2lnbmF0dXJlQmxvYg==")
    assert t.messages[1].tool_calls()[0].arguments == '{"command": "ls"}'
    assert t.messages[3].meta["extra"] == {"details": {"lines": 1}}
    assert "branch_summary" in t.messages[5].meta
    assert t.messages[6].text() == "Ran `git status`\n```\nclean\n```"
    assert t.messages[7].meta["custom_type"] == "note"
    assert t.messages[8].meta["compaction"]["tokensBefore"] == 999
    assert t.meta["skipped"] == {"thinking_level_change": 1, "excluded_bash": 1, "model_change": 1, "label": 1}
    assert t.meta["session"]["version"] == 3


def test_aider_synthetic():
    t = load(DATA / "aider_small.md")
    assert t.format == "aider" and t.model == "claude-3-5-sonnet-20240620"
    got = [(m.role, bool(m.meta.get("aider_output")), m.text()) for m in t.messages]
    assert got == [
        ("user", True, "/usr/bin/aider --lint\nAider v0.47.2-dev\nModels: claude-3-5-sonnet-20240620 with diff edit "
                       "format, weak model claude-3-haiku-20240307"),
        ("user", False, "Use the Spinner\nin utils.py"),
        ("assistant", False, "Certainly! Here is the change:\n\naider/utils.py\n```python\n"
                             "# a comment, not a session marker\n```"),
        ("user", True, "Applied edit to aider/utils.py\nCommit d0ffbf1 fix: use Spinner"),
        ("user", False, "/run pytest"),
        ("user", True, "1 passed\n"),
        ("user", False, "thanks"),
        ("assistant", False, "You're welcome."),
    ]
    assert t.meta["sessions"] == [{"started": "2024-08-05 19:33:02", "first_id": 0},
                                  {"started": "2024-08-05 20:00:00", "first_id": 4}]
    assert t.messages[3].parts[0].meta == {"aider_output": True, "typed": False}
    assert [m.parts[0].meta["typed"] for m in t.messages if m.role == "user"] == [False, True, False, False, False,
                                                                                   True]  # "/run pytest": a command


# ---------------------------------------------------------------------------------------------- text and errors
def test_plain_text(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("just some notes\n#### not aider without the marker\n", encoding="utf-8")
    t = load(p)
    assert (t.format, t.messages, t.meta["text"]) == ("text", [], p.read_text(encoding="utf-8"))
    assert load_text("[INFO] a log line").format == "text"
    assert load_text('{"not": "a transcript"}').format == "text"  # no JSON extension: plain text
    assert load_text("# aider chat started at 2024-01-01 00:00:00\n#### hi\n").format == "aider"
    assert "text" in FORMATS and len(FORMATS) == 17


def test_json_content_wins_over_extension(tmp_path):
    p = tmp_path / "request.txt"
    p.write_text(json.dumps({"messages": [{"role": "user", "content": "x"}]}), encoding="utf-8")
    assert load(p).format == "openai"
    q = tmp_path / "session.log"
    q.write_text((DATA / "pi_tree.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    assert load(q).format == "pi"


@pytest.mark.parametrize("name,content,needle", [
    ("bad.json", '{"messages": [', "malformed JSON in bad.json at line 1"),
    ("bad.jsonl", '{"type": "message"}\n{"type": \n{"type": "message"}\n', "malformed JSON in bad.jsonl at line 2"),
    ("odd.json", '{"foo": 1}', "no supported transcript format (keys: foo)"),
    ("odd.jsonl", '{"foo": 1}\n{"bar": 2}\n', "no supported session format"),
    ("odd.traj", "not json", "holds no transcript"),
    ("role.json", '{"messages": [{"role": "wizard", "content": "x"}]}', "unknown role 'wizard'"),
    ("msg.json", '{"messages": [42]}', "message 0 is a int"),
    ("content.json", '{"messages": [{"role": "user", "content": 5}]}', "content is a int"),
    ("anth.json", '{"system": "s", "messages": [{"role": "tool", "content": "x"}]}', "must be 'user' or 'assistant'"),
])
def test_format_errors(tmp_path, name, content, needle):
    p = tmp_path / name
    p.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError) as e:
        load(p)
    assert needle in str(e.value)
    assert e.value.path == str(p)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FormatError, match="no such file"):
        load(tmp_path / "nope.json")
    with pytest.raises(FormatError, match="is a directory"):
        load(tmp_path)


def test_from_request_rejects_non_requests():
    with pytest.raises(FormatError, match="no 'messages' or 'input'"):
        from_request({"foo": 1})
    with pytest.raises(FormatError, match="JSON object or list"):
        from_request("messages")  # type: ignore[arg-type]


def test_non_utf8_bytes_are_replaced(tmp_path):
    p = tmp_path / "latin1.txt"
    p.write_bytes("caf\u00e9 ok".encode("latin-1"))
    t = load(p)
    assert t.format == "text" and t.meta["text"] == "caf\ufffd ok" and t.meta["decode_errors"] == 1


# ------------------------------------------------------------------------------------------ never a raw exception
_KEYS = ["role", "content", "type", "text", "messages", "system", "input", "instructions", "tools", "tool_calls",
         "tool_call_id", "tool_call_ids", "function", "name", "arguments", "id", "call_id", "output", "source", "data",
         "media_type", "url", "image_url", "tool_use_id", "thinking", "signature", "summary", "uuid", "parentUuid",
         "logicalParentUuid", "message", "parentId", "toolCallId", "history", "trajectory", "request", "input_schema"]
_VALS = ["user", "assistant", "system", "tool", "developer", "text", "image", "image_url", "tool_use", "tool_result",
         "thinking", "redacted_thinking", "message", "function_call", "function_call_output", "reasoning",
         "input_text", "toolResult", "toolCall", "bashExecution", "compaction", "session", "base64",
         "snapglyph snapshot: the images above show messages #1-#3 as pages.", "data:image/png;base64,AAAA"]


def _check(fn, *args, **kw):
    try:
        t = fn(*args, **kw)
    except FormatError:
        return
    for m in t.messages:
        assert isinstance(m.id, int) and m.role in ("system", "user", "assistant", "tool")
        for p in m.parts + [c for q in m.parts for c in q.content]:
            assert all(isinstance(getattr(p, f), str) for f in ("text", "name", "arguments", "call_id", "data"))
    assert all(isinstance(x["name"], str) and isinstance(x["parameters"], dict) for x in t.tools)


def test_random_json_gives_a_transcript_or_format_error():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.sampled_from(_VALS), st.text(max_size=4))
    js = st.recursive(scalar, lambda c: st.one_of(st.lists(c, max_size=4),
                                                  st.dictionaries(st.sampled_from(_KEYS), c, max_size=5)),
                      max_leaves=25)

    @hypothesis.settings(max_examples=300, deadline=None, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(js)
    def run(v):
        _check(from_request, v)
        _check(load_text, json.dumps(v), name="x.json")
        if isinstance(v, list):
            _check(load_text, "\n".join(json.dumps(x) for x in v), name="x.jsonl")

    run()


def test_any_str_loads():
    hypothesis = pytest.importorskip("hypothesis")

    @hypothesis.settings(max_examples=200, deadline=None, database=None)
    @hypothesis.given(hypothesis.strategies.text(alphabet=hypothesis.strategies.characters(codec=None), max_size=60))
    def run(s):
        _check(load_text, s)
        _check(load_text, "# aider chat started at x\n" + s)

    run()
    _check(load_text, "\ud800 lone surrogate\x00 NUL " + "e\u0301" * 50)


def test_stdin_text_that_opens_like_json():
    with pytest.raises(FormatError, match="malformed JSON in <stdin> at line 1"):
        load_text('{"messages": [')
    with pytest.raises(FormatError, match="malformed JSON in <stdin> at line 2"):
        load_text('{"role": "user", "content": "a"}\n{"role": \n{"role": "user", "content": "b"}')
    torn = load_text('{"role": "user", "content": "a"}\n{"role": ')  # the last line of a file being written
    assert [m.text() for m in torn.messages] == ["a"] and "line 2 of <stdin> is torn" in torn.notes[0]
    assert load_text("{curly} prose, not JSON").format == "text"
    assert load_text("[1/3] building").format == "text"
    jsonl = '{"role": "user", "content": "a"}\n{"role": "assistant", "content": "b"}\n'
    t = load_text(jsonl)
    assert (t.format, [m.text() for m in t.messages]) == ("openai", ["a", "b"])
