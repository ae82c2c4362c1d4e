"""The constants of the ``auto`` layout's line rule (:mod:`snapglyph.raster.blocks`) that the compiled line
kernels (:mod:`snapglyph.raster._line_kernels`) bake in: the words, levels and line ends that make a line code-like,
and the bits the kernels pass a line's class and features in.

A module of its own, below both: :mod:`.blocks` calls the kernels (through :mod:`.native`) and the kernels read
these constants, so neither imports the other, and the ahead-of-time build hashes this file
(:func:`snapglyph.raster.native.build_key`), not the planner's.
"""

from __future__ import annotations

__all__ = ["CLASS_DIGIT", "CLASS_SPACE", "CLASS_WORD", "CODE_END", "CODE_KEYWORDS", "F_DIFF_LINE", "F_ENDS_CODE",
           "F_PROSE", "F_TOKENS", "KIND_BITS", "LOG_LEVELS"]

CODE_KEYWORDS = ("def", "class", "import", "from", "return", "if", "elif", "else", "for", "while", "try", "except",
                 "finally", "with", "async", "await", "const", "let", "var", "function", "fn", "pub", "use", "package",
                 "func", "struct", "impl", "enum", "type", "interface", "export", "public", "private", "static",
                 "#include", "#define")
"""Words that make a line code-like where it starts with one (after indentation), as a whole word."""
LOG_LEVELS = ("DEBUG", "INFO", "WARN", "WARNING", "ERROR", "TRACE", "FATAL", "CRITICAL")
"""Level words that make a line a log line where it starts with one (after indentation and an optional ``[``)."""
CODE_END = "{};([,"
"""A line whose last non-space character is one of these reads as code."""

CLASS_SPACE, CLASS_WORD, CLASS_DIGIT = 1, 2, 4
"""Bits of the character class table: ``\\s``, ``\\w``, ``\\d`` (:func:`snapglyph.raster.blocks.char_classes`)."""
KIND_BITS = 7
"""The low bits of a line's features: its kind (0 none, then 1 fence, 2 blank, 3 diff start, 4 list item, 5
code-like at its start)."""
F_ENDS_CODE, F_DIFF_LINE, F_PROSE, F_TOKENS = 8, 16, 32, 64
"""Feature bits: the last non-space character is one of :data:`CODE_END`; the first is one of ``+ -``; the line
reads as prose (80+ characters, 10+ words of two or more ASCII letters, letters and spaces 80% of it); it holds a
code token (``=>``, ``->``, ``::``, ``==``, ``!=``, ``&&``, ``||``)."""
