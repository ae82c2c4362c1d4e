"""snapglyph_agent_demo (the folder agent_demo/ of the repository): a minimal agent loop that survives "context too
long" offline, on snapglyph's own recovery rules.

Run ``python -m snapglyph_agent_demo --simulate`` for a scripted session against the library's provider simulator
(:class:`snapglyph.testing.Simulator`) that overflows and recovers with snapglyph pages, or
``python -m snapglyph_agent_demo --base-url URL --model NAME`` against any OpenAI-compatible server.
"""
