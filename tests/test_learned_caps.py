"""Windows and caps learned per upstream and model (issue 35, item 3), through the simulator and ``serve`` in every
dialect: a gateway's body byte cap (HTTP 413) and a region's smaller window are recovered on the first retry, kept in
the state folder (read again by a restarted ``serve``), listed on ``/snapglyph/status``, and a second, new
conversation to the same model is compacted before it is sent: the simulator sees no refusal for it."""

from __future__ import annotations

import json

import httpx
import pytest

from snapglyph.compaction.windows import Learned, WindowBook, learned_budget
from snapglyph.compaction.error_read import BodyCap, body_cap, read_error
from snapglyph.testing import Simulator, answer
from snapglyph.testing.provider_errors import payload_too_large_body

DIALECTS = ["anthropic", "openai", "responses", "gemini"]
MODELS = {"openai": "gpt-4.1", "responses": "gpt-4.1", "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-pro"}
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages", "responses": "/v1/responses",
         "gemini": "/v1beta/models/gemini-2.5-pro:generateContent"}
HEADERS = {"authorization": "Bearer x", "x-api-key": "x", "anthropic-version": "2023-06-01"}
REGION_WINDOW = 6_000          # the model as one region serves it (google-gemini/gemini-cli#11916: 65,536)
DOCUMENTED = 200_000           # the window the simulator serves every other model at
BODY_CAP = 40_000              # bytes (can1357/oh-my-pi#9235's gateway, scaled down)


def _text(tag: str, i: int) -> str:
    return f"{tag} turn {i}\n" + "".join(f"{tag} step {i} line {j}: test_mod_{j % 9}.py::case_{j} status=ok "
                                         f"elapsed={j * 7 % 1000}ms\n" for j in range(40))


def _body(dialect: str, tag: str, turns: int) -> dict:
    """A conversation of ``turns`` turns in ``dialect``, every message naming ``tag`` (another tag: another
    conversation)."""
    roles = ["user" if i % 2 == 0 else "assistant" for i in range(turns)]
    if dialect == "gemini":
        return {"generationConfig": {"maxOutputTokens": 512}, "contents": [
            {"role": "model" if r == "assistant" else "user", "parts": [{"text": _text(tag, i)}]}
            for i, r in enumerate(roles)]}
    if dialect == "responses":
        return {"model": MODELS[dialect], "max_output_tokens": 512, "input": [
            {"type": "message", "role": r, "content": [
                {"type": "input_text" if r == "user" else "output_text", "text": _text(tag, i)}]}
            for i, r in enumerate(roles)]}
    return {"model": MODELS[dialect], "max_tokens": 512,
            "messages": [{"role": r, "content": _text(tag, i)} for i, r in enumerate(roles)]}


def _over(dialect: str, tag: str, window: int) -> dict:
    """The first odd number of turns whose request the simulator counts over ``window`` tokens."""
    sim = Simulator(context_window=DOCUMENTED)
    turns = 1
    while sim.count_request(dialect, _body(dialect, tag, turns)).text <= window:
        turns += 2
    return _body(dialect, tag, turns)


def _proxy(sim: Simulator, state):
    pytest.importorskip("uvicorn", reason="snapglyph serve needs the `serve` extra")
    from snapglyph.serve.app import ServeConfig
    from snapglyph.serve.run import Background
    return Background(ServeConfig(sim.base_url, state=state)).start()


def _learned(status: dict) -> list[dict]:
    return [{k: v for k, v in e.items() if v is not None and k not in ("accepted", "refused", "ratio")}
            for e in status["windows"]]


