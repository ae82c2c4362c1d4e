"""What ``load()`` reads: one line per format, with where such a file usually lives (``snapglyph formats``).

Kept apart from :mod:`snapglyph.readers.registry` (which detects the formats) so the CLI can list them without
importing the readers; ``tests/test_agent_readers.py`` checks the names against ``registry.FORMATS``.
"""

from __future__ import annotations

__all__ = [
    "FORMAT_INFO",
    "formats_table",
]

#: ``format -> (what it is, an example path)``, in the order ``snapglyph formats`` prints them.
FORMAT_INFO: dict[str, tuple[str, str]] = {
    "claude-code": ("Claude Code session JSONL", "~/.claude/projects/<project>/<session id>.jsonl"),
    "codex": ("OpenAI Codex CLI rollout JSONL", "~/.codex/sessions/2026/05/11/rollout-2026-05-11T11-26-55-<id>.jsonl"),
    "gemini-cli": ("Gemini CLI session (JSON, or the JSONL append log)",
                   "~/.gemini/tmp/<project hash>/chats/session-2026-04-23T12-53-<id>.jsonl"),
    "cline": ("Cline / Roo Code task history",
              "~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/<task id>/api_conversation_history.json"),
    "openhands": ("OpenHands conversation folder (SDK events) or V0 trajectory JSON",
                  "~/.openhands/conversations/<conversation id>/  (holds events/event-*.json)"),
    "pi": ("pi coding-agent session JSONL", "~/.pi/agent/sessions/<cwd>/<timestamp>_<id>.jsonl"),
    "aider": ("aider markdown chat history", "<repo>/.aider.chat.history.md"),
    "swe-agent": ("SWE-agent trajectory", "trajectories/<user>/<run>/<instance>/<instance>.traj"),
    "openai": ("OpenAI chat completions request, or a message list (JSON or JSONL)", "request.json"),
    "anthropic": ("Anthropic messages request body", "request.json"),
    "responses": ("OpenAI Responses request (instructions, input items)", "request.json"),
    "gemini": ("Gemini API generateContent request body", "request.json"),
    "text": ("any other text (render only)", "notes.txt, build.log, -  (standard input)"),
}


def formats_table() -> str:
    """The formats ``load()`` detects, one per line: name, what it is, an example path.

    Returns
    -------
    str
        Aligned columns with a header line, ending without a newline.

    Examples
    --------
    >>> print(formats_table().splitlines()[0])
    format       reads                                                              example path
    """
    w = max(len(d) for d, _ in FORMAT_INFO.values())
    lines = [f"{'format':<12} {'reads':<{w}} example path"]
    lines += [f"{name:<12} {desc:<{w}} {example}" for name, (desc, example) in FORMAT_INFO.items()]
    return "\n".join(lines)
