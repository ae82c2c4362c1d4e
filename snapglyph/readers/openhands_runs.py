"""OpenHands files that hold several conversations, or one as JSON lines: evaluation outputs and event slices.

- An evaluation output (``evaluation/evaluation_outputs/.../output.jsonl`` of github.com/All-Hands-AI/OpenHands,
  ``EvalOutput`` in ``evaluation/utils/shared.py``, read 2026-12-07; and the SDK benchmarks' ``output.jsonl``) holds
  one line per instance: ``{"instance_id", "instruction", "history": [events], "metadata": {"llm_config":
  {"model"}}, "metrics", "error", ...}``, ``history`` the V0 events or the SDK's (V1) events. Each line is one
  conversation (:func:`split_eval`); the last is read by default.
- An SDK event slice as JSON lines (one V1 event a line, as the SDK's ``events/event-*.json`` files hold them) is
  read as the conversation folder would be.
"""

from __future__ import annotations

from typing import Any

from .openhands import is_openhands_events, is_openhands_trajectory

__all__ = ["eval_history", "eval_model", "is_eval_output", "label_eval", "split_eval"]


def eval_history(doc: Any) -> list | None:
    """The events of one evaluation line (or of any object holding OpenHands events under ``history``), else
    None.

    Examples
    --------
    >>> eval_history({"instance_id": "x", "history": [{"id": "e", "kind": "MessageEvent", "source": "user"}]})[0]["id"]
    'e'
    """
    h = doc.get("history") if isinstance(doc, dict) else None
    return h if (is_openhands_trajectory(h) or is_openhands_events(h)) else None


def is_eval_output(entries: list[dict]) -> bool:
    """Whether JSON lines are an OpenHands evaluation output: every line holds OpenHands events under ``history``
    and names its ``instance_id``.

    Examples
    --------
    >>> is_eval_output([{"instance_id": "a", "history": [{"id": 0, "source": "user", "action": "message"}]}])
    True
    >>> is_eval_output([{"history": []}])
    False
    """
    return bool(entries) and all("instance_id" in e and eval_history(e) is not None for e in entries)


def split_eval(entries: list[dict]) -> list[list[dict]]:
    """One conversation a line.

    Examples
    --------
    >>> len(split_eval([{"instance_id": "a"}, {"instance_id": "b"}]))
    2
    """
    return [[e] for e in entries]


def label_eval(part: list[dict]) -> str:
    """A conversation's label in notes and errors: ``instance <id>``.

    Examples
    --------
    >>> label_eval([{"instance_id": "django__django-11099"}])
    'instance django__django-11099'
    """
    return f"instance {part[0].get('instance_id')}" if part else "instance ?"


def eval_model(doc: dict) -> str | None:
    """The model an evaluation line's ``metadata.llm_config`` names, else None.

    Examples
    --------
    >>> eval_model({"metadata": {"llm_config": {"model": "litellm_proxy/claude-sonnet-4-5"}}})
    'litellm_proxy/claude-sonnet-4-5'
    """
    cfg = (doc.get("metadata") or {}).get("llm_config") if isinstance(doc.get("metadata"), dict) else None
    model = cfg.get("model") if isinstance(cfg, dict) else None
    return model if isinstance(model, str) and model else None
