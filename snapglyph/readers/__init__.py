"""Stage 0, reading: transcript files and request bodies -> neutral messages.

- :mod:`.registry`   :func:`load` and :func:`load_text`: parse the input once, read it with the table's first claim.
- :mod:`.table`      the formats, one ``ReaderSpec(name, detect, read, info)`` row each, in detection order.
- :mod:`.decode`     a file's bytes as text and JSON: the binary check, UTF-8, JSON errors, JSON lines repairs.
- :mod:`.requests`   OpenAI chat completions and SWE-agent ``.traj`` bodies; dialect detection, tool definitions.
- :mod:`.anthropic`  Anthropic messages bodies, and the Anthropic content blocks other readers hold.
- :mod:`.responses`  OpenAI Responses requests.
- :mod:`.gemini_api` Gemini API ``generateContent`` bodies.
- :mod:`.claude_code` Claude Code session JSONL.
- :mod:`.pi`         pi coding-agent session JSONL.
- :mod:`.aider`      aider's markdown chat history.
- :mod:`.codex`      OpenAI Codex CLI rollouts.
- :mod:`.gemini_cli` Gemini CLI sessions (legacy JSON and the JSONL append log).
- :mod:`.cline`      Cline and Roo Code ``api_conversation_history.json``.
- :mod:`.openhands`  OpenHands SDK event folders and V0 trajectories.
- :mod:`.textfile`   a plain text file as a document streamed from disk.
- :mod:`.formats`    the table as ``snapglyph formats`` prints it and the README lists it.
- :mod:`.common`     what a reader returns (``ReadResult``) and helpers shared by the readers.
"""
