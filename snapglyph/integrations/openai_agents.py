"""OpenAI Agents SDK adapter: compact what each model call sends, recover from a context overflow, offer recall.

The SDK keeps its own history; :class:`InputFilter` (a ``RunConfig.call_model_input_filter``) rewrites only what
one call sends (Responses items in, Responses items out: head verbatim, the old middle as page images, tail
verbatim). :class:`RecoveringModel` wraps a model so that a context-overflow error (recognized by
:func:`snapglyph.providers.overflow.detect`) lowers the filter's budget to the limit the provider named and the call
is retried once, compacted. :meth:`InputFilter.recall_tool` is a ``FunctionTool`` answering ``recall_messages``
from the filter's on-disk source store, so exact text stays recallable across runs.

Sources: ``agents/run_config.py`` (``ModelInputData``, ``CallModelData``, ``call_model_input_filter``) and
``agents/models/interface.py`` (``Model.get_response``) of openai-agents 0.24.0, read 2026-12-01.
"""
from __future__ import annotations

import json
import os
from typing import Any

from agents import FunctionTool, RunContextWrapper
from agents.models.interface import Model
from agents.run_config import CallModelData, ModelInputData

from snapglyph import SourceStore, compact, recall, recall_tool
from snapglyph.errors import SnapglyphError
from snapglyph.providers.overflow import detect

__all__ = ["InputFilter", "RecoveringModel"]


def _plain(item: Any) -> Any:
    """A Responses input item as plain JSON data (the SDK may hold pydantic objects)."""
    if hasattr(item, "model_dump"):
        return item.model_dump(exclude_none=True)
    return item


class InputFilter:
    """``RunConfig.call_model_input_filter`` that compacts each model call's input to a token budget.

    Parameters
    ----------
    store_path : str or os.PathLike
        JSONL file of this conversation's source store (created when absent); ``recall_messages`` answers from it.
    budget : int
        Most tokens one call may cost (reserved output included); lowered by :meth:`learn` on an overflow.
    profile : str
        Reader profile of the model (``openai``, ``claude``, ...).
    model : str, optional
        Model name used for page costs and output-token naming; default: the profile name.
    max_tokens : int, optional
        Output tokens reserved inside the budget.

    Attributes
    ----------
    last : CompactResult or None
        The last compaction (``None`` while every call fitted).

    Examples
    --------
    >>> import tempfile, os
    >>> f = InputFilter(os.path.join(tempfile.mkdtemp(), "s.jsonl"), budget=50_000)
    >>> f.budget
    50000
    """

    def __init__(self, store_path: str | os.PathLike, *, budget: int = 100_000, profile: str = "openai",
                 model: str | None = None, max_tokens: int | None = None) -> None:
        self.store = SourceStore(store_path)
        self.budget = int(budget)
        self.profile = profile
        self.model = model
        self.max_tokens = max_tokens
        self.last = None

    def compact_input(self, instructions: str | None, items: list) -> tuple[str | None, list]:
        """Compact Responses ``items`` (and ``instructions``) to the budget; returns them unchanged when they fit."""
        body: dict[str, Any] = {"model": self.model or self.profile, "input": [_plain(i) for i in items]}
        if instructions:
            body["instructions"] = instructions
        res = compact(body, profile=self.profile, dialect="responses", budget=self.budget, store=self.store,
                      model=self.model, max_tokens=self.max_tokens, recall_tool=True)
        if res.passthrough:
            return instructions, items
        self.last = res
        self.store.save()
        return res.request.get("instructions", instructions), res.request["input"]

    def __call__(self, data: CallModelData) -> ModelInputData:
        """Filter one call's input (the SDK's stored history is not changed)."""
        md = data.model_data
        instructions, items = self.compact_input(md.instructions, md.input)
        return ModelInputData(input=items, instructions=instructions)

    def learn(self, exc: BaseException) -> bool:
        """Lower the budget to the context window an overflow error names; ``True`` when ``exc`` is an overflow."""
        status = getattr(exc, "status_code", None)
        response = getattr(exc, "response", None)
        body = getattr(response, "text", None) or getattr(exc, "body", None)
        found = detect(status, body) if body is not None else None
        if found is None:
            return False
        limit = found.limit or found.prompt_tokens
        self.budget = min(self.budget, limit) if limit else self.budget * 3 // 4
        return True

    def recall_tool(self) -> FunctionTool:
        """The ``recall_messages`` tool answering from this filter's store (add it to ``Agent(tools=...)``)."""
        spec = recall_tool("responses")

        async def invoke(ctx: RunContextWrapper[Any], args: str) -> str:
            try:
                found = recall(self.store, json.loads(args or "{}").get("ids", ""))
            except (SnapglyphError, ValueError) as e:
                return f"error: {e}"
            return "\n\n".join(f"#{i}: {t}" for i, t in sorted(found.items())) or "no such message ids"

        return FunctionTool(name=spec["name"], description=spec["description"],
                            params_json_schema=spec["parameters"], on_invoke_tool=invoke, strict_json_schema=False)


class RecoveringModel(Model):
    """A model that, on a context-overflow error, lowers ``input_filter``'s budget and retries the call compacted.

    Parameters
    ----------
    inner : agents.models.interface.Model
        The model to call (e.g. ``OpenAIResponsesModel``).
    input_filter : InputFilter
        The filter given to ``RunConfig``; its budget is learned from the overflow.

    Examples
    --------
    >>> RecoveringModel.__name__
    'RecoveringModel'
    """

    def __init__(self, inner: Model, input_filter: InputFilter) -> None:
        self.inner = inner
        self.input_filter = input_filter

    async def get_response(self, system_instructions, input, *args, **kwargs):
        """Call ``inner``; on an overflow, compact to the learned budget and call once more."""
        try:
            return await self.inner.get_response(system_instructions, input, *args, **kwargs)
        except Exception as exc:  # a foreign SDK error: only a recognized overflow is handled
            if isinstance(input, str) or not self.input_filter.learn(exc):
                raise
        system_instructions, input = self.input_filter.compact_input(system_instructions, input)
        return await self.inner.get_response(system_instructions, input, *args, **kwargs)

    def stream_response(self, system_instructions, input, *args, **kwargs):
        """Streaming is passed through unchanged (the filter still compacts to the current budget)."""
        return self.inner.stream_response(system_instructions, input, *args, **kwargs)