# -- the rules -------------------------------------------------------------------------------------------------------
def test_body_caps_are_read_with_the_size_they_name():
    _, named = payload_too_large_body(40_000)
    _, bare = payload_too_large_body(40_000, named=False)
    assert body_cap(413, json.dumps(named), 61_234) == BodyCap(40_000, 61_234)
    assert body_cap(413, json.dumps(bare), 61_234) == BodyCap(None, 61_234)
    assert body_cap(413, "413 Payload Too Large: Decompressed request body exceeds 268435456 bytes", 3 * 2**28) \
        == BodyCap(268_435_456, 3 * 2**28)
    assert body_cap(400, '{"error": {"message": "request body exceeds the maximum size of 600 KB"}}', 812_000) \
        == BodyCap(600_000, 812_000)
    assert body_cap(429, '{"error": {"message": "rate limit reached"}}', 10) is None
    r = read_error(413, json.dumps(named), {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, "openai",
                   None, margin=0.08, sent_bytes=61_234)
    assert r.overflow is None and r.body == BodyCap(40_000, 61_234)
    assert r.note == "body byte cap: 61234 bytes refused, 40000 allowed"


def test_the_book_keeps_caps_and_the_learned_budget_uses_them(tmp_path):
    book = WindowBook(tmp_path)
    book.capped("http://up", "m", images=50)
    book.capped("http://up", "m", images=80, body_bytes=600_000)       # a larger cap proves less
    book.capped("http://up", "n", refused_bytes=90_000)
    assert WindowBook(tmp_path).get("http://up", "m") == Learned(images=50, body_bytes=600_000)
    assert WindowBook(tmp_path).get("http://up", "n").byte_aim == 30_000   # a third of a refusal naming no size
    assert WindowBook(tmp_path).limits_known() and not WindowBook(tmp_path / "none").limits_known()
    body = {"model": "m", "max_tokens": 500, "messages": [{"role": "user", "content": "word " * 4000}]}
    assert learned_budget(Learned(window=3_000), body, "openai").tokens == 2760
    assert learned_budget(Learned(window=3_000, ratio=2.0), body, "openai").ratio == 2.0
    assert learned_budget(Learned(window=4_505), body, "openai").window == 4_505     # 4,505 > 92% of the window
    assert learned_budget(Learned(window=5_000), body, "openai") is None
    assert learned_budget(Learned(body_bytes=30_000), body, "openai", nbytes=20_000) is None


def test_the_simulator_caps_bodies_and_serves_a_region_window():
    sim = Simulator(provider="native", context_window=DOCUMENTED)
    sim.max_body_bytes, sim.model_windows = 100, {"gemini-2.5-pro": 50}
    status, err = sim.handle("openai", {"model": "m", "messages": [{"role": "user", "content": "x" * 200}]})
    assert (status, err["error"]["param"], sim.log[-1]["kind"]) == (413, "request_too_large", "body_cap")
    sim.max_body_bytes = None
    status, err = sim.handle("gemini", {"contents": [{"role": "user", "parts": [{"text": "word " * 60}]}]},
                             model="gemini-2.5-pro")
    assert status == 400 and err["error"]["message"].endswith("exceeds the maximum number of tokens allowed (50).")
    status, _ = sim.handle("gemini", {"contents": [{"role": "user", "parts": [{"text": "word " * 60}]}]},
                           model="gemini-2.5-flash")
    assert status == 200


# -- serve -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dialect", DIALECTS)
def test_serve_learns_a_region_window_and_compacts_the_next_conversation_first(dialect, tmp_path):
    first, second = _over(dialect, "alpha", REGION_WINDOW), _over(dialect, "beta", REGION_WINDOW)
    with Simulator([answer("one"), answer("two")], provider="native", context_window=DOCUMENTED) as sim:
        sim.model_windows = {MODELS[dialect]: REGION_WINDOW}
        with _proxy(sim, tmp_path / "state") as bg:
            r1 = httpx.post(bg.url + PATHS[dialect], json=first, headers=HEADERS, timeout=120)
        with _proxy(sim, tmp_path / "state") as bg:                # a restart: the book is read from the folder
            r2 = httpx.post(bg.url + PATHS[dialect], json=second, headers=HEADERS, timeout=120)
            status = httpx.get(bg.url + "/snapglyph/status").json()
        kinds = [e["kind"] for e in sim.log]
        sizes = [e.get("prompt_tokens") for e in sim.log]
        base = sim.base_url
    assert r1.status_code == r2.status_code == 200, (r1.text, r2.text)
    assert kinds == ["overflow", "ok", "ok"]                          # the second conversation: no refusal
    assert sizes[2] <= REGION_WINDOW < sim.count_request(dialect, second).text
    named = None if dialect == "responses" else REGION_WINDOW          # Responses' body names no number
    (entry,) = status["windows"]
    assert (entry["upstream"], entry["model"], entry["window"]) == (base, MODELS[dialect], named)
    assert sorted(c["compactions"] for c in status["conversations"]) == [1, 1]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_serve_learns_a_body_cap_and_fits_the_next_conversation_under_it(dialect, tmp_path):
    first, second = _body(dialect, "alpha", 15), _body(dialect, "beta", 15)
    assert len(json.dumps(first)) > BODY_CAP
    with Simulator([answer("one"), answer("two")], provider="native", context_window=DOCUMENTED) as sim:
        sim.max_body_bytes = BODY_CAP
        with _proxy(sim, tmp_path / "state") as bg:
            r1 = httpx.post(bg.url + PATHS[dialect], json=first, headers=HEADERS, timeout=120)
        with _proxy(sim, tmp_path / "state") as bg:
            r2 = httpx.post(bg.url + PATHS[dialect], json=second, headers=HEADERS, timeout=120)
            status = httpx.get(bg.url + "/snapglyph/status").json()
        kinds = [e["kind"] for e in sim.log]
        sent = [len(e["raw"]) for e in sim.log]
        base = sim.base_url
    assert r1.status_code == r2.status_code == 200, (r1.text, r2.text)
    assert kinds == ["body_cap", "ok", "ok"]                          # the second conversation: no 413
    assert sent[0] > BODY_CAP and max(sent[1:]) <= BODY_CAP * 0.9
    assert _learned(status) == [{"upstream": base, "model": MODELS[dialect], "body_bytes": BODY_CAP}]
    saved = json.loads((tmp_path / "state" / "windows.json").read_text())
    assert saved[f"{base} {MODELS[dialect]}"]["body_bytes"] == BODY_CAP


# -- an adapter ------------------------------------------------------------------------------------------------------
def test_langchain_compacts_a_new_thread_under_the_window_another_thread_taught(tmp_path):
    pytest.importorskip("langchain.agents", reason="langchain>=1 not installed (the `integrations` extra)")
    pytest.importorskip("langchain_openai", reason="langchain-openai not installed (the `integrations` extra)")
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    from snapglyph.integrations.langchain import SnapglyphMiddleware
    from snapglyph.testing import call
    files = {f"f{i}.txt": "".join(f"line {j} of file {i}: value={j * i}\n" for j in range(80)) for i in range(6)}

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return files[path]
    run = [call(("read_file", {"path": p})) for p in files] + [answer("final answer")]
    mw = SnapglyphMiddleware(tmp_path, budget=100_000, max_tokens=200)
    with Simulator(run + run, provider="openai", context_window=DOCUMENTED) as sim:
        sim.model_windows = {"gpt-4o": 4_000}                            # a region's smaller window
        model = ChatOpenAI(model="gpt-4o", base_url=sim.base_url + "/v1", api_key="x", max_retries=0,
                           max_tokens=200)
        agent = create_agent(model, tools=[read_file], system_prompt="Read files.", middleware=[mw])
        one = agent.invoke({"messages": [{"role": "user", "content": "Read all files."}]})
        first = [e["kind"] for e in sim.log]
        two = agent.invoke({"messages": [{"role": "user", "content": "Read every file, please."}]})
        second = [e["kind"] for e in sim.log][len(first):]
        sizes = [e.get("prompt_tokens") for e in sim.log][len(first):]
    assert one["messages"][-1].content == two["messages"][-1].content == "final answer"
    assert first == ["ok"] * 5 + ["overflow"] + ["ok"] * 2               # the 6th call overflowed, then recovered
    assert second == ["ok"] * 7 and max(sizes) <= 4_000                  # the new thread: compacted before it went
    learned = WindowBook(tmp_path).get("", "openai")        # the middleware's body names no model: its profile
    assert (learned.window, learned.refused) == (4_000, 4_163)           # the numbers the overflow body named
    assert len(mw.conversations.held()) == 2


def _png_part(dialect: str) -> dict:
    """A valid 8x8 grey PNG as ``dialect``'s image part."""
    import base64
    import io

    from PIL import Image
    buf = io.BytesIO()
    Image.new("L", (8, 8), 128).save(buf, format="PNG")
    b64 = base64.b64encode(buf.getvalue()).decode()
    return {"anthropic": {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}},
            "openai": {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}},
            "responses": {"type": "input_image", "image_url": f"data:image/png;base64,{b64}"},
            "gemini": {"inlineData": {"mimeType": "image/png", "data": b64}}}[dialect]


