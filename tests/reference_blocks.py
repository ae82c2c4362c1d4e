"""Slow reference of the ``auto`` layout's block planning: the line rule of :mod:`snapglyph.raster.blocks` written
the plain way (one regex search per feature and line, tabs expanded character by character, columns counted in
Python).

The package's one implementation is compiled (:mod:`snapglyph.raster._line_kernels`); tests hold it equal to this,
letter by letter and plan by plan, and the reference renderer plans its blocks with this. Only the tuning
constants (the tab stops, ``KMAX`` and the block sizes, read at each call so that tests may change them) come from
the package.
"""

from __future__ import annotations

import re

from snapglyph.raster import blocks
from snapglyph.raster._codes import INDENT_TAB_STOP, KMAX, TAB_STOP

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_SHAPE = re.compile(  # what a line is by its shape alone: a table, a rule, a log, a listing, a diff, a prompt
    r"^(?:@@ |\+\+\+ |--- |diff --git |index [0-9a-f]{7})"
    r"|^\s*\|.*\|\s*$"
    r"|^\s*[-=+|:_*~#]{4,}[-=+|:_*~# ]*$"
    r"|^\s*[\u2500-\u259f]"
    r"|^\s*\[?\d{4}-\d\d-\d\d[ T]\d|^\s*\[?\d\d:\d\d:\d\d"
    r"|^\s*\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|TRACE|FATAL|CRITICAL)\b"
    r"|^\s*\d+\s*(?:[:\t|\u2192]|\s{2})"
    r"|^[\w./-]+:\d+[:\s]"
    r"|^[dlcbps-][rwxsStT-]{9}[.+@]?\s"
    r"|^(?:\$|>>>|\.\.\.|#!|%) "
    r"|^\s*[})\]]"
    r"|^\s*#(?:include|define)\b"
)
_KEYWORD = re.compile(
    r"^\s*(?:def|class|import|from|return|if|elif|else|for|while|try|except|finally|with|async|await|const|let"
    r"|var|function|fn|pub|use|package|func|struct|impl|enum|type|interface|export|public|private|static)\b"
)
_TOKENS = re.compile(r"=>|->|::|==|!=|&&|\|\|")
_EVIDENCE = re.compile(r"[#$%&*+/;<=>@\[\\\]^`{|}~_]|\w\(|\w\.\w")
_INDENTED = re.compile(r"^(?:[ ]{2,}|\t)\S")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_DIFF_LINE = re.compile(r"^[+ -]")
_LETTERS = re.compile(r"[^\W\d_]{2,}")


def split_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\u2028", "\n").replace("\u2029", "\n").split("\n")


def expand_tabs(line: str) -> str:
    out, col, indent = [], 0, True
    for c in line:
        if c == "\t":
            stop = INDENT_TAB_STOP if indent else TAB_STOP
            out.append(" " * (stop - col % stop))
            col += stop - col % stop
            continue
        indent = indent and c == " "
        out.append(c)
        col += 1
    return "".join(out)


def wordy(line: str) -> bool:
    """Four or more words of two or more letters, letters and spaces three quarters of the line's text."""
    s = line.strip()
    words = _LETTERS.findall(s)
    return len(words) >= 4 and sum(map(len, words)) + s.count(" ") >= 0.75 * len(s)


def _kind(line: str, listing: bool) -> str:
    s = line.strip()
    if _LIST_ITEM.match(line):
        return "N"
    if _SHAPE.search(line):
        return "C"
    tokens = bool(_TOKENS.search(line))
    if wordy(line):
        if s[-1] in "{([;" or _KEYWORD.match(line) and s[-1] in ":{" or listing and tokens:
            return "C"
        return "P"
    if s[-1] in blocks.CODE_END or _KEYWORD.match(line) or tokens or _INDENTED.match(line) and _EVIDENCE.search(s):
        return "C"
    return "C" if listing else "N"


