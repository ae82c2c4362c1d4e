"""Framework adapters: each module wraps one agent framework over the public API and imports only that framework.

- :mod:`snapglyph.integrations.openai_agents`: OpenAI Agents SDK (``call_model_input_filter``, overflow retry,
  recall tool).
- :mod:`snapglyph.integrations.langchain`: LangChain v1 agent middleware (``wrap_model_call``, overflow retry,
  recall tool; the agent state is never rewritten).
- :mod:`snapglyph.integrations.litellm`: LiteLLM proxy hook (``async_pre_call_hook``) and SDK helpers
  (``completion_with_recovery``, ``acompletion_with_recovery``) that retry after ``ContextWindowExceededError``.
- :mod:`snapglyph.integrations.pydantic_ai`: pydantic-ai history processor and capability (overflow retry,
  recall tool).

:mod:`snapglyph.integrations._common` holds what the chat-message adapters share and imports no framework.
"""