def _shots(dialect: str, tag: str, n: int) -> dict:
    """One user turn naming ``tag`` with ``n`` screenshots."""
    body = _body(dialect, tag, 1)
    if dialect == "gemini":
        body["contents"][0]["parts"] += [_png_part(dialect) for _ in range(n)]
    elif dialect == "responses":
        body["input"][0]["content"] += [_png_part(dialect) for _ in range(n)]
    else:
        body["messages"][0]["content"] = [{"type": "text", "text": _text(tag, 0)}] + [
            _png_part(dialect) for _ in range(n)]
    return body


@pytest.mark.parametrize("dialect", DIALECTS)
def test_serve_learns_an_image_cap_and_fits_the_next_conversation_under_it(dialect, tmp_path):
    with Simulator([answer("one"), answer("two")], provider="native", context_window=DOCUMENTED) as sim:
        sim.max_images = 3                                               # a 50-image gateway, scaled down
        with _proxy(sim, tmp_path / "state") as bg:
            r1 = httpx.post(bg.url + PATHS[dialect], json=_shots(dialect, "alpha", 5), headers=HEADERS, timeout=60)
        with _proxy(sim, tmp_path / "state") as bg:
            r2 = httpx.post(bg.url + PATHS[dialect], json=_shots(dialect, "beta", 5), headers=HEADERS, timeout=60)
            status = httpx.get(bg.url + "/snapglyph/status").json()
        kinds = [e["kind"] for e in sim.log]
        images = [len(e.get("images", [])) for e in sim.log]
        base = sim.base_url
    assert r1.status_code == r2.status_code == 200, (r1.text, r2.text)
    assert kinds == ["limit", "ok", "ok"] and images == [5, 3, 3]          # the newest 3 kept, no second refusal
    assert _learned(status) == [{"upstream": base, "model": MODELS[dialect], "images": 3}]


