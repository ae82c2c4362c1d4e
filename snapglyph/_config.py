"""Every tuning constant of snapglyph, each with the measurement or the reason behind it.

Constants are imported where they are used (``from .._config import EXACT_RENDERS``); change one here and the
whole package follows. Provider rules (image limits, token costs, page geometry) are not tuning: they live with
their sources in :mod:`snapglyph.providers.profiles`. Format choices fixed by the kernels (4 ink levels for the
2-bit PNG, the tab stops) stay beside the kernels in :mod:`snapglyph.raster._codes`.
"""

from __future__ import annotations

__all__ = ["BLOB_MIN_CHARS", "CHUNK", "CONVERSATIONS_IN_MEMORY", "CUT_FLOOR", "DEFAULT_BUDGET", "DEFAULT_MAX_TOKENS",
           "EXACT_RENDERS", "GROWTH_TURNS", "HOLD_BYTES", "HOLD_NEAR", "HOLD_SECONDS", "IMAGE_HEAD_CHARS", "INLINE_MAX",
           "KEEP_IMAGES", "LEDGER_SHARE", "MAX_ID_RANGE", "MESSAGE_OVERHEAD", "OVERFLOW_UNKNOWN_SHARE",
           "PAGE_CACHE_SIZE", "PAGE_IMAGE_SHARE", "PROTECT_LAST", "RECALL_MARGIN", "RECALL_ROOM", "RECALL_ROUNDS",
           "RELAY_KEEP_BYTES", "SERVE_MARGIN", "SERVE_RECORDS_IN_MEMORY", "SPLIT", "STORM_CUTS", "STORM_REQUESTS",
           "SUMMARY_ROUNDS", "TOOL_PART_OVERHEAD", "TRIM_PAGES", "UPSTREAM_READ_TIMEOUT", "USER_SHARE", "USER_TEXT_MAX",
           "ZLIB_LEVEL"]

# --- compaction -----------------------------------------------------------------------------------------------

DEFAULT_BUDGET = 100_000
"""Token budget of a whole request when the caller gives none (``compact``, ``compact_ladder``, ``cost_report``,
the CLI, the demo): below the 128k-200k windows of the profiles' current models, with room for their output."""

DEFAULT_MAX_TOKENS = 4096
"""Output tokens reserved inside the budget when the caller gives none (the common default ``max_tokens`` of the
SDK examples; enough for a tool call with a file edit)."""

EXACT_RENDERS = 24
"""Cut points the compactor renders exactly when the page-count bounds leave them open; the rest are settled by
the bounds alone. The bounds differ by one page's height at most, so only cut points whose last page straddles the
budget are open: on 9 compactions of three real transcripts in ``../shared/data`` (Claude Code 323
and 903 messages, a Codex rollout of 173; budgets 20k/40k/60k, profile claude) 0, 0, 0, 0, 0, 0, 0, 0 and 3. 24 caps the worst case of a conversation of many tiny messages (the 40,000-message
test compacts in about 3 s) while ``test_tail_is_the_longest_that_fits`` still finds the longest tail at every
budget it prices."""

MESSAGE_OVERHEAD = 4
"""Tokens charged per message for role and framing (OpenAI's documented chat overhead is 3-4 per message)."""

TOOL_PART_OVERHEAD = 3
"""Tokens charged per tool call or tool result beside its text (call id and framing). An estimate in line with
:data:`MESSAGE_OVERHEAD`, not measured per provider; provider-reported usage calibrates the total
(:func:`snapglyph.calibrate`)."""

SUMMARY_ROUNDS = 3
"""Rounds of the summary tier: a summary's own length can drop one more page, whose messages the next summary
then covers; the loop stops as soon as the dropped set no longer changes, so this only bounds the caller's
summarizer calls."""

KEEP_IMAGES = 4
"""Images the image-drop tier keeps (the newest): a choice, not a measurement; a few recent screenshots are what
a computer-use agent acts on, older ones are recallable from the store."""

