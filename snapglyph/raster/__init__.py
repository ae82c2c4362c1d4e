"""Stage 2, rasterising: styled text -> pages of glyph pixels -> deterministic PNG.

- :mod:`.text`      normalization (ANSI, CR, tabs, controls, NFC) and cell widths.
- :mod:`.atlas`     fonts -> glyph atlas with FreeType, cached on disk.
- :mod:`.stream`    document -> stream codes (normalized, glyph indices, blocks marked), in chunks.
- :mod:`._codes`    the stream codes and the layout state shared by the kernels, their twin and the renderer.
- :mod:`._kernels`  numba kernels (layout and blit), arrays and scalars only; :mod:`._twin` their plain-Python twin.
- :mod:`.render`    :func:`render` and :func:`iter_pages`: the orchestration over the kernels; ``Page``.
- :mod:`.encode`    deterministic PNG bytes and data URLs.
- :mod:`.warm`      compile every kernel once (``python -m snapglyph.raster.warm``).
"""
