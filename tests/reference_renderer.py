"""A slow, obviously correct renderer in plain Python, for pixel-exact comparison with the numba kernels.

It is the package's one plain-Python layout: the kernels (:mod:`snapglyph.raster._kernels`, the ahead-of-time build
and the JIT alike) are held pixel-equal to it. It shares only the inputs with the package (text normalization in
plain Python, the glyph atlas, the table of symbol labels and the profile geometry), plans the blocks of the
``auto`` layout with the plain reference of the line rule (reference_blocks.py: only its tuning constants come
from ``snapglyph.raster.blocks``), and imports nothing from ``snapglyph.raster._kernels`` or
``snapglyph.raster.render``: layout, wrapping, block
bands and their columns, paging, styles, label substitution and blitting are written again here, one character and
one pixel at a time. It also writes each page's text (rows in reading order) for comparison with ``Page.text``.
"""

from __future__ import annotations

import re

import numpy as np
from reference_blocks import plan_blocks

from snapglyph.model.document import STYLE_HEADER, Document
from snapglyph.providers.profiles import profile as get_profile
from snapglyph.raster import flow as flow_rules
from snapglyph.raster.atlas import MARKER, SYMBOL_LABELS, atlas
from snapglyph.raster.text import normalize

# Pixel value of each atlas level for each style, written out independently of render.STYLE_LUT.
INK = {0: (255, 170, 85, 0), 1: (255, 170, 170, 85), 2: (0, 85, 170, 255), 3: (255, 170, 85, 0)}
MARKER_INK = (255, 170, 170, 170)
RULE = 170
NEWLINE_CHAR, CONT_CHAR = "\u21b5", "\u21aa"