PAGE_IMAGE_SHARE = 0.5
"""Share of a profile's images per request that pages may always take, the conversation's oldest own images
becoming placeholders to make room (issue 12: 130 screenshots in history left no room for a single page of the
middle, and compaction refused a request that existed). A choice, not a measurement: half keeps the newest 50 of
Claude's 100 images, plenty for an agent acting on recent screenshots, while the middle still shows."""

PROTECT_LAST = 8
"""Newest messages the free tiers never touch (a choice: about two to four rounds of call, result and answer)."""

MAX_ID_RANGE = 100_000
"""Longest message-id range one recall request may ask for (a guard against ``#0-#999999999`` building a huge
set; far above any real transcript's length)."""

# --- documents and rendering -----------------------------------------------------------------------------------

BLOB_MIN_CHARS = 256
"""Shortest base64 run drawn as a ``[base64 N KB]`` placeholder: 192 bytes decoded. Hashes and ids (a SHA-256 is
64 hex or 44 base64 characters) stay as text, where a model may need them."""

IMAGE_HEAD_CHARS = 8192
"""Base64 characters (6,144 bytes) :func:`snapglyph.model.images.image_size` decodes first; where Pillow cannot read
the header from them it decodes four times as many, up to the whole payload. Measured 2026-12-01 on 1280x800 images
saved by Pillow 13: the header is read from the first 42 bytes of a PNG, 732 of a palette PNG, 177 of a baseline or
progressive JPEG, 792 of a GIF (its 256-color palette comes first); a JPEG carrying a 60 KB ICC profile needs 60,864
bytes (three rounds); Pillow's WebP reader takes only the whole file."""

INLINE_MAX = 120
"""Longest one-line string argument (in characters) drawn inline on a tool call's line; longer ones get their own
text (a page row at 6x12 on the claude profile holds 182 cells, so the call line stays one row)."""

CHUNK = 1 << 16
"""Stream elements gathered into one chunk before the layout kernel runs over it (codes int32, styles and weights
uint8: under 1 MB per chunk); not measured against other sizes."""

SPLIT = 1 << 16
"""Longest piece of a segment normalized at once, in characters (see :func:`snapglyph.raster.stream.split_point`).
The pieces' arrays (code points, stream codes, block marks: about 6 bytes a character, several copies while a piece
is encoded) are most of what a render allocates and frees, and the larger they are, the more the heap fragments.
Measured 2026-12-03 on ``snapglyph render`` of the bench texts (peak ``ru_maxrss`` at 1 M / 40 M characters, minor
page faults and wall at 40 M, one run each): 1 << 18 73 / 85 MB, 164 K faults, 3.2-3.7 s; 1 << 16 65 / 73 MB,
121 K, 3.5 s; 1 << 15 64 / 71 MB, 112 K, 3.2 s. A cut falls after a newline, and the block planner plans each
piece apart, so a block longer than a piece is drawn as two bands (the 10 M bench text: 877 pages instead of 874).
Earlier, with the JIT (2026-12-01, 10 M characters): 251 MB with 1 << 20, 222 MB with 1 << 18, 220 MB with 1 << 16."""

TRIM_PAGES = 64
"""Pages encoded between two returns of freed heap memory to the system (glibc's ``malloc_trim``, see
:func:`snapglyph.raster.pool.encode_ahead`). The pages' threads free what others allocate, so glibc's per-thread
heaps keep free pages otherwise; each return costs page faults when the memory is taken again. Measured
2026-12-02 on ``snapglyph render`` of the 40 M-character bench text, page buffers reused
(:class:`~snapglyph.raster.pool.PageBuffers`), peak resident memory by bench/rss_probe.py and minor page faults
by ``/usr/bin/time``: every 32 pages 192 MB and 255 K faults (2.6 s of system time), every 64 193 MB and 188 K,
every 128 197 MB and 137 K, never 212 MB (``/usr/bin/time``) and 52 K. 1 M characters: 182 MB for each."""

