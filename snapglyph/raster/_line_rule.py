"""The constants of the ``auto`` layout's line rule (:mod:`snapglyph.raster.blocks`) that the compiled line
kernels (:mod:`snapglyph.raster._line_kernels`) bake in: the words, levels and line ends that make a line code-like,
and the bits the kernels pass a line's class and features in.

A module of its own, below both: :mod:`.blocks` calls the kernels (through :mod:`.native`) and the kernels read
these constants, so neither imports the other, and the ahead-of-time build hashes this file
(:func:`snapglyph.raster.native.build_key`), not the planner's.
"""

from __future__ import annotations

__all__ = ["CLASS_DIGIT", "CLASS_SPACE", "CLASS_WORD", "CODE_END", "CODE_KEYWORDS", "CODE_PUNCT", "F_DIFF_LINE",
           "F_ENDS_CODE", "F_EVIDENCE", "F_KEYWORD", "F_TOKENS", "F_WORDY", "KIND_BITS", "LOG_LEVELS", "RULE_CHARS",
           "WORDY_MIN_WORDS", "WORDY_SHARE"]

CODE_KEYWORDS = ("def", "class", "import", "from", "return", "if", "elif", "else", "for", "while", "try", "except",
                 "finally", "with", "async", "await", "const", "let", "var", "function", "fn", "pub", "use", "package",
                 "func", "struct", "impl", "enum", "type", "interface", "export", "public", "private", "static",
                 "#include", "#define")
"""Words that make a line code-like where it starts with one (after indentation), as a whole word (``#include``
and ``#define`` by their shape, in any line; the others in a line that is not wordy, or that ends with ``:`` or
``{``)."""
LOG_LEVELS = ("DEBUG", "INFO", "WARN", "WARNING", "ERROR", "TRACE", "FATAL", "CRITICAL")
"""Level words that make a line a log line where it starts with one (after indentation and an optional ``[``)."""
CODE_END = "{};([,"
"""A line that is not wordy whose last non-space character is one of these reads as code (a wordy one: one of
``{([;``, not a comma, which ends many a hard-wrapped line of prose)."""
CODE_PUNCT = "#$%&*+/;<=>@[\\]^`{|}~_"
"""Characters that are evidence of code in an indented line (with a word character right before ``(``, and a ``.``
between two word characters): indentation alone does not make a line code."""
RULE_CHARS = "-=+|:_*~#"
"""A line of four or more of these (then only these and spaces) is a rule: of a table, a log, a Markdown page."""
WORDY_MIN_WORDS, WORDY_SHARE = 4, 0.75
"""A line is wordy (prose) with this many words of two or more letters (Unicode letters: ``[^\\W\\d_]``) and its
words' letters and its spaces this share of its characters (leading and trailing space left out)."""

CLASS_SPACE, CLASS_WORD, CLASS_DIGIT = 1, 2, 4
"""Bits of the character class table: ``\\s``, ``\\w``, ``\\d`` (:func:`snapglyph.raster.blocks.char_classes`)."""
KIND_BITS = 7
"""The low bits of a line's features: its kind (0 none, then 1 fence, 2 blank, 3 diff start, 4 list item, 5
code-like by its shape)."""
F_ENDS_CODE, F_DIFF_LINE, F_WORDY, F_TOKENS, F_EVIDENCE, F_KEYWORD = 8, 16, 32, 64, 128, 256
"""Feature bits: the last non-space character is one of :data:`CODE_END` (of ``{([;`` where the line is wordy);
the first is one of ``+ -``; the line is wordy (:data:`WORDY_MIN_WORDS`); it holds a code token (``=>``, ``->``,
``::``, ``==``, ``!=``, ``&&``, ``||``); it is indented and holds evidence of code (:data:`CODE_PUNCT`); it starts
with a keyword of :data:`CODE_KEYWORDS` (of a wordy line: only where it ends with ``:`` or ``{``)."""