class _Pages:
    """The page being drawn (a list of pixel rows), its cursor, and each reading line's text."""

    def __init__(self, prof, at, cell):
        self.prof, self.at = prof, at
        self.head, self.opening = None, False  # the current message's header; True while its header is drawn
        self.cw, self.ch = cell
        self.width, self.height = prof.page_size
        self.cols, self.rows = self.width // self.cw, self.height // self.ch
        self.pages: list[np.ndarray] = []
        self.texts: list[str] = []
        self.new_page()

    def new_page(self):
        self.page = [[255] * self.width for _ in range(self.height)]
        self.row = self.col = self.rows_used = 0
        self.lines: dict[tuple, str] = {}  # reading key -> text; a band's columns keyed after its top row
        if getattr(self, "head", None) and not self.opening:  # the page opens inside a message: its label
            self.draw_label(" " + " ".join(self.head.split()[:2] + ["(cont.)"]) + " ")

    def draw_label(self, text):
        """The first row: the message's id and role and ``(cont.)``, in the header's ink; then the next row."""
        for c in text:
            w = self.width_of(c)
            if self.col + w > self.cols:
                self.row, self.col = self.row + 1, 0
            self.draw(c, INK[2], self.row, self.col, (self.row, 0, 0))
            self.col += w
            self.rows_used = max(self.rows_used, self.row + 1)
        self.row, self.col = self.row + 1, 0

    def flush(self, last=False):
        h = self.height
        if last:
            used = max(1, self.rows_used * self.ch)
            h = min(self.height, -(-used // self.prof.patch) * self.prof.patch)
            # a short last page only where the provider takes it as it is and it costs no more than a full page
            if (self.prof.provider_resize(self.width, h) != (self.width, h)
                    or self.prof.image_tokens(self.width, h) > self.prof.image_tokens(self.width, self.height)):
                h = self.height
        self.pages.append(np.array(self.page[:h], np.uint8))
        self.texts.append("\n".join(self.lines[k] for k in sorted(self.lines)))
        if not last:
            self.new_page()

    def draw(self, ch_, ink, row, x_cell, key):
        """Draw character ``ch_`` (a glyph of the atlas, or the marker) with its top-left cell at row, x_cell."""
        if ch_ == "\n":
            g = MARKER
        else:
            self.at.ensure([ord(ch_)])
            g = int(self.at.table[ord(ch_)])
        for y in range(self.ch):
            for x in range(int(self.at.width[g]) * self.cw):
                self.page[row * self.ch + y][x_cell * self.cw + x] = ink[int(self.at.glyphs[g, y, x])]
        self.lines[key] = self.lines.get(key, "") + (NEWLINE_CHAR if ch_ == "\n" else self.at_char(g, ch_))

    def at_char(self, g, ch_):
        return "\ufffd" if g in (1, 2) else ch_

    def width_of(self, ch_):
        self.at.ensure([ord(ch_)])
        return int(self.at.width[int(self.at.table[ord(ch_)])])

    def prose(self, text, style, mode, light=0, dark=0):
        """Draw ``text`` along the rows; its characters from ``dark`` to ``light`` in the marker's light ink."""
        for i, c in enumerate(text):
            if c == "\n" and mode == "lines":
                if self.row < self.rows:
                    self.lines.setdefault((self.row, 0, 0), "")
                self.row, self.col = self.row + 1, 0
                continue
            ink = MARKER_INK if c == "\n" or dark <= i < light else INK.get(style, INK[0])
            w = 1 if c == "\n" else self.width_of(c)
            if self.col + w > self.cols:
                self.row, self.col = self.row + 1, 0
            if self.row >= self.rows:
                self.flush()
            self.draw(c, ink, self.row, self.col, (self.row, 0, 0))
            self.col += w
            self.rows_used = max(self.rows_used, self.row + 1)

    def flow(self, lines, ended, style):
        """Lay out the lines of a flow block as dense prose from a row's start, without the block's common
        indentation and with the rest of a line's indentation at half its width (rounded up), and the blanks after
        a line-number gutter (digits, then an arrow) too, the gutter's digits and arrow in light ink where
        ``GUTTER_LIGHT`` says so and no blank before them where ``GUTTER_PAD`` says so (the two switches of
        snapglyph.raster.flow, read as the tuning constants of blocks are): a line that, with
        its newline's mark, does not fit the rest of the row starts the next row (after a line wider than a row, the
        rest of that line's last row)."""
        strip = min((len(x) - len(x.lstrip(" ")) for x in lines if x.strip(" ")), default=0)
        if self.col > 0:
            self.row, self.col = self.row + 1, 0
        for i, line in enumerate(lines):
            nl = i < len(lines) - 1 or ended
            body = line.lstrip(" ")
            half = " " * ((len(line) - len(body) - strip + 1) // 2) if body else ""  # a line of spaces: none
            gutter = re.match("([0-9]+\u2192)( *)", body)  # a line-number gutter: the blanks after it at half
            if gutter:
                body = gutter[1] + " " * ((len(gutter[2]) + 1) // 2) + body[gutter.end():]
                half = half if flow_rules.GUTTER_PAD else ""
            text = half + body + ("\n" if nl else "")
            cells = sum(1 if c == "\n" else self.width_of(c) for c in text)
            if self.col > 0 and self.col + cells > self.cols:
                self.row, self.col = self.row + 1, 0
            light = len(half) + len(gutter[1]) if gutter and flow_rules.GUTTER_LIGHT else 0
            self.prose(text, style, "dense", light, len(half))

    def block(self, lines, ended, style, k, colw):
        """Lay out the lines of one block in bands of k columns of colw cells (see the kernel's docstring).
        ``ended``: the last line ends with a newline (else a last line that draws nothing makes no row).

        The spaces a line starts with are its indentation: the block's common indentation (the fewest of a line
        holding anything else) is not drawn, nor is indentation past colw // 2 cells; a continuation row has its
        mark in the cell where the line's text starts and the text after it."""
        strip = min((len(x) - len(x.lstrip(" ")) for x in lines if x.strip(" ")), default=0)
        rows = []  # each row: (the cell of its continuation mark or None, characters)
        for i, line in enumerate(lines):
            body = line.lstrip(" ")
            indent = " " * min(len(line) - len(body) - strip, colw // 2) if len(line) > len(body) + strip else ""
            text = indent + body
            hang = len(indent) if body else 0
            cur, col, mark = [], 0, None
            for j, c in enumerate(text):
                w = self.width_of(c)
                if col + w > colw:
                    rows.append((mark, cur))
                    cur, col, mark = [], hang + 1, hang
                cur.append(c)
                col += w
            if i == len(lines) - 1 and not ended and not cur and mark is None:
                break
            rows.append((mark, cur))
        while True:
            if self.col > 0:
                self.row, self.col = self.row + 1, 0
            free = self.rows - self.row
            if free <= 0:
                self.flush()
                free = self.rows - self.row  # below the label of a page that opens inside the message
            n = len(rows)
            h = -(-n // k) if n <= k * free else free
            used_cols = min(k, -(-n // h)) if h else 0
            top = self.row
            for j in range(1, used_cols):
                x = (j * colw + j - 1) * self.cw + self.cw // 2
                for y in range(top * self.ch, (top + h) * self.ch):
                    self.page[y][x] = RULE
            for r, (mark, chars) in enumerate(rows[:used_cols * h]):
                j, rr = divmod(r, h)
                key = (top, 1 + j, rr)
                self.lines.setdefault(key, "")
                x = j * (colw + 1)
                if mark is not None:
                    self.draw(CONT_CHAR, MARKER_INK, top + rr, x + mark, key)
                    x += mark + 1
                for c in chars:
                    self.draw(c, INK.get(style, INK[0]), top + rr, x, key)
                    x += self.width_of(c)
            self.rows_used = max(self.rows_used, top + h)
            rows = rows[used_cols * h:]
            self.row, self.col = top + h, 0
            if not rows:
                return
            self.flush()


def reference_render(document: Document, *, profile: str, cell: tuple[int, int], mode: str,
                     family: str | None = None) -> tuple[list[np.ndarray], list[str]]:
    """Render ``document`` page by page; return the pixel arrays ``(height, width)`` uint8 and each page's text."""
    prof = get_profile(profile)
    at = atlas(cell, family)
    p = _Pages(prof, at, cell)
    touched = False
    head = head_mid = None

    # Symbols that no font of this atlas draws and that have a label take the label's cells (tab stops too).
    labels = {}
    for cp, label in SYMBOL_LABELS.items():
        at.ensure([cp])
        if cp not in at.covered_by:
            labels[chr(cp)] = label

    for seg in document.segments:
        # Tabs are expanded by normalize (plain Python, the definition of the tab rule raster._codes.tab_fill);
        # test_text_fast holds the compiled expansion of the fast path equal to it.
        nt = normalize(seg.text, {c: len(label) for c, label in labels.items()})
        if seg.style == STYLE_HEADER or nt.text or nt.zero_width or nt.removed:
            touched = True
        if seg.style == STYLE_HEADER and p.col > 0:
            p.row, p.col = p.row + 1, 0
        if seg.style == STYLE_HEADER:
            head, head_mid = seg.text, seg.message_id
        p.opening = seg.style == STYLE_HEADER  # a page opening in a header opens at its message: no label
        p.head = head if seg.message_id == head_mid else None  # a segment of a message with no header: none
        text = "".join(labels.get(c, c) for c in nt.text)  # a labelled symbol is shown as its label's letters
        lines = text.split("\n")
        plan = plan_blocks(seg.text, seg.style, p.cols) if mode == "auto" else []
        if plan and seg.text.count("\n") + seg.text.count("\u2028") + seg.text.count("\u2029") != len(lines) - 1:
            plan = []
        at_line = 0
        for a, b, k, colw in plan + [(len(lines), len(lines), 0, 0)]:
            if a > at_line:  # prose lines, with the newline that ends the last one when a block follows
                p.prose("\n".join(lines[at_line:a]) + ("\n" if a < len(lines) else ""), seg.style,
                        "dense" if mode == "auto" else mode)
            if b > a and k == 0:
                p.flow(lines[a:b], b < len(lines), seg.style)
            elif b > a:
                p.block(lines[a:b], b < len(lines), seg.style, k, colw)
            at_line = b
    if touched:
        p.flush(last=True)
    return p.pages, p.texts


def reference_pages(document: Document, *, profile: str, cell: tuple[int, int], mode: str,
                    family: str | None = None) -> list[np.ndarray]:
    """Render ``document`` page by page; return the pixel arrays ``(height, width)`` uint8."""
    return reference_render(document, profile=profile, cell=cell, mode=mode, family=family)[0]
