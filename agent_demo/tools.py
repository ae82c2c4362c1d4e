"""The demo agent's tools: read_file, list_dir, search, run_command confined to one workspace folder, and the
answer to ``recall_messages`` from a compaction's source store (:func:`recall_result`).

Every tool returns a :class:`ToolResult`; nothing raises into the loop. An unknown tool, bad arguments, a path
outside the workspace, a timeout or any failure becomes an error result the model can read (as simonw/llm's tool
loop does). Results longer than the cap are cut, and the result says so.

``run_command`` runs with the workspace as its working directory and a timeout; it is *not* a sandbox (the
command can still name absolute paths). The file tools resolve symlinks and refuse anything outside the workspace.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snapglyph.compaction.recall import format_recall
from snapglyph.errors import InputError, StoreError

__all__ = ["TOOL_SPECS", "ToolResult", "Workspace", "recall_result", "tool_definitions"]

#: Neutral tool definitions: ``{"name", "description", "parameters"}`` (JSON Schema).
TOOL_SPECS: list[dict] = [
    {"name": "read_file", "description": "Read a text file of the workspace (optionally a line range).",
     "parameters": {"type": "object", "properties": {
         "path": {"type": "string", "description": "path relative to the workspace"},
         "start": {"type": "integer", "description": "first line, 1-based (optional)"},
         "end": {"type": "integer", "description": "last line, inclusive (optional)"}},
         "required": ["path"]}},
    {"name": "list_dir", "description": "List a folder of the workspace (names; folders end with /).",
     "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "default ."}}}},
    {"name": "search", "description": "Search the workspace's text files for a regular expression; returns "
                                      "path:line: text for each match.",
     "parameters": {"type": "object", "properties": {
         "pattern": {"type": "string"}, "path": {"type": "string", "description": "folder, default ."}},
         "required": ["pattern"]}},
    {"name": "run_command", "description": "Run a shell command in the workspace folder (with a timeout); returns "
                                           "exit code, stdout and stderr.",
     "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
]


def tool_definitions(dialect: str, specs: list[dict] | None = None) -> list[dict]:
    """The tool definitions in a wire dialect (``"openai"`` chat completions or ``"anthropic"`` messages).

    Raises
    ------
    ValueError
        If the dialect is unknown.
    """
    specs = TOOL_SPECS if specs is None else specs
    if dialect == "openai":
        return [{"type": "function", "function": dict(s)} for s in specs]
    if dialect == "anthropic":
        return [{"name": s["name"], "description": s["description"], "input_schema": s["parameters"]}
                for s in specs]
    raise ValueError(f"unknown dialect {dialect!r}; use 'openai' or 'anthropic'")


@dataclass(frozen=True)
class ToolResult:
    """What a tool returns: ``text`` for the model, and whether it is an error."""

    text: str
    is_error: bool = False


class _ToolError(Exception):
    pass


def recall_result(store: Any, arguments: Any) -> ToolResult:
    """Answer a ``recall_messages`` call from ``store`` (the :class:`snapglyph.SourceStore` of a compaction).

    ``arguments`` is ``{"ids": "#3-#9, 12"}`` or its JSON text; the result is
    :func:`snapglyph.compaction.recall.format_recall` of those ids. Never raises: a malformed or unknown id, or
    arguments without ``ids``, is an error result.

    Examples
    --------
    >>> from snapglyph import Message, Part, SourceStore
    >>> store = SourceStore()
    >>> store.put([Message(3, "tool", [Part("text", text="2 failed")])])
    >>> recall_result(store, '{"ids": "#3"}').text
    '#3 tool\\n2 failed'
    >>> recall_result(store, {"ids": "9"})
    ToolResult(text='error: the source store has no source for message #9 (it holds #3-#3)', is_error=True)
    """
    try:
        args = json.loads(arguments or "{}") if isinstance(arguments, str) else arguments
        return ToolResult(format_recall(store, str(args["ids"])))
    except (InputError, StoreError) as e:                  # a malformed or unknown id
        return ToolResult(f"error: {e}", True)
    except (ValueError, TypeError, KeyError):               # no JSON object with "ids"
        return ToolResult('error: recall_messages needs "ids", e.g. {"ids": "12"} or {"ids": "#3-#9, 12"}', True)


class Workspace:
    """A workspace folder and the tools that act on it.

    Parameters
    ----------
    root : str or path
        The folder; it must exist.
    timeout : float
        Seconds a ``run_command`` may run before its process group is killed.
    max_result_chars : int
        Longest result, in characters, given back to the model; longer ones are cut and marked.

    Raises
    ------
    ValueError
        If ``root`` is not a folder.
    """

    def __init__(self, root: str | os.PathLike, *, timeout: float = 10.0, max_result_chars: int = 12_000) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ValueError(f"workspace {root!s} is not a folder")
        self.timeout = timeout
        self.max_result_chars = max_result_chars

    def _path(self, rel: Any) -> Path:
        if not isinstance(rel, str) or not rel:
            raise _ToolError("path must be a non-empty string")
        p = (self.root / rel).resolve()
        if p != self.root and self.root not in p.parents:
            raise _ToolError(f"path {rel!r} is outside the workspace")
        return p

    def cap(self, text: str) -> str:
        """``text`` cut to ``max_result_chars`` characters, with a note saying how much was shown, if longer."""
        n = len(text)
        if n <= self.max_result_chars:
            return text
        return (text[: self.max_result_chars]
                + f"\n[result cut: {self.max_result_chars} of {n} characters shown; ask for a narrower range]")

    def run(self, name: str, arguments: Any) -> ToolResult:
        """Run tool ``name`` with ``arguments`` (a dict, or its JSON text); never raises.

        Returns
        -------
        ToolResult
            The capped output, or an error result for an unknown tool, bad arguments, a path outside the
            workspace, a timeout or any other failure.
        """
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except ValueError as e:
                return ToolResult(f"error: arguments are not valid JSON: {e}", True)
        if not isinstance(arguments, dict):
            return ToolResult("error: arguments must be a JSON object", True)
        fn = {"read_file": self.read_file, "list_dir": self.list_dir, "search": self.search,
              "run_command": self.run_command}.get(name)
        if fn is None:
            return ToolResult(f"error: unknown tool {name!r}; available: read_file, list_dir, search, run_command",
                              True)
        try:
            return ToolResult(self.cap(fn(**arguments)))
        except _ToolError as e:
            return ToolResult(f"error: {e}", True)
        except TypeError as e:
            return ToolResult(f"error: bad arguments for {name}: {e}", True)
        except Exception as e:  # noqa: BLE001 - a failing tool is data for the model
            return ToolResult(f"error: {name} failed: {type(e).__name__}: {e}", True)

    def read_file(self, path: str, start: int | None = None, end: int | None = None) -> str:
        """Text of a workspace file, or of lines ``start..end`` (1-based, inclusive)."""
        p = self._path(path)
        if not p.is_file():
            raise _ToolError(f"no such file: {path}")
        text = p.read_text(encoding="utf-8", errors="replace")
        if start is not None or end is not None:
            lines = text.splitlines(keepends=True)
            text = "".join(lines[max(0, int(start or 1) - 1): int(end) if end is not None else None])
        return text

    def list_dir(self, path: str = ".") -> str:
        """Names in a workspace folder, sorted; folders end with ``/``."""
        p = self._path(path)
        if not p.is_dir():
            raise _ToolError(f"no such folder: {path}")
        return "\n".join(sorted(c.name + ("/" if c.is_dir() else "") for c in p.iterdir())) or "(empty)"

    def search(self, pattern: str, path: str = ".") -> str:
        """``path:line: text`` for every line matching the regular expression ``pattern`` (at most 200)."""
        try:
            rx = re.compile(pattern)
        except re.error as e:
            raise _ToolError(f"bad pattern: {e}") from None
        base = self._path(path)
        hits: list[str] = []
        for f in sorted(base.rglob("*") if base.is_dir() else [base]):
            if not f.is_file() or self.root not in f.resolve().parents:
                continue
            try:
                lines = f.read_text(encoding="utf-8").splitlines()
            except (UnicodeDecodeError, OSError):
                continue
            for i, line in enumerate(lines, 1):
                if rx.search(line):
                    hits.append(f"{f.relative_to(self.root)}:{i}: {line}")
                    if len(hits) >= 200:
                        return "\n".join(hits) + "\n[stopped at 200 matches]"
        return "\n".join(hits) or "(no matches)"

    def run_command(self, command: str) -> str:
        """Run ``command`` with ``sh -c`` in the workspace; exit code, stdout and stderr (timeout kills it)."""
        if not isinstance(command, str) or not command.strip():
            raise _ToolError("command must be a non-empty string")
        proc = subprocess.Popen(["sh", "-c", command], cwd=self.root, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise _ToolError(f"command timed out after {self.timeout:g} s and was killed") from None
        text = f"exit code {proc.returncode}\n"
        if out:
            text += "stdout:\n" + out.decode("utf-8", "replace")
        if err:
            text += ("\n" if out else "") + "stderr:\n" + err.decode("utf-8", "replace")
        return text
