"""Framework adapters: each module wraps one agent framework over the public API and imports only that framework.

- :mod:`snapglyph.integrations.openai_agents`: OpenAI Agents SDK (``call_model_input_filter``, overflow retry,
  recall tool).
"""
