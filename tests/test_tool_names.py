"""Tool names a provider refuses are renamed, alike in calls, results, definitions and the tool choice (issue 12)."""

from __future__ import annotations

import pytest
from sdk_oracle import sdk_errors

from snapglyph import Message, Part, SourceStore, compact, validate
from snapglyph.providers.tool_names import safe_tool_names, tool_name_ok

LONG = "x" * 70
RENAMED = {"fs.read": "fs_read_3b59", "multi_tool_use.parallel": "multi_tool_use_parallel_ee14",
           LONG: "x" * 59 + "_bbaa"}


def _convo(rounds: int = 1, width: int = 10) -> list[Message]:
    msgs = [Message(0, "user", [Part("text", text="go")])]
    for r in range(rounds):
        n = len(msgs)
        msgs += [Message(n, "assistant", [
                    Part("tool_call", name="multi_tool_use.parallel", arguments="{}", call_id=f"a{r}"),
                    Part("tool_call", name="fs.read", arguments='{"path": "a"}', call_id=f"b{r}"),
                    Part("tool_call", name=LONG, arguments="{}", call_id=f"c{r}"),
                    Part("tool_call", name="ok_tool", arguments="{}", call_id=f"d{r}")]),
                 Message(n + 1, "tool", [
                    Part("tool_result", call_id=f"a{r}", name="multi_tool_use.parallel",
                         content=[Part("text", text=f"r{r} " + "a" * width)]),
                    Part("tool_result", call_id=f"b{r}", name="fs.read", content=[Part("text", text="b" * width)]),
                    Part("tool_result", call_id=f"c{r}", content=[Part("text", text="c")]),
                    Part("tool_result", call_id=f"d{r}", content=[Part("text", text="d")])])]
    return msgs + [Message(len(msgs), "assistant", [Part("text", text="done")])]


TOOLS = [{"name": "fs.read", "description": "Read a file.", "parameters": {"type": "object"}},
         {"name": "ok_tool", "description": "Fine as it is.", "parameters": {"type": "object"}}]


def _names(req: dict, dialect: str) -> tuple[list[str], list[str]]:
    """(tool definition names, tool call names) of a request."""
    if dialect == "anthropic":
        defs = [t["name"] for t in req["tools"]]
        calls = [b["name"] for m in req["messages"] if isinstance(m["content"], list) for b in m["content"]
                 if b["type"] == "tool_use"]
    elif dialect == "openai":
        defs = [t["function"]["name"] for t in req["tools"]]
        calls = [c["function"]["name"] for m in req["messages"] for c in m.get("tool_calls") or []]
    elif dialect == "responses":
        defs = [t["name"] for t in req["tools"]]
        calls = [it["name"] for it in req["input"] if it.get("type") == "function_call"]
    else:
        defs = [d["name"] for t in req["tools"] for d in t["functionDeclarations"]]
        calls = [p["functionCall"]["name"] for c in req["contents"] for p in c["parts"] if "functionCall" in p]
        assert [p["functionResponse"]["name"] for c in req["contents"] for p in c["parts"]
                if "functionResponse" in p] == calls
    return defs, calls


@pytest.mark.parametrize("dialect", ["anthropic", "openai", "responses", "gemini"])
def test_refused_names_are_renamed_alike_everywhere(dialect):
    prof = "gemini" if dialect == "gemini" else "claude"
    res = compact(_convo(), profile=prof, dialect=dialect, budget=100_000, tools=TOOLS)
    assert res.renamed_tools == RENAMED
    assert res.rewrites["tool names the dialect refuses renamed"] == 3
    defs, calls = _names(res.request, dialect)
    assert calls == [RENAMED["multi_tool_use.parallel"], RENAMED["fs.read"], RENAMED[LONG], "ok_tool"]
    assert defs == [RENAMED["fs.read"], "ok_tool", RENAMED["multi_tool_use.parallel"], RENAMED[LONG]]
    assert validate(res.request, dialect, profile=prof) == [] and sdk_errors(res.request, dialect) == ""
    assert (f"note: tool names the {dialect} dialect refuses were renamed in calls, results and definitions "
            "alike: 'fs.read' -> 'fs_read_3b59', 'multi_tool_use.parallel' -> 'multi_tool_use_parallel_ee14', "
            ) in res.summary()


def test_validate_flags_refused_names_in_calls_and_definitions():
    res = compact(_convo(), profile="claude", dialect="openai", budget=100_000, tools=TOOLS)
    req = res.request
    req["messages"][1]["tool_calls"][0]["function"]["name"] = "multi_tool_use.parallel"
    req["tools"][0]["function"]["name"] = "fs.read"
    assert [str(f) for f in validate(req, "openai")] == [
        "tools.0.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$' ('fs.read')",
        "messages[1]: tool_calls.0.function.name: 'multi_tool_use.parallel' does not match ^[a-zA-Z0-9_-]{1,64}$"]
    gem = compact(_convo(), profile="gemini", dialect="gemini", budget=100_000, tools=TOOLS).request
    gem["contents"][1]["parts"][0]["functionCall"]["name"] = "7zip"
    gem["contents"][2]["parts"][0]["functionResponse"]["name"] = "7zip"
    assert [str(f) for f in validate(gem, "gemini")] == [
        "messages[1]: parts[0].functionCall.name: '7zip' does not match ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$"]


def test_tool_choice_of_a_source_request_follows_the_new_name():
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "tool_choice": {"type": "tool", "name": "fs.read"},
            "tools": [{"name": "fs.read", "description": "Read.", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": "read a"}]}
    assert validate(body, "anthropic") != []
    res = compact(body, profile="claude", dialect="anthropic", budget=100_000)
    assert res.request["tool_choice"] == {"type": "tool", "name": "fs_read_3b59"}
    assert [t["name"] for t in res.request["tools"]] == ["fs_read_3b59"]
    assert validate(res.request, "anthropic") == [] and sdk_errors(res.request, "anthropic") == ""


def test_a_second_pass_keeps_the_same_names(tmp_path):
    msgs = _convo(rounds=30, width=3000)
    res = compact(msgs, profile="claude", dialect="anthropic", budget=20_000, tools=TOOLS)
    assert not res.passthrough and res.renamed_tools == RENAMED
    path = tmp_path / "s.jsonl"
    res.store.save(path)
    res2 = compact(res.request, profile="claude", dialect="anthropic", budget=15_000, store=SourceStore(path))
    defs, calls = _names(res2.request, "anthropic")
    assert set(calls) <= set(RENAMED.values()) | {"ok_tool"} and calls
    assert sorted(defs) == sorted([*RENAMED.values(), "ok_tool"])
    assert validate(res2.request, "anthropic", profile="claude") == []


def test_new_names_keep_the_rule_and_never_take_a_name_in_use():
    taken = "fs_read_3b59"
    mapping = safe_tool_names(["fs.read", taken, "", "9lives"], "gemini")
    assert mapping == {"": "tool_da39", "9lives": "_9lives_3f97", "fs.read": "fs_read_3b59cd"}
    assert all(tool_name_ok(v, d) for v in mapping.values() for d in ("gemini", "anthropic", "openai"))
