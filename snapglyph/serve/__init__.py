"""``snapglyph serve``: a local proxy that keeps any agent alive through "context too long", offline.

Point an agent at it (``ANTHROPIC_BASE_URL=http://127.0.0.1:8787`` or ``OPENAI_BASE_URL=http://127.0.0.1:8787/v1``):
requests pass through untouched while they fit; one the provider refuses as too long is compacted with snapglyph
and sent again, and later requests of that conversation are compacted the same way (sticky, cache-stable pages).

Modules: :mod:`.app` (the ASGI application), :mod:`.planner` (when and how to compact), :mod:`.rewrite` (request
bodies), :mod:`.relay` (responses, streams), :mod:`.state` (the state folder), :mod:`.upstream` (headers, client),
:mod:`.run` (start-up checks and uvicorn). Needs the ``serve`` extra: ``pip install -e '.[serve]'`` in the
repository.
"""

from __future__ import annotations

__all__ = ["ServeConfig", "create_app", "serve"]


def __getattr__(name: str):
    if name in ("ServeConfig", "create_app"):
        from . import app
        return getattr(app, name)
    if name == "serve":
        from .run import serve
        return serve
    raise AttributeError(f"module 'snapglyph.serve' has no attribute {name!r}")
