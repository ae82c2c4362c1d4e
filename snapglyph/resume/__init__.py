"""Write a compacted conversation back as a session the agent itself resumes (``snapglyph compact --resume-file``).

The new session sits beside the source file, with a new session id: the head, one user turn holding the page
images and the snapshot text, and the tail, in the agent's own records; the agent's resume command is returned
with it. The source file is never modified. Claude Code (:mod:`.claude_code`), Codex (:mod:`.codex`), pi
(:mod:`.pi`) and Gemini CLI (:mod:`.gemini_cli`) are written; other formats are refused with a one-line
:class:`~snapglyph.errors.InputError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from .common import Resumed, snapshot_turn

__all__ = ["RESUME_DIALECTS", "Resumed", "check_writable", "snapshot_turn", "write_resume"]

#: The request dialect each writable format's session is built from (its agent's own wire).
RESUME_DIALECTS: dict[str, str | None] = {"claude-code": "anthropic", "codex": "responses", "pi": None,
                                          "gemini-cli": None}
"""None: any dialect (pi and Gemini CLI speak their model's provider's own; the snapshot's pages are read from
any)."""


def check_writable(transcript: Any) -> Path:
    """The source file of a session :func:`write_resume` can write back (checked before any compaction).

    Raises
    ------
    InputError
        A format no writer exists for, or a session that came from standard input or a folder.

    Examples
    --------
    >>> from snapglyph.readers.registry import load_text
    >>> try:
    ...     check_writable(load_text('[{"role": "user", "content": "hi"}]'))
    ... except InputError as e:
    ...     print(e)  # doctest: +NORMALIZE_WHITESPACE
    --resume-file writes Claude Code, Codex, pi and Gemini CLI sessions; this is openai, so there is no agent
    session to write
    """
    fmt = transcript.format
    if fmt not in RESUME_DIALECTS:
        raise InputError(f"--resume-file writes Claude Code, Codex, pi and Gemini CLI sessions; this is {fmt}, so "
                         "there is no agent session to write")
    src = transcript.meta.get("path")
    if not src or Path(src).is_dir():
        raise InputError("--resume-file needs the session's file (not standard input), to write the new one beside it")
    return Path(src)


def write_resume(transcript: Any, result: Any) -> Resumed:
    """Write ``result`` (a :class:`~snapglyph.compaction.result.CompactResult` of ``transcript``) as a new session
    of the transcript's agent, beside its source file.

    Parameters
    ----------
    transcript : Transcript
        The session read with :func:`snapglyph.readers.registry.load` (``meta["path"]`` names its file).
    result : CompactResult
        Its compaction in the agent's dialect (:data:`RESUME_DIALECTS`).

    Returns
    -------
    Resumed

    Raises
    ------
    InputError
        A format no writer exists for, a session read from standard input, a result in another dialect, or a
        result that shows no page.
    OSError
        Where the folder cannot be written.

    Examples
    --------
    >>> from snapglyph.readers.registry import load_text
    >>> try:
    ...     write_resume(load_text('[{"role": "user", "content": "hi"}]'), None)
    ... except InputError as e:
    ...     print(e)  # doctest: +NORMALIZE_WHITESPACE
    --resume-file writes Claude Code, Codex, pi and Gemini CLI sessions; this is openai, so there is no agent
    session to write
    """
    fmt, src = transcript.format, check_writable(transcript)
    if RESUME_DIALECTS[fmt] is not None and result.dialect != RESUME_DIALECTS[fmt]:
        raise InputError(f"--resume-file writes a {fmt} session from a {RESUME_DIALECTS[fmt]} request, not "
                         f"{result.dialect} (leave --dialect out)")
    if fmt == "claude-code":
        from .claude_code import write_claude_code
        return write_claude_code(transcript, result, src)
    if fmt == "pi":
        from .pi import write_pi
        return write_pi(transcript, result, src)
    if fmt == "gemini-cli":
        from .gemini_cli import write_gemini_cli
        return write_gemini_cli(transcript, result, src)
    from .codex import write_codex
    return write_codex(transcript, result, src)
