"""Stage 0, reading: transcript files and request bodies -> neutral messages.

- :mod:`.registry`   :func:`load` and :func:`load_text`: detect the format and dispatch to one reader.
- :mod:`.requests`   OpenAI chat completions, Anthropic messages and SWE-agent ``.traj`` bodies.
- :mod:`.responses`  OpenAI Responses requests.
- :mod:`.sessions`   Claude Code and pi session JSONL.
- :mod:`.aider`      aider's markdown chat history.
- :mod:`.codex`      OpenAI Codex CLI rollouts.
- :mod:`.gemini_cli` Gemini CLI sessions (legacy JSON and the JSONL append log).
- :mod:`.cline`      Cline and Roo Code ``api_conversation_history.json``.
- :mod:`.openhands`  OpenHands SDK event folders and V0 trajectories.
- :mod:`.common`     helpers shared by the readers (image parts, JSON arguments, id numbering).
"""
