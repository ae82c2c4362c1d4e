"""agent_demo: a minimal agent loop that survives "context too long" offline, and a local provider simulator.

Run ``python -m agent_demo --simulate`` for a scripted session against :class:`agent_demo.simulator.Simulator`
that overflows and recovers with snapglyph pages, or ``python -m agent_demo --base-url URL --model NAME`` against
any OpenAI-compatible server.
"""
