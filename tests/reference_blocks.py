"""Slow reference of the ``auto`` layout's block planning: the line rule of :mod:`snapglyph.raster.blocks` written
the plain way (one regex search per line, tabs expanded character by character, columns counted in Python).

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
_CODE = re.compile(
    r"^(?:[ ]{2,}|\t)\S"
    r"|^(?:@@ |\+\+\+ |--- |diff --git |index [0-9a-f]{7})"
    r"|^\s*\|.*\|\s*$"
    r"|^\s*\[?\d{4}-\d\d-\d\d[ T]\d|^\s*\[?\d\d:\d\d:\d\d"
    r"|^\s*\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|TRACE|FATAL|CRITICAL)\b"
    r"|^\s*\d+\s*(?:[:\t|\u2192]|\s{2})"
    r"|^[\w./-]+:\d+[:\s]"
    r"|^[dlcbps-][rwxsStT-]{9}[.+@]?\s"
    r"|^(?:\$|>>>|\.\.\.|#!|%) "
    r"|[{};(\[,]\s*$|^\s*[})\]]"
    r"|^\s*(?:def|class|import|from|return|if|elif|else|for|while|try|except|finally|with|async|await|const|let"
    r"|var|function|fn|pub|use|package|func|struct|impl|enum|type|interface|export|public|private|static"
    r"|#include|#define)\b"
)
_CODE_TOKENS = re.compile(r"=>|->|::|==|!=|&&|\|\|")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_DIFF_LINE = re.compile(r"^[+ -]")
_WORD = re.compile(r"[A-Za-z]{2,}")


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


def _prose(line: str) -> bool:
    words = _WORD.findall(line)
    return len(line) >= 80 and len(words) >= 10 and sum(map(len, words)) + line.count(" ") >= 0.8 * len(line)


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
            if diff:
                out.append("C")
            elif not listing and _LIST_ITEM.match(line):
                out.append("N")
            elif _CODE.search(line) or listing and _CODE_TOKENS.search(line):
                out.append("C")
            elif _prose(line):
                out.append("P")
            else:
                out.append("C" if listing else "N")
    return "".join(out)


def choose_columns(widths: list[int], cols: int) -> tuple[int, int]:
    nonblank = sum(1 for w in widths if w > 0)
    best_h, best_k = -1, 1
    for k in range(1, min(KMAX, max(1, len(widths) // blocks.MIN_ROWS_PER_COLUMN)) + 1):
        colw = (cols - (k - 1)) // k
        if k > 1 and colw < blocks.MIN_COLW:
            break
        if k > 1 and sum(1 for w in widths if w > colw) > blocks.MAX_WRAP_SHARE * nonblank:
            continue
        rows = len(widths) + sum(-(-(w - colw) // (colw - 1)) for w in widths if w > colw)
        if best_h < 0 or -(-rows // k) < best_h:
            best_h, best_k = -(-rows // k), k
    return best_k, (cols - (best_k - 1)) // best_k


def plan_blocks(text: str, style: int, cols: int) -> list[tuple[int, int, int, int]]:
    if style == 2 or "\n" not in text and "\u2028" not in text and "\u2029" not in text:
        return []
    lines = split_lines(text)
    kinds = classify_lines(lines, style)
    out = []
    for m in re.finditer(r"C(?:[CBN]*C)?", kinds):
        a, b = m.span()
        if b - a >= blocks.MIN_BLOCK_LINES:
            out.append((a, b, *choose_columns([len(expand_tabs(x).rstrip()) for x in lines[a:b]], cols)))
    return out
