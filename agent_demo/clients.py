"""Provider clients of the loop, on the official SDKs: OpenAI chat completions and Anthropic messages.

Each client's ``send(body)`` returns a :class:`Reply` and never raises for a failed call: a failure is data, a
reply with ``error`` set and the HTTP status and raw body beside it, which the loop hands to
:func:`snapglyph.providers.overflow.detect` (as pi-mono's providers put the error on the assistant message).
Transient failures (connection errors, 408, 409, 429, 5xx) are retried by the SDKs themselves, with exponential
backoff and ``retry-after`` honored (``max_retries``; openai-python and anthropic-sdk-python READMEs, "Retries",
read 2026-12-04); an overflow is a 4xx, never retried blindly.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field

__all__ = ["AnthropicClient", "OpenAIClient", "Reply", "failed"]


def _sdk(name: str):
    """Import an official SDK, or stop with a one-line hint (the SDKs are the ``demo`` extra)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise SystemExit(f"agent_demo: the official {name} SDK is missing: pip install -e '.[demo]'") from None


@dataclass
class Reply:
    """One assistant answer, or a failed call.

    Attributes
    ----------
    message : dict or None
        The assistant message in the wire dialect, as it is stored and sent back (reasoning included); ``None``
        for a failed call.
    text : str
        Its visible text.
    tool_calls : list of (str, str, str)
        ``(call_id, name, arguments JSON text)`` for each tool call, in order.
    prompt_tokens : int or None
        Input tokens the provider reported (``usage.prompt_tokens`` / ``usage.input_tokens``).
    error : str or None
        Why the call (or the loop's recovery) failed, one line; ``None`` for an answer.
    status : int or None
        The HTTP status of a failed call (``None``: no answer, a connection failure).
    body : str
        The raw body of a failed call, as the provider sent it.

    Examples
    --------
    >>> failed(None, "Connection error.").error
    'provider error None: Connection error.'
    """

    message: dict | None = None
    text: str = ""
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    prompt_tokens: int | None = None
    error: str | None = None
    status: int | None = None
    body: str = ""


def failed(status: int | None, body: str) -> Reply:
    """A :class:`Reply` for a call that failed with ``status`` (``None``: no connection) and ``body`` text."""
    return Reply(error=f"provider error {status}: {' '.join(body[:300].split())}", status=status, body=body)


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
    max_retries : int
        The SDK's retries of transient failures.
    """

    def __init__(self, base_url: str, api_key: str = "sk-local", *, timeout: float = 120.0,
                 max_retries: int = 2) -> None:
        self._sdk = _sdk("openai")
        self.client = self._sdk.OpenAI(base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=timeout)

    def send(self, body: dict) -> Reply:
        """POST ``/chat/completions`` with ``body``; a failure is a :class:`Reply` with ``error`` set."""
        try:
            r = self.client.chat.completions.create(**body)
        except self._sdk.APIStatusError as e:
            return failed(e.status_code, e.response.text)
        except self._sdk.APIConnectionError as e:
            return failed(None, str(e))
        msg = r.choices[0].message
        stored = {k: v for k, v in msg.model_dump(exclude_none=True).items()
                  if k not in ("refusal", "annotations", "audio", "function_call")}
        stored.setdefault("content", None)
        calls = [(c.id, c.function.name, c.function.arguments or "{}") for c in (msg.tool_calls or [])]
        return Reply(stored, msg.content or "", calls, r.usage.prompt_tokens if r.usage is not None else None)


class AnthropicClient:
    """Anthropic messages through the ``anthropic`` SDK.

    Parameters
    ----------
    base_url : str
        E.g. ``https://api.anthropic.com`` or a simulator's ``http://127.0.0.1:PORT``.
    api_key : str
    timeout : float
        Seconds per request.
    max_retries : int
        The SDK's retries of transient failures.
    """

    def __init__(self, base_url: str, api_key: str = "sk-ant-local", *, timeout: float = 120.0,
                 max_retries: int = 2) -> None:
        self._sdk = _sdk("anthropic")
        self.client = self._sdk.Anthropic(base_url=base_url, api_key=api_key, max_retries=max_retries,
                                          timeout=timeout)

    def send(self, body: dict) -> Reply:
        """POST ``/v1/messages`` with ``body``; a failure is a :class:`Reply` with ``error`` set."""
        try:
            r = self.client.messages.create(**body)
        except self._sdk.APIStatusError as e:
            return failed(e.status_code, e.response.text)
        except self._sdk.APIConnectionError as e:
            return failed(None, str(e))
        blocks = [b.model_dump(exclude_none=True) for b in r.content]
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        calls = [(b["id"], b["name"], json.dumps(b.get("input", {}), ensure_ascii=False))
                 for b in blocks if b.get("type") == "tool_use"]
        return Reply({"role": "assistant", "content": blocks}, text, calls, r.usage.input_tokens)
