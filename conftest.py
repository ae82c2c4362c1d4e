"""Root pytest configuration: the doctests of a framework adapter run only where its framework is installed."""
import importlib.util

_ADAPTERS = {
    "snapglyph/integrations/openai_agents.py": "agents",
    "snapglyph/integrations/langchain.py": "langchain",
    "snapglyph/integrations/litellm.py": "litellm",
    "snapglyph/integrations/pydantic_ai.py": "pydantic_ai",
}

collect_ignore = [path for path, module in _ADAPTERS.items() if importlib.util.find_spec(module) is None]