ZLIB_LEVEL = 1
"""Deflate level of the PNG IDAT stream (1: fastest; on glyph pages it costs about 10% in size against level 6 and
is ~4x faster with zlib)."""

LEDGER_SHARE = 0.10
"""Default cap of the identifier ledger (:mod:`snapglyph.compaction.ledger`): this share of the image tokens of the
middle's pages it stands beside (issue 10: a tenth keeps a page's identifiers exact at a tenth of its cost; on the
Claude Code transcript in ../shared/data the ledger of 200 shown messages takes about 2,700 tokens beside 20 pages
of 1,521 tokens each, so the cap rarely cuts)."""

USER_SHARE = 0.25
"""Default cap of the user's own messages repeated in the snapshot text (:mod:`snapglyph.compaction.user_words`):
this share of the compaction's budget, in tokens. User messages are few and short but carry the task's constraints:
the 88 typed messages of ../shared/data/pi-session/large-session.jsonl take 4,008 tokens (Claude's estimate), the
60 of before-compaction.jsonl 6,291 (long ones cut to 2,000 characters), so a quarter keeps all of them from a
budget of 16k (resp. 26k) tokens on, and the newest ones below."""

USER_TEXT_MAX = 2000
"""Longest user message, in characters, repeated whole; a longer one keeps its first and last halves of this, with a
marked gap (issue 10: about 500 tokens, a long task statement; pasted logs and files are longer)."""

# --- the proxy (snapglyph serve) and sticky compaction ----------------------------------------------------------

PAGE_CACHE_SIZE = 32
"""Middles whose pages :mod:`snapglyph.compaction.sticky` keeps in memory (PNG bytes, keyed by the middle's source
and the render settings): one per conversation the proxy serves at once; 32 claude pages of a dense middle take
about 20 MB. A choice, not a measurement."""

RELAY_KEEP_BYTES = 256 * 1024
"""The most bytes of a relayed response kept for the overflow check (pieces that hold an error marker): an error
body of any provider read in ../shared/reference is under 4 kB; this bounds memory per response."""

RECALL_ROUNDS = 3
"""Recall rounds ``snapglyph serve`` answers for one request (``--recall-rounds``; 0: it offers no recall tool):
one round asks for the messages a page leaves unclear, a second for what that text names, a third is room to
spare; a model asking still more is answered without it (a bound, as llm caps chained tool calls, so a model
that keeps asking cannot hold a request open). A choice, not a measurement."""

RECALL_MARGIN = 200
"""Tokens kept free when the text of a recall is cut to the room the budget leaves (the cut note and the
follow-up's framing: a tool result block and its id cost well under 100 estimated tokens)."""

RECALL_ROOM = 0.25
"""Share of a conversation's budget a compaction leaves free where the door's own loop answers ``recall_messages``
(LiteLLM's :func:`snapglyph.integrations.litellm.completion_with_recovery`: the answer goes into a follow-up that
must fit the same budget; :func:`snapglyph.compaction.budget.recall_room`). A quarter holds a round of a few recalled
messages; ``serve`` leaves more by aiming a new cut at 60% of its budget (``--target``). A choice, not a
measurement."""

SERVE_MARGIN = 0.08
"""Share of the model's window the proxy keeps free for the token estimate's error (text counted by another
tokenizer than the provider's): the calibrated estimate runs 1.3-1.45x above cl100k on real transcripts
(:mod:`snapglyph.providers.tokens`), so 8% covers the provider tokenizers that count more than cl100k."""

UPSTREAM_READ_TIMEOUT = 600.0
"""Seconds ``snapglyph serve`` waits for the upstream's next bytes (its first answer included) before it gives up
(``--upstream-timeout``): the official OpenAI and Anthropic Python SDKs give a request 600 s (``DEFAULT_TIMEOUT``
in ``_constants.py`` of openai 3.60 and anthropic 2.17, read 2026-12-01), so the proxy never gives up before them."""

# --- framework adapters -----------------------------------------------------------------------------------------

