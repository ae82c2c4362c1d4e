"""The simulator's providers, re-exported for the demo's ``--provider`` choices (``__main__``); the bodies live in
:mod:`snapglyph.testing.provider_errors`."""

from snapglyph.testing.provider_errors import (OUTPUT_COUNTS, PROVIDERS, anthropic_grammar_error,
                                               openai_grammar_error, overflow_body)

__all__ = ["OUTPUT_COUNTS", "PROVIDERS", "anthropic_grammar_error", "openai_grammar_error", "overflow_body"]
