"""The reconstructor: head verbatim, pages, tail verbatim; cut points; second pass from source; limits."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from PIL import Image

from conftest import load_case
from snapglyph import BudgetError, Message, Part, SourceStore, StoreError, build_document, compact, profile, validate
from snapglyph.model.message_ids import format_ranges
from snapglyph.providers.dialects import normalize, to_request
from snapglyph.raster.render import render_document


def conversation(rounds: int = 60, width: int = 1500) -> list[Message]:
    """A synthetic coding session: system, task, then rounds of (parallel) tool calls and results."""
    msgs = [Message(0, "system", [Part("text", text="You are a careful coding agent.")]),
            Message(1, "user", [Part("text", text="Fix the failing test in parser.py without breaking the API.")])]
    for r in range(rounds):
        calls = [Part("tool_call", name="bash", arguments=json.dumps({"cmd": f"grep -n foo{r}_{k} src/"}),
                      call_id=f"call_{r}_{k}") for k in range(1 + r % 3)]
        msgs.append(Message(len(msgs), "assistant", [Part("text", text=f"Step {r}: searching.")] + calls))
        for k, c in enumerate(calls):
            out = "\n".join(f"src/mod{r}.py:{i}: def foo{r}_{k}_{i}(x): return x * {i}  # \u00e9\u00e8"
                            for i in range(width // 50))
            msgs.append(Message(len(msgs), "tool", [Part("tool_result", call_id=c.call_id, name="bash",
                                                         content=[Part("text", text=out)])]))
        if r % 10 == 9:
            msgs.append(Message(len(msgs), "user", [Part("text", text=f"Progress check {r}: keep going.")]))
    msgs.append(Message(len(msgs), "assistant", [Part("text", text="All tests pass now.")]))
    return msgs


def tool_pairs_ok(body: dict, dialect: str) -> None:
    assert validate(body, dialect) == []


@pytest.mark.parametrize("prof,dialect", [("claude", "anthropic"), ("claude", "openai"), ("openai", "openai"),
                                          ("openai", "anthropic"), ("claude", "responses")])
def test_head_pages_tail(prof, dialect):
    msgs = conversation()
    res = compact(msgs, profile=prof, dialect=dialect, budget=30_000)
    body = res.request
    tool_pairs_ok(body, dialect)
    assert validate(body, dialect, profile=prof) == []
    assert res.head_ids == [0, 1]
    assert res.pages, "a budget this small must force a middle"
    assert res.tail_ids == list(range(res.tail_ids[0], len(msgs)))
    assert res.middle_ids == list(range(2, res.tail_ids[0]))
    assert res.tokens_after <= 30_000 < res.tokens_before
    w, h = profile(prof).page_size
    for p in res.pages:
        assert p.width == w and p.height <= h and p.height % profile(prof).patch == 0
        img = Image.open(io.BytesIO(p.png))
        assert img.size == (p.width, p.height)
    # the tail is verbatim: it equals the normalized source messages
    norm, _ = normalize(msgs, dialect=dialect)
    tail_src = [m for m in norm if m.id >= res.tail_ids[0]]
    expected = to_request(tail_src, dialect=dialect, model="x", max_tokens=1)
    key = "input" if dialect == "responses" else "messages"
    assert body[key][-len(expected[key]):] == expected[key]


@pytest.mark.parametrize("budget", [26_000, 30_000, 34_000])
def test_tail_is_the_longest_that_fits(budget):
    """Every longer tail (every earlier cut point), priced exactly with its own pages, breaks the budget.

    Without the identifier ledger: with it, the plan takes a shorter tail where that makes room for the ledger's
    cap (tests/test_snapshot_notes.py)."""
    from snapglyph.compaction.estimate import TokenCosts as _Costs
    msgs = conversation()  # dense: at these budgets every page fits (auto pages of these grep hits would not)
    res = compact(msgs, profile="claude", dialect="anthropic", budget=budget, ledger=0, mode="dense")
    assert not res.dropped_ids
    first = res.tail_ids[0]
    norm, _ = normalize(msgs, dialect="anthropic")
    earlier = [m.id for m in norm if 1 < m.id < first and m.role in ("user", "assistant")]
    assert earlier, "the test needs a middle with a cut point in it"
    costs = _Costs(profile("claude"))
    prof = profile("claude")
    now_pages = sum(prof.image_tokens(p.width, p.height) for p in res.pages)
    now_tail = sum(costs.message(m) for m in norm if m.id >= first)
    for cut in earlier:
        pages = render_document(build_document([m for m in msgs if 1 < m.id < cut]), profile="claude", mode="dense")
        tail = sum(costs.message(m) for m in norm if m.id >= cut)
        longer_pages = sum(prof.image_tokens(p.width, p.height) for p in pages)
        assert res.tokens_after - now_pages - now_tail + longer_pages + tail > budget, cut


def test_passthrough_when_it_fits():
    msgs = conversation(rounds=3)
    res = compact(msgs, profile="claude", dialect="anthropic", budget=100_000)
    assert res.passthrough and not res.pages
    assert "passed through" in res.summary()


def test_budget_error_names_the_numbers():
    msgs = conversation()
    with pytest.raises(BudgetError, match=r"budget of 4100 tokens"):
        compact(msgs, profile="claude", dialect="anthropic", budget=4100)


def test_second_pass_rerenders_from_source(tmp_path, monkeypatch):
    msgs = conversation()
    res1 = compact(msgs, profile="claude", dialect="anthropic", budget=30_000)
    more = conversation(rounds=80)[len(msgs) - 1:]
    for i, m in enumerate(more):
        m.id = len(msgs) - 1 + i
    body = dict(res1.request)
    body["messages"] = body["messages"][:-1] + to_request(
        normalize(more, dialect="anthropic")[0], dialect="anthropic", model="x", max_tokens=1)["messages"]
    path = tmp_path / "store.jsonl"
    res1.store.save(path)
    with pytest.raises(StoreError, match="no source store"):
        compact(body, profile="claude", dialect="anthropic", budget=30_000)
    store = SourceStore(path)
    # no code path may decode an earlier page: decoding pixels and inflating are made to fail during the second
    # pass (reading an image's header, as the image check does, decodes no pixel)
    import zlib

    import PIL.ImageFile

    def refuse(*a, **k):
        raise AssertionError("an earlier PNG was decoded")
    with monkeypatch.context() as mp:
        mp.setattr(PIL.ImageFile.ImageFile, "load", refuse)
        mp.setattr(zlib, "decompress", refuse)
        mp.setattr(zlib, "decompressobj", refuse)
        res2 = compact(body, profile="claude", dialect="anthropic", budget=30_000, store=store)
    assert len(res2.middle_ids) > len(res1.middle_ids)
    assert validate(res2.request, "anthropic", profile="claude") == []
    # the pages equal a direct render of the source text, pixel for pixel
    direct = render_document(build_document([store.get(i) for i in res2.middle_ids]), profile="claude")
    shown = direct[len(direct) - len(res2.pages):]
    assert len(shown) == len(res2.pages)
    for a, b in zip(shown, res2.pages):
        np.testing.assert_array_equal(a.pixels, b.pixels)
        assert a.png == b.png


def test_covered_id_without_source_is_an_error():
    msgs = conversation()
    res = compact(msgs, profile="claude", dialect="anthropic", budget=30_000)
    store = SourceStore()
    store.put([res.store.get(i) for i in res.middle_ids[1:]])
    with pytest.raises(StoreError, match=f"#{res.middle_ids[0]}"):
        compact(res.request, profile="claude", dialect="anthropic", budget=30_000, store=store)


def test_snapshot_text_names_ranges():
    assert format_ranges([3, 4, 5, 9, 11, 12]) == "#3-#5, #9, #11-#12"
    res = compact(conversation(), profile="claude", dialect="anthropic", budget=30_000)
    snap = res.request["messages"][1]["content"]
    assert [b["type"] for b in snap[:-1]] == ["image"] * len(res.pages)
    assert snap[-1]["text"].startswith("snapglyph snapshot: the images above show messages #2-#")


def test_anthropic_parallel_cut_case():
    case = load_case("anthropic_parallel_cut.json")
    req = case["request"]
    for budget in (8_000, 12_000, 20_000, 40_000):
        try:
            res = compact(req, profile="claude", dialect="anthropic", budget=budget, max_tokens=1024)
        except BudgetError:
            continue
        assert validate(res.request, "anthropic", profile="claude") == []
        msgs = res.request["messages"]
        # no tool_result in the tail without its tool_use right before it
        for i, m in enumerate(msgs):
            if isinstance(m["content"], list) and any(b.get("type") == "tool_result" for b in m["content"]):
                prev = msgs[i - 1]["content"]
                assert any(b.get("type") == "tool_use" for b in prev)


def test_page_png_is_exact():
    res = compact(conversation(), profile="claude", dialect="anthropic", budget=30_000)
    for p in res.pages:
        data = base64.b64decode(base64.b64encode(p.png))
        arr = np.asarray(Image.open(io.BytesIO(data)).convert("L"))
        np.testing.assert_array_equal(arr, p.pixels)


@pytest.mark.parametrize("dialect", ["anthropic", "openai", "responses"])
def test_ids_are_stable_across_passes(dialect):
    """Anthropic merges one round's results into one message; the second pass still gives every id back."""
    msgs = conversation()
    res1 = compact(msgs, profile="claude", dialect=dialect, budget=30_000)
    res2 = compact(res1.request, profile="claude", dialect=dialect, budget=25_000, store=res1.store)
    assert res2.head_ids + res2.middle_ids + res2.tail_ids == list(range(len(msgs)))
    # the expanded input is the original source again, message for message
    assert res2.tokens_before == res1.tokens_before


