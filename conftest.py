"""Root pytest configuration: the doctests of a framework adapter run only where its framework is installed."""
import importlib.util
import os

# LiteLLM fetches its model price map from the network on import unless told to use the copy it ships.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_ADAPTERS = {
    "snapglyph/integrations/openai_agents.py": "agents",
    "snapglyph/integrations/langchain.py": "langchain",
    "snapglyph/integrations/litellm.py": "litellm",
    "snapglyph/integrations/pydantic_ai.py": "pydantic_ai",
}

collect_ignore = [path for path, module in _ADAPTERS.items() if importlib.util.find_spec(module) is None]