def classify_lines(lines: list[str], style: int = 0) -> str:
    out, fenced, diff, listing = [], False, False, style in (1, 3)
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
            out.append("C")
        elif fenced:
            out.append("C")
        elif not line.strip():
            out.append("B")
        else:
            if line.startswith("@@ ") or line.startswith("diff --git "):
                diff = True
            elif diff and not _DIFF_LINE.match(line):
                diff = False
            out.append("C" if diff else _kind(line, listing))
    return "".join(out)


def runs(kinds: str) -> list[tuple[int, int]]:
    """Blocks: from a C line to a C line over C, B, N and P lines, at most MAX_PROSE_RUN P lines between two C
    lines (blank and neutral lines among them do not end the count)."""
    out, i, n = [], 0, len(kinds)
    while i < n:
        if kinds[i] != "C":
            i += 1
            continue
        end, j = i + 1, i + 1
        while j < n:
            if kinds[j] == "P":
                p = j
                while p < n and kinds[p] != "C":  # the stretch up to the next C line
                    p += 1
                if kinds[j:p].count("P") > blocks.MAX_PROSE_RUN:
                    break
                j = p
                continue
            if kinds[j] == "C":
                end = j + 1
            j += 1
        if end - i >= blocks.MIN_BLOCK_LINES:
            out.append((i, end))
        i = end
    return out


def lead(line: str) -> int:
    """Cells of a line's leading spaces, tabs expanded."""
    x = expand_tabs(line)
    return len(x) - len(x.lstrip(" "))


def choose_columns(widths: list[int], leads: list[int], cols: int) -> tuple[int, int, int]:
    """Columns, cells per column and the band's rows."""
    nonblank = [i for i, w in enumerate(widths) if w > 0]
    strip = min(leads[i] for i in nonblank) if nonblank else 0
    best_h, best_k = -1, 1
    for k in range(1, min(KMAX, max(1, len(widths) // blocks.MIN_ROWS_PER_COLUMN)) + 1):
        colw = (cols - (k - 1)) // k
        if k > 1 and colw < blocks.MIN_COLW:
            break
        rows = over = 0
        for w, ld in zip(widths, leads):
            if w == 0:
                rows += 1
                continue
            ind = ld - strip
            h = min(ind, colw // 2)
            drawn = w - ld + h
            over += drawn > colw or ind > h
            rows += 1 + (-(-(drawn - colw) // (colw - h - 1)) if drawn > colw else 0)
        if k > 1 and over > blocks.MAX_WRAP_SHARE * len(nonblank):
            continue
        if best_h < 0 or -(-rows // k) < best_h:
            best_h, best_k = -(-rows // k), k
    return best_k, (cols - (best_k - 1)) // best_k, best_h


def flow_rows(widths: list[int], leads: list[int], cols: int) -> int:
    """Rows of the block's lines one after another (each with its newline's cell, the common indentation off and
    the rest of the indentation at half its width, rounded up),
    a line that does not fit the rest of a row starting the next (after a line wider than a row: of its last row)."""
    nonblank = [i for i, w in enumerate(widths) if w > 0]
    strip = min(leads[i] for i in nonblank) if nonblank else 0
    rows, col = 1, 0
    for w, ld in zip(widths, leads):
        cells = (w - ld + (ld - strip + 1) // 2 if w else 0) + 1
        if col > 0 and col + cells > cols:
            rows, col = rows + 1, 0
        while col + cells > cols:  # a line wider than a row: one row at a time
            rows, cells = rows + 1, cells - (cols - col)
            col = 0
        col += cells
    return rows


def plan_blocks(text: str, style: int, cols: int) -> list[tuple[int, int, int, int]]:
    if style == 2 or "\n" not in text and "\u2028" not in text and "\u2029" not in text:
        return []
    lines = split_lines(text)
    out = []
    for a, b in runs(classify_lines(lines, style)):
        part = lines[a:b]
        widths = [len(expand_tabs(x).rstrip()) for x in part]
        leads = [lead(x) if x.strip() else 0 for x in part]
        k, colw, band = choose_columns(widths, leads, cols)
        if blocks.FLOW_GAIN > 0 and band > blocks.FLOW_GAIN * flow_rows(widths, leads, cols):
            k, colw = 0, cols  # flow
        out.append((a, b, k, colw))
    return out
