"""The provider simulator the demo runs against: :mod:`snapglyph.testing`, re-exported under its old name for
the demo's ``--simulate`` (``__main__``). New code imports :mod:`snapglyph.testing`."""

from snapglyph.testing import Simulator, Step, answer, call, count_text, png_size

__all__ = ["Simulator", "Step", "answer", "call", "count_text", "png_size"]