def test_pages_are_cache_stable():
    """H then H plus more: every page but the last of the earlier middle is byte-identical."""
    full = conversation(rounds=70)
    k = next(i for i in range(len(full) // 2, len(full)) if full[i].role == "assistant")
    first = compact(full[:k], profile="claude", dialect="anthropic", budget=40_000)
    second = compact(full, profile="claude", dialect="anthropic", budget=60_000)
    assert len(second.middle_ids) > len(first.middle_ids)
    assert not first.dropped_ids and not second.dropped_ids
    assert len(first.pages) >= 3
    for a, b in zip(first.pages[:-1], second.pages):
        assert a.png == b.png
    assert first.pages[-1].png != second.pages[len(first.pages) - 1].png
    # the prompt-cache breakpoint sits on the last page that stays stable
    blocks = second.request["messages"][1]["content"]
    marked = [i for i, b in enumerate(blocks) if "cache_control" in b]
    assert marked == [len(second.pages) - 2]


def test_openai_pages_carry_the_profile_detail():
    res = compact(conversation(), profile="openai", dialect="openai", budget=30_000)
    urls = [p["image_url"] for m in res.request["messages"] if isinstance(m["content"], list)
            for p in m["content"] if p["type"] == "image_url"]
    assert urls and all(u["detail"] == "high" and u["url"].startswith("data:image/png;base64,") for u in urls)


def test_snapshot_parts_for_other_compactors():
    from snapglyph import snapshot_parts
    from snapglyph.compaction.guide import reading_guide
    msgs = conversation(rounds=10)[2:20]
    sp = snapshot_parts(msgs, profile="claude", dialect="anthropic")
    assert sp.ids == [m.id for m in msgs]
    assert [p["type"] for p in sp.parts] == ["image"] * len(sp.pages) + ["text"]
    ranges, guide, ledger = sp.parts[-1]["text"].split("\n\n")
    assert ranges == f"snapglyph snapshot: the images above show messages #2-#{msgs[-1].id} as pages."
    assert guide == reading_guide() and ledger.startswith("Exact identifiers in the messages shown as pages")
    assert sp.image_tokens == sum(profile("claude").image_tokens(p.width, p.height) for p in sp.pages)
    sp2 = snapshot_parts(msgs, profile="openai", dialect="openai")
    assert sp2.parts[0]["type"] == "image_url"


def test_many_image_rule_downscales_a_big_tail_image_rather_than_cap_pages():
    """Anthropic: over 20 images, every image must be at most 2000 px a side; a 2400 px tail screenshot is
    downscaled to 2000 px (from its own bytes), so the pages are not capped to keep the request at 20 images."""
    import numpy as np
    buf = io.BytesIO()
    Image.fromarray(np.zeros((2400, 100), np.uint8)).save(buf, "PNG")
    shot = Part("image", media_type="image/png", data=base64.b64encode(buf.getvalue()).decode(), width=100,
                height=2400)
    msgs = conversation(rounds=150, width=3000)
    msgs.append(Message(len(msgs), "user", [Part("text", text="look at this"), shot]))
    res = compact(msgs, profile="claude", dialect="anthropic", budget=150_000)
    assert len(res.pages) + 1 > 20
    sent = res.request["messages"][-1]["content"][-1]["source"]
    assert Image.open(io.BytesIO(base64.b64decode(sent["data"]))).size == (83, 2000)
    assert res.rewrites["images downscaled to a provider limit"] == 1
    assert validate(res.request, "anthropic", profile="claude") == []


def test_many_image_rule_caps_pages_beside_a_big_url_image():
    """An image given by URL cannot be downscaled: the pages are capped to keep the request at 20 images."""
    shot = Part("image", url="https://example.com/shot.png", width=100, height=2400)
    msgs = conversation(rounds=150, width=3000)
    msgs.append(Message(len(msgs), "user", [Part("text", text="look at this"), shot]))
    res = compact(msgs, profile="claude", dialect="anthropic", budget=150_000)
    assert len(res.pages) + 1 == 20
    assert res.dropped_ids
    assert validate(res.request, "anthropic", profile="claude") == []


def test_a_store_belongs_to_one_conversation():
    msgs = conversation()
    res = compact(msgs, profile="claude", dialect="anthropic", budget=30_000)
    other = conversation()
    other[1] = Message(1, "user", [Part("text", text="A different task entirely.")])
    with pytest.raises(StoreError, match="belongs to another conversation"):
        compact(other, profile="claude", dialect="anthropic", budget=30_000, store=res.store)
    # the same conversation, read back from its request, is accepted (the key ignores normalization)
    compact(res.request, profile="claude", dialect="anthropic", budget=30_000, store=res.store)


def test_snapshot_text_when_pages_are_dropped():
    from snapglyph.readers.registry import parse_snapshot_text
    msgs = conversation(rounds=120)
    res = compact(msgs, profile="claude", dialect="anthropic", budget=20_000, recall_tool=True)
    assert res.dropped_ids and res.pages
    text = res.request["messages"][1]["content"][-1]["text"]
    first = res.pages[0].first_id
    assert text.startswith(f"snapglyph snapshot: the images above show messages #{first}-#")
    assert "Not shown, or only in part (recall_messages returns their exact text by id): #2-#" in text
    parsed = parse_snapshot_text(text)
    assert parsed["covered"] == [[2, res.middle_ids[-1]]]
    assert parsed["dropped"] == [[2, res.dropped_ids[-1]]]
    assert "recall_messages" in {t["name"] for t in res.request["tools"]}
    # every id of the conversation is recallable, head and tail included
    from snapglyph import recall
    assert set(recall(res.store, [0, 1, first, len(msgs) - 1])) == {0, 1, first, len(msgs) - 1}


def test_no_user_message_is_an_input_error():
    from snapglyph import InputError
    with pytest.raises(InputError, match="no user message"):
        compact([Message(0, "system", [Part("text", text="s")])], profile="claude", dialect="anthropic")
    with pytest.raises(InputError, match="not int"):
        compact(42, profile="claude")


@pytest.mark.parametrize("dialect", ["anthropic", "openai", "responses"])
def test_an_oversized_newest_output_is_shown_as_pages(dialect):
    """The newest round alone breaks the budget (a huge tool output just came back): its output is shown as pages,
    a pointer stands in the tail, and a second pass puts the exact source back and renders it again."""
    from snapglyph import recall
    from snapglyph.compaction.tail_paging import pointer_text
    msgs = conversation(rounds=20)[:-1]
    huge = "\n".join(f"./src/pkg{i % 97}/module_{i}.py  {i * 7919 % 100003:06d}" for i in range(9000))
    call = Part("tool_call", name="bash", arguments='{"cmd": "find ."}', call_id="big")
    msgs.append(Message(len(msgs), "assistant", [Part("text", text="Listing everything."), call]))
    msgs.append(Message(len(msgs), "tool", [Part("tool_result", call_id="big", name="bash",
                                                 content=[Part("text", text=huge)])]))
    last = len(msgs) - 1
    res = compact(msgs, profile="claude", dialect=dialect, budget=25_000, allow_empty_middle=True)
    assert res.paged == [(last, "tool result", 1)]
    assert "note: every page of the middle was dropped" in res.summary()  # the middle gave way to the newest
    assert validate(res.request, dialect, profile="claude") == []
    assert res.tokens_after <= 25_000 and res.tail_ids[-1] == last
    body = json.dumps(res.request)
    assert json.dumps(pointer_text("tool result", 1, last, len(huge)))[1:-1] in body
    assert recall(res.store, [last])[last] == huge
    again = compact(res.request, profile="claude", dialect=dialect, budget=25_000, store=res.store,
                    allow_empty_middle=True)
    assert again.request == res.request


def test_no_cut_point_but_an_oversized_output():
    msgs = [Message(0, "system", [Part("text", text="s")]), Message(1, "user", [Part("text", text="go")]),
            Message(2, "assistant", [Part("tool_call", name="cat", arguments="{}", call_id="c")]),
            Message(3, "tool", [Part("tool_result", call_id="c", name="cat",
                                     content=[Part("text", text="line of a log file 0123456789\n" * 4000)])])]
    res = compact(msgs, profile="claude", dialect="anthropic", budget=12_000)
    assert res.paged == [(3, "tool result", 1)] and not res.middle_ids
    snap = res.request["messages"][1]["content"]
    assert snap[-1]["text"].startswith(f"snapglyph snapshot: the {len(res.pages)} pages show outputs of the newest "
                                       f"messages: #3 (tool result 1, its last {len(res.pages)} of ")
    assert validate(res.request, "anthropic", profile="claude") == []
    again = compact(res.request, profile="claude", dialect="anthropic", budget=12_000, store=res.store)
    assert again.request == res.request


def test_a_new_system_prompt_keeps_the_store():
    """Agents rebuild the system prompt on every call; the store is keyed on the first user turn."""
    msgs = conversation()
    res = compact(msgs, profile="claude", dialect="anthropic", budget=30_000)
    body = json.loads(json.dumps(res.request))
    body["system"] += "\nToday is 2026-12-01."
    body["messages"].append({"role": "user", "content": "continue"})
    again = compact(body, profile="claude", dialect="anthropic", budget=30_000, store=res.store)
    assert again.tail_ids[-1] == len(msgs)


def test_request_model_follows_the_profile():
    from snapglyph import profile_for_model
    from snapglyph.providers.request_model import REQUEST_MODELS
    for name, model in REQUEST_MODELS.items():
        assert profile_for_model(model).name in (name, "openai" if name == "openai-original" else name)
    msgs = conversation(rounds=3)
    body = to_request(normalize(msgs, dialect="anthropic")[0], dialect="anthropic", model="claude-opus-4-6",
                      max_tokens=10)
    res = compact(body, profile="claude-hires", dialect="anthropic", budget=10**6)
    assert res.request["model"] == "claude-opus-4-7"
    assert any("claude-opus-4-6 reads images by profile claude" in n for n in res.notes)
    assert compact(body, profile="claude", dialect="anthropic", budget=10**6).request["model"] == "claude-opus-4-6"
    res = compact(body, profile="openai", dialect="openai", budget=10**6, model="claude-sonnet-4-5")
    assert res.request["model"] == "claude-sonnet-4-5" and "reads images by profile claude" in res.summary()


def test_many_messages_compact_in_linear_time():
    """40,000 short messages compact into a valid request (about 3 s; 40 s when the per-cut work was quadratic)."""
    msgs = [Message(0, "user", [Part("text", text="task")])] + [
        Message(i + 1, "assistant" if i % 2 == 0 else "user", [Part("text", text=f"m{i}")]) for i in range(40_000)]
    res = compact(msgs, profile="claude", dialect="anthropic", budget=50_000)
    assert res.tail_ids[-1] == 40_000 and validate(res.request, "anthropic", profile="claude") == []


def test_an_edited_tail_message_keeps_its_id():
    msgs = conversation()
    res = compact(msgs, profile="claude", dialect="openai", budget=30_000, ledger=0, mode="dense")  # tool results in the tail
    body = json.loads(json.dumps(res.request))
    # edit the text of a tool result in the tail (as an agent clearing old output would), then append a message
    tool_i = next(i for i, m in enumerate(body["messages"]) if m["role"] == "tool")
    body["messages"][tool_i]["content"] = "[output cleared]"
    body["messages"].append({"role": "user", "content": "next"})
    again = compact(body, profile="claude", dialect="openai", budget=30_000, store=res.store, mode="dense")
    ids = again.head_ids + again.middle_ids + again.tail_ids
    assert ids == list(range(len(msgs) + 1))


@pytest.mark.parametrize("budget", [6_000, 20_000, 45_000, 90_000])
def test_plans_from_layout_alone_equal_plans_from_encoded_pages(budget):
    """The planner's bounds read the page starts of the largest middle by layout alone (no page encoded), and the
    middles drawn after it take that layout's pages (the compactor's renders); every plan (cut, middle, fits,
    pages' bytes) is the one planned from fully encoded pages' own first ids."""
    import functools

    from snapglyph.compaction.compactor import _Middles
    from snapglyph.compaction.conversation import prepare
    from snapglyph.compaction.plan import plan_cut
    from snapglyph.raster.lazy import render_packed
    prof = profile("claude")
    settings = {"profile": prof, "cell": None, "mode": "auto", "family": None}
    middles = _Middles(dict(settings, encoded={}, segments={}))
    plans = []
    for starts, draw in ((middles.starts, middles.draw), (None, functools.partial(render_packed, **settings))):
        conv = prepare(conversation(rounds=40, width=2500), prof=prof, dialect="anthropic", store=None, model=None,
                       max_tokens=500, tools=None, recall_tool=False, draw=draw, starts=starts)
        p = plan_cut(conv, budget)
        plans.append((p.head_end, p.cut, p.middle_ids, p.fits, [pg.png for pg in p.pages]))
    assert plans[0] == plans[1]
    assert len(plans[0][4]) > 0


def test_steps_return_their_results_and_leave_their_inputs_alone():
    """The steps of compact() take values and return values: assembling a request whose image count brings in
    the many-image rule returns the downscale among its own rewrites and a new fit with the tail as sent (its
    cost recounted); the conversation's rewrites and the fit given are unchanged, and the steps' values are
    frozen."""
    import dataclasses

    from snapglyph.compaction import conversation as conversation_step, dropping, plan as plan_step
    from snapglyph.compaction.notes import snapshot_notes
    from snapglyph.compaction.assemble import assemble
    from snapglyph.raster.render import render
    buf = io.BytesIO()
    Image.fromarray(np.zeros((2400, 100), np.uint8)).save(buf, "PNG")
    shot = Part("image", media_type="image/png", data=base64.b64encode(buf.getvalue()).decode(), width=100,
                height=2400)
    tiny = io.BytesIO()
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(tiny, "PNG")
    dot = Part("image", media_type="image/png", data=base64.b64encode(tiny.getvalue()).decode(), width=8, height=8)
    msgs = conversation(rounds=20)
    msgs.append(Message(len(msgs), "user", [Part("text", text="look at these"), shot] + [dot] * 20))
    conv = conversation_step.prepare(msgs, prof=profile("claude"), dialect="anthropic", store=None, model=None,
                                     max_tokens=500, tools=None, recall_tool=False, draw=render)
    read = dict(conv.rewrites)
    cut = plan_step.plan_cut(conv, 12_000)
    notes = snapshot_notes(cut.middle, user_cap=10**6, ledger_share=0.1, recall_tool=None, count=conv.costs.text)
    fit = dropping.fit_budget(conv, cut, 12_000, notes)
    assert notes.user_cap == 10**6 and fit.notes.user_cap < notes.user_cap  # fitted: new notes, these unchanged
    tail_cost, kept = fit.tail_cost, list(fit.kept)
    out = assemble(conv, cut, fit, recall_tool=False)
    assert kept and out.rewrites == {"images downscaled to a provider limit": 1}
    assert dict(conv.rewrites) == read and "images downscaled to a provider limit" not in read
    assert (fit.tail_cost, fit.kept, fit.tail[-1].parts[1].height) == (tail_cost, kept, 2400)
    sent = out.messages[-1]
    assert out.fit.tail[-1] is sent and sent.parts[1].height == 2000 and out.fit.base == fit.base
    assert out.fit.tail_cost == tail_cost + conv.costs.message(sent) - conv.costs.message(fit.tail[-1])
    for value, name in ((conv, "notes"), (cut, "cut"), (fit, "kept"), (out, "fit"), (fit.notes, "user_cap")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, None)
