"""Stage 1, the data model: provider-neutral messages and the styled character stream drawn from them.

- :mod:`.messages`  ``Message(id, role, parts)`` and ``Part``: the one shape every reader produces.
- :mod:`.document`  messages -> :class:`~snapglyph.model.document.Document`, segments of styled text (role headers
  with message ids, tool calls, dim tool results, placeholders for images and blobs).
"""