OVERFLOW_UNKNOWN_SHARE = 1 / 3
"""After a context-overflow error that names no context window (OpenAI's Responses and Bedrock's bodies say neither
window nor prompt size) and with no request of that upstream and model known answered, the window is taken as this
share of the request that overflowed, as the provider counts it (:func:`snapglyph.compaction.budget.window_guess`;
every door calls it). One retry is made, so it errs on the small side: a request up to 1 / (SHARE * (1 -
SERVE_MARGIN)) = 3.26 times its window recovers whatever the counts. Chosen from bench/serve_goals.py (a): the Claude
Code session's first request over an 8,000 window is 3.35x it by snapglyph's estimate (one round added a 21,000-token
tool result), and retries between 0.28 and 0.45 of it fit (below, the newest round's two pages cannot fit; above, the
provider refuses again); 0.75 failed there. The cost, where the window is large: a retry to a third of what was sent
(the aider request over a 200,000 window, 162,209 tokens by the estimate, is retried at 49,743, not 184,000); the
next overflow of that upstream and model takes the retry, which was answered, as a lower bound
(:mod:`snapglyph.compaction.windows`)."""

CONVERSATIONS_IN_MEMORY = 64
"""Conversations whose source store a door holds in memory at once: each framework adapter
(:class:`snapglyph.integrations._common.Conversations`) and ``snapglyph serve``'s planner; the least recently used
is dropped from memory (its store and learned budget are on disk and read again on its next request). A store holds
its conversation's whole source text (about 0.8 MB for a 200,000-token conversation), so 64 of them stay near
50 MB. A choice, not a measurement."""

SERVE_RECORDS_IN_MEMORY = 4096
"""Conversation records (:class:`snapglyph.serve.state.ConversationRecord`, a few kB each) ``snapglyph serve`` holds
in memory; the least recently used is read again from the state folder when its conversation comes back."""

HOLD_BYTES = 65536
"""Bytes of an answer's start ``snapglyph serve`` holds at most while it waits for the first event that carries content
(``--hold-bytes``, :mod:`snapglyph.serve.answers`): an Anthropic or Responses preamble (``message_start``,
``response.created`` with the request's tools echoed) is a few kB; a refusal's whole stream is under 2 kB. A choice."""

HOLD_SECONDS = 20.0
"""Seconds ``snapglyph serve`` holds an answer's start at most (``--hold-seconds``): about a slow model's time to first
token on a long prompt; past it the held bytes go out and the rest is relayed as it comes. A choice."""

HOLD_NEAR = 0.5
"""A streamed request whose estimate is at or above this share of the window known is held for an error as its first
event (``--hold-near``); where no window is known every streamed conversation request is. A choice: an estimate
errs by well under half."""

GROWTH_TURNS = 10
"""A new cut leaves room for this many turns at the conversation's measured growth per turn
(:func:`snapglyph.compaction.growth.cut_target`): issue 35 asks for at most one new cut every 8 turns of a
conversation growing 1,500 tokens a turn at a 32k window; 10 leaves the estimate's error some slack."""

CUT_FLOOR = 0.5
"""A new cut never aims below this share of the room above the reserve, however fast the conversation grows: lower,
the compactor drops the middle's pages for the budget (a cut to nothing would only move the storm to the next turn).
Where the growth's target cannot be met, the fixed share (serve's ``target``, 0.6), then the ceiling, are tried.
A choice; at 32k and 1,500 tokens a turn the growth's own target (about 0.5 of the room) is used."""

STORM_CUTS = 5
"""New cuts of one conversation within :data:`STORM_REQUESTS` requests past which a door answers with one error
instead of another rewrite (:func:`snapglyph.compaction.growth.storm`; ``serve --storm-cuts``). A conversation
growing 1,500 tokens a turn at 32k needs one every 8 turns or more; an overflow, its recovery and a second overflow
make 3 in a row. A choice."""

STORM_REQUESTS = 10
"""The window of requests :data:`STORM_CUTS` counts in."""
