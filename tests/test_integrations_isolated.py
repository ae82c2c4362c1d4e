"""Each framework adapter imports only its own framework, and ``import snapglyph`` imports none."""
import importlib.util
import os
import subprocess
import sys

import pytest

FRAMEWORKS = {"openai_agents": "agents", "langchain": "langchain", "litellm": "litellm",
              "pydantic_ai": "pydantic_ai"}


def _loaded(statement):
    code = (f"import sys\n{statement}\n"
            f"print(' '.join(sorted(m for m in {sorted(FRAMEWORKS.values())!r} if m in sys.modules)))")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, env=env,
                         check=True)
    return out.stdout.split()


def test_snapglyph_imports_no_framework():
    assert _loaded("import snapglyph, snapglyph.integrations") == []


@pytest.mark.parametrize("adapter", sorted(FRAMEWORKS))
def test_an_adapter_imports_only_its_framework(adapter):
    framework = FRAMEWORKS[adapter]
    if importlib.util.find_spec(framework) is None:
        pytest.skip(f"{framework} not installed (the `integrations` extra)")
    assert _loaded(f"import snapglyph.integrations.{adapter}") == [framework]
