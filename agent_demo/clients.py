"""Provider clients of the loop, on the official SDKs: OpenAI chat completions and Anthropic messages.

Each client's ``send(body)`` returns a :class:`Reply` or raises :class:`CallFailed` carrying the HTTP status and
the raw body text, so the loop can hand both to :func:`snapglyph.providers.overflow.detect`. SDK retries are off: the loop
retries transient failures itself and never retries an overflow blindly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AnthropicClient", "CallFailed", "OpenAIClient", "Reply"]

_TRANSIENT = {408, 409, 429, 500, 502, 503, 504, 529}


def _sdk(name: str):
    """Import an official SDK, or stop with a one-line hint (the SDKs are the ``demo`` extra)."""
    import importlib
    try:
        return importlib.import_module(name)
    except ImportError:
        raise SystemExit(f"agent_demo: the official {name} SDK is missing: pip install -e '.[demo]'") from None


class CallFailed(Exception):
    """An HTTP-level failure: ``status`` (int or None for a connection failure), ``body`` (text), ``transient``."""

    def __init__(self, status: int | None, body: str) -> None:
        super().__init__(f"{status}: {body[:300]}")
        self.status = status
        self.body = body
        self.transient = status is None or status in _TRANSIENT


@dataclass
class Reply:
    """One assistant answer.

    Attributes
    ----------
    message : dict
        The assistant message in the wire dialect, as it is stored and sent back (reasoning included).
    text : str
        Its visible text.
    tool_calls : list of (str, str, str)
        ``(call_id, name, arguments JSON text)`` for each tool call, in order.
    prompt_tokens : int or None
        Input tokens the provider reported (``usage.prompt_tokens`` / ``usage.input_tokens``).
    """

    message: dict
    text: str = ""
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    prompt_tokens: int | None = None


class OpenAIClient:
    """OpenAI chat completions (any OpenAI-compatible server) through the ``openai`` SDK.

    Parameters
    ----------
    base_url : str
        E.g. ``http://127.0.0.1:8000/v1``.
    api_key : str
        Sent as the bearer token (local servers accept any value).
    timeout : float
        Seconds per request.
    """

    def __init__(self, base_url: str, api_key: str = "sk-local", *, timeout: float = 120.0) -> None:
        openai = _sdk("openai")
        self._openai = openai
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout)

    def send(self, body: dict) -> Reply:
        """POST ``/chat/completions`` with ``body``; see the module docstring for errors."""
        o = self._openai
        try:
            r = self.client.chat.completions.create(**body)
        except o.APIStatusError as e:
            raise CallFailed(e.status_code, e.response.text) from None
        except o.APIConnectionError as e:
            raise CallFailed(None, str(e)) from None
        msg = r.choices[0].message
        stored = msg.model_dump(exclude_none=True)
        stored = {k: v for k, v in stored.items() if k not in ("refusal", "annotations", "audio", "function_call")}
        if "content" not in stored:
            stored["content"] = None
        calls = [(c.id, c.function.name, c.function.arguments or "{}") for c in (msg.tool_calls or [])]
        prompt = r.usage.prompt_tokens if r.usage is not None else None
        return Reply(stored, msg.content or "", calls, prompt)


class AnthropicClient:
    """Anthropic messages through the ``anthropic`` SDK.

    Parameters
    ----------
    base_url : str
        E.g. ``https://api.anthropic.com`` or a simulator's ``http://127.0.0.1:PORT``.
    api_key : str
    timeout : float
        Seconds per request.
    """

    def __init__(self, base_url: str, api_key: str = "sk-ant-local", *, timeout: float = 120.0) -> None:
        anthropic = _sdk("anthropic")
        self._anthropic = anthropic
        self.client = anthropic.Anthropic(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout)

    def send(self, body: dict) -> Reply:
        """POST ``/v1/messages`` with ``body``; see the module docstring for errors."""
        a = self._anthropic
        try:
            r = self.client.messages.create(**body)
        except a.APIStatusError as e:
            raise CallFailed(e.status_code, e.response.text) from None
        except a.APIConnectionError as e:
            raise CallFailed(None, str(e)) from None
        blocks = [b.model_dump(exclude_none=True) for b in r.content]
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        calls = [(b["id"], b["name"], _dumps(b.get("input", {}))) for b in blocks if b.get("type") == "tool_use"]
        return Reply({"role": "assistant", "content": blocks}, text, calls, r.usage.input_tokens)


def _dumps(obj: Any) -> str:
    import json
    return json.dumps(obj, ensure_ascii=False)