def test_a_body_cap_that_names_no_size_is_bounded_by_the_refused_body(tmp_path):
    first, second = _body("openai", "alpha", 15), _body("openai", "beta", 15)
    with Simulator([answer("one"), answer("two")], provider="openai", context_window=DOCUMENTED) as sim:
        sim.max_body_bytes, sim.body_cap_named = BODY_CAP, False        # can1357/oh-my-pi#9235: no size named
        with _proxy(sim, tmp_path / "state") as bg:
            r1 = httpx.post(bg.url + PATHS["openai"], json=first, headers=HEADERS, timeout=120)
            r2 = httpx.post(bg.url + PATHS["openai"], json=second, headers=HEADERS, timeout=120)
            status = httpx.get(bg.url + "/snapglyph/status").json()
        kinds = [e["kind"] for e in sim.log]
        sent = [len(e["raw"]) for e in sim.log]
    assert r1.status_code == r2.status_code == 200 and kinds == ["body_cap", "ok", "ok"]
    (entry,) = status["windows"]
    assert (entry["body_bytes"], entry["refused_bytes"]) == (None, sent[0])
    assert max(sent[1:]) <= sent[0] // 3                                  # a third of the refused body


def test_the_adapters_compactor_reads_the_window_learned_where_it_is_told(tmp_path):
    from snapglyph.integrations._common import ConversationCompactor
    book = WindowBook(tmp_path)
    book.refused("http://up/v1", "gpt-4.1", 5_000, window=3_000)          # another conversation's overflow
    body = {"model": "gpt-4.1", "max_tokens": 200, "messages": [
        {"role": "user" if i % 2 == 0 else "assistant", "content": _text("gamma", i)} for i in range(9)]}
    conv = ConversationCompactor(None, None, budget=100_000, book=book)
    assert conv.compact(body, "openai")[1] is None                         # ("", model): nothing learned there
    sent, res = conv.compact(body, "openai", where=("http://up/v1", "gpt-4.1"))
    assert res is not None and res.tokens_after <= 3_000 * 0.92 < res.tokens_before


@pytest.mark.parametrize("profile", ["claude", "claude-hires", "openai", "gemini", "qwen2.5-vl"])
def test_text_bodies_are_never_counted_over_two_tokens_a_byte(profile):
    """The bound ``Learned.surely_under`` relies on (windows.TOKENS_PER_BYTE_MOST): the estimate of a text-only
    request never exceeds 2 tokens per byte of its JSON, for many tiny messages, CJK, emoji, digits and code."""
    import json as _json
    from snapglyph.compaction.budget import estimate
    from snapglyph._config import DEFAULT_MAX_TOKENS
    from snapglyph.compaction.windows import TOKENS_PER_BYTE_MOST
    texts = ["a", "1", "😀", "漢字かな", "x = [i ** 2 for i in range(10)]\n", "0123456789" * 50, "é" * 300,
             "\t}\n" * 40, " ".join(f"w{i}" for i in range(500))]
    for t in texts:
        for n in (1, 50):
            body = {"model": "m", "messages": [{"role": "user" if i % 2 == 0 else "assistant", "content": t}
                                               for i in range(n)]}
            raw = _json.dumps(body, ensure_ascii=False).encode()
            # the estimate counts the output reserve too: the default where the body names none, as surely_under
            assert estimate(body, profile) <= len(raw) * TOKENS_PER_BYTE_MOST + DEFAULT_MAX_TOKENS, (profile, n)


def test_a_small_text_request_goes_unread_where_the_learned_window_is_far_off():
    from snapglyph.compaction.windows import Learned
    small = json.dumps({"model": "m", "max_tokens": 500, "messages": [{"role": "user", "content": "hi " * 200}]})
    assert Learned(window=200_000).surely_under(small.encode())
    assert not Learned(window=2_000).surely_under(small.encode())            # 1.2 KB x 2 + 500 reserve: read it
    assert not Learned(window=200_000, images=3).surely_under(small.encode())
    assert len(small) > 500 and not Learned(window=200_000, body_bytes=500).surely_under(small.encode())
