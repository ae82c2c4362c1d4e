"""The formats ``load()`` reads, as ``snapglyph formats`` prints them and the README lists them, made from
:data:`snapglyph.readers.table.TABLE` (``tests/test_reader_table.py`` checks the README's block against
:func:`readme_block`).
"""

from __future__ import annotations

from . import table

__all__ = [
    "README_BEGIN",
    "README_END",
    "format_rows",
    "formats_table",
    "readme_block",
]

#: The lines that open and close the README's generated list of formats.
README_BEGIN = "<!-- formats: generated from snapglyph/readers/table.py by snapglyph.readers.formats.readme_block -->"
README_END = "<!-- /formats -->"


def format_rows() -> list[dict[str, str]]:
    """One ``{"format", "reads", "example"}`` per row of the table, in table order (``snapglyph formats --json``).

    Examples
    --------
    >>> row = format_rows()[0]
    >>> row["format"], row["reads"], row["example"]
    ('claude-code', 'Claude Code session JSONL', '~/.claude/projects/<project>/<session id>.jsonl')
    """
    return [{"format": s.name, "reads": s.info.reads, "example": s.info.example} for s in table.TABLE]


def formats_table() -> str:
    """The formats ``load()`` detects, one per line: name, what it is, an example path.

    Returns
    -------
    str
        Aligned columns with a header line, ending without a newline.

    Examples
    --------
    >>> head, first = formats_table().splitlines()[:2]
    >>> head.split(), first.split()[0], head.index("reads") == first.index("Claude Code")
    (['format', 'reads', 'example', 'path'], 'claude-code', True)
    """
    rows = format_rows()
    w = max(len(r["reads"]) for r in rows)
    lines = [f"{'format':<12} {'reads':<{w}} example path"]
    lines += [f"{r['format']:<12} {r['reads']:<{w}} {r['example']}" for r in rows]
    return "\n".join(lines)


def readme_block() -> str:
    """The README's list of formats: a Markdown table between :data:`README_BEGIN` and :data:`README_END`.

    Examples
    --------
    >>> lines = readme_block().splitlines()
    >>> lines[0] == README_BEGIN, lines[1], lines[-1] == README_END
    (True, '| format | reads | example path |', True)
    """
    lines = [README_BEGIN, "| format | reads | example path |", "|---|---|---|"]
    lines += [f"| `{r['format']}` | {r['reads']} | `{r['example']}` |" for r in format_rows()]
    return "\n".join([*lines, README_END])
