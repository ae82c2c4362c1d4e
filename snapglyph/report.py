"""Image-vs-text token cost of a transcript, per reader profile: the honest numbers behind ``snapglyph cost``.

For each profile, two scopes:

``whole``   every message of the transcript drawn as pages, against the same messages sent as text;
``middle``  the middle :func:`snapglyph.compact` chooses at the given budget, against those messages as text.

Text tokens are what the profile's provider would bill for the messages as sent (each message's text, tool call
names and arguments and tool results, plus a fixed overhead per message), counted with the encoding named in
``text_method`` and multiplied by the profile's safety factor where the provider's tokenizer is not public.
Image tokens are the profile's documented cost function of each page's size (see ``Profile.doc`` for the rule,
its URL and the date it was read); pages are never resized by the provider, so that cost is what is billed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

from ._config import DEFAULT_BUDGET
from .errors import InputError
from .compaction.estimate import TokenCosts
from .model.messages import Message

__all__ = ["CostRow", "cost_report", "format_table", "plot", "rows_as_json"]

@dataclass(frozen=True)
class CostRow:
    """One profile and scope of a cost report.

    Attributes
    ----------
    profile, scope : str
        Profile name; ``whole`` or ``middle``.
    messages : int
        Messages in the scope.
    chars : int
        Source characters drawn on the pages (Python ``str`` code points).
    text_tokens : int
        Tokens the messages cost as text (see ``text_method``).
    text_method : str
        How ``text_tokens`` was obtained: ``counted: tiktoken <encoding> x<factor>`` or ``estimated: ...``.
    pages : int
        Page images.
    image_tokens : int
        Sum over pages of the profile's image cost (documented formula, after the provider's resize).
    ratio : float
        ``text_tokens / image_tokens`` (above 1: the pages are cheaper); 0.0 when there are no pages.
    png_bytes : int
        Bytes of the PNG pages (before base64, which adds a third).
    chars_per_image_token : float
        ``chars / image_tokens``.

    Examples
    --------
    >>> from snapglyph import Message, Part, cost_report
    >>> row = cost_report([Message(0, "user", [Part("text", text="word " * 3000)])])[0]
    >>> row.ratio == round(row.text_tokens / row.image_tokens, 3), row.text_method
    (True, 'counted: tiktoken cl100k_base x1.3')
    """

    profile: str
    scope: str
    messages: int
    chars: int
    text_tokens: int
    text_method: str
    pages: int
    image_tokens: int
    ratio: float
    png_bytes: int
    chars_per_image_token: float


def _text_method(prof: Any) -> str:
    from .providers.tokens import text_tokens
    tc = text_tokens("x", encoding=prof.encoding)
    kind = "counted" if tc.exact else "estimated"
    factor = f" x{prof.text_token_factor:g}" if prof.text_token_factor != 1 else ""
    return f"{kind}: {tc.method}{factor}"


def _row(prof: Any, scope: str, msgs: Sequence[Message], pages: Sequence[Any], text_tokens: int) -> CostRow:
    img = sum(prof.image_tokens(p.width, p.height) for p in pages)
    chars = sum(p.chars for p in pages)
    return CostRow(profile=prof.name, scope=scope, messages=len(msgs), chars=chars, text_tokens=text_tokens,
                   text_method=_text_method(prof), pages=len(pages), image_tokens=img,
                   ratio=round(text_tokens / img, 3) if img else 0.0, png_bytes=sum(len(p.png) for p in pages),
                   chars_per_image_token=round(chars / img, 2) if img else 0.0)


def cost_report(messages: "Sequence[Message] | str", *, profiles: Sequence[str] = ("claude",),
                budget: int = DEFAULT_BUDGET, mode: str = "auto") -> list[CostRow]:
    """Text tokens against image tokens for the whole transcript and for the middle chosen at ``budget``.

    Parameters
    ----------
    messages : sequence of Message, or str
        The conversation (a ``str`` is plain text: only the ``whole`` scope, one message's worth of text).
    profiles : sequence of str
        Profile names; one pair of rows each.
    budget : int
        Token budget for the ``middle`` scope (as ``snapglyph compact --budget``).
    mode : str
        Layout mode: ``auto`` (default), ``dense`` or ``lines`` (see :mod:`snapglyph.raster.render`).

    Returns
    -------
    list of CostRow

    Raises
    ------
    InputError, UnknownProfileError
        Bad arguments or an unknown profile.

    Examples
    --------
    >>> from snapglyph import Message, Part
    >>> rows = cost_report([Message(0, "user", [Part("text", text="word " * 3000)])], profiles=("claude", "openai"))
    >>> [(r.profile, r.chars, r.text_tokens, r.pages, r.image_tokens) for r in rows]
    [('claude', 15009, 3906, 1, 1404), ('openai', 15009, 3005, 1, 1320)]
    """
    from .compaction.compactor import compact
    from .providers.dialects import normalize
    from .model.document import Document
    from .errors import BudgetError
    from .providers.profiles import profile as get_profile
    from .raster.render import render, render_document

    if not profiles:
        raise InputError("give at least one profile")
    rows: list[CostRow] = []
    for name in profiles:
        prof = get_profile(name)
        costs = TokenCosts(prof)
        if isinstance(messages, str):
            pages = render_document(Document.from_text(messages), profile=prof, mode=mode)
            rows.append(_row(prof, "whole", [], pages, costs.text(messages)))
            continue
        msgs = list(messages)
        norm, _ = normalize(msgs, dialect=prof.dialect)
        pages = render(msgs, profile=prof, mode=mode)
        rows.append(_row(prof, "whole", msgs, pages, sum(costs.message(m) for m in norm)))
        try:
            res = compact(msgs, profile=prof, budget=budget, mode=mode)
        except BudgetError:
            continue
        if res.passthrough or not res.middle_ids:
            continue
        mid = set(res.middle_ids)
        shown = [m for m in norm if m.id in mid and m.id not in set(res.dropped_ids)]
        rows.append(_row(prof, "middle", shown, res.pages, sum(costs.message(m) for m in shown)))
    return rows


def format_table(rows: Sequence[CostRow]) -> str:
    """The rows as a fixed-width text table, with the counting method of each profile below it.

    Examples
    --------
    >>> from snapglyph import Message, Part, cost_report
    >>> print(format_table(cost_report([Message(0, "user", [Part("text", text="word " * 3000)])])))
    profile  scope  messages  chars  text tok  pages  image tok  text/image  chars/img tok  PNG KB
    claude   whole         1  15009      3906      1       1404        2.78           10.7       4
    <BLANKLINE>
    claude: text tokens counted: tiktoken cl100k_base x1.3; image tokens by the profile's documented formula
    """
    head = ("profile", "scope", "messages", "chars", "text tok", "pages", "image tok", "text/image", "chars/img tok",
            "PNG KB")
    lines = [head]
    for r in rows:
        lines.append((r.profile, r.scope, str(r.messages), str(r.chars), str(r.text_tokens), str(r.pages),
                      str(r.image_tokens), f"{r.ratio:.2f}", f"{r.chars_per_image_token:.1f}",
                      f"{r.png_bytes / 1024:.0f}"))
    widths = [max(len(x[i]) for x in lines) for i in range(len(head))]
    out = ["  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(x, widths)))
           for x in lines]
    methods = sorted({f"{r.profile}: text tokens {r.text_method}; image tokens by the profile's documented formula"
                      for r in rows})
    return "\n".join(out + [""] + methods)


def plot(rows: Sequence[CostRow], path: str) -> None:
    """Draw text tokens against image tokens per profile and scope as a PNG (needs matplotlib: ``[plot]``).

    Raises
    ------
    InputError
        If matplotlib is not installed.

    Examples
    --------
    >>> import os, tempfile
    >>> from PIL import Image
    >>> from snapglyph import Message, Part, cost_report
    >>> path = os.path.join(tempfile.mkdtemp(), "cost.png")
    >>> plot(cost_report([Message(0, "user", [Part("text", text="word " * 3000)])]), path)
    >>> Image.open(path).format, Image.open(path).size
    ('PNG', (600, 450))
    """
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from ._extras import extra_hint
        raise InputError(f"--plot needs {extra_hint('plot', 'matplotlib')}") from None
    labels = [f"{r.profile}\n{r.scope}" for r in rows]
    x = range(len(rows))
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(rows)), 4.5))
    ax.bar([i - 0.2 for i in x], [r.text_tokens for r in rows], width=0.4, label="as text")
    ax.bar([i + 0.2 for i in x], [r.image_tokens for r in rows], width=0.4, label="as pages")
    ax.set_xticks(list(x), labels, fontsize=8)
    ax.set_ylabel("tokens")
    ax.set_title("snapglyph cost: text tokens vs image tokens")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def rows_as_json(rows: Sequence[CostRow]) -> list[dict]:
    """The rows as plain dicts (for ``--json``).

    Examples
    --------
    >>> from snapglyph import Message, Part, cost_report
    >>> row = rows_as_json(cost_report([Message(0, "user", [Part("text", text="word " * 3000)])]))[0]
    >>> {k: row[k] for k in ("scope", "text_tokens", "image_tokens", "ratio", "png_bytes")}
    {'scope': 'whole', 'text_tokens': 3906, 'image_tokens': 1404, 'ratio': 2.782, 'png_bytes': 3608}
    """
    return [asdict(r) for r in rows]
