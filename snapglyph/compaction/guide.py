"""The reading guide: a short, fixed text that tells the model what the page images are and how to read them.

It follows the ranges line of the snapshot text (:mod:`snapglyph.model.snapshot_text`). Rules it keeps:

- at most about 120 tokens (:func:`reading_guide` texts are about 119 cl100k tokens; a test holds them at most 120);
- identical on every pass for the same layout and recall tool (no counts, ids or dates), so a provider's prompt
  cache of a repeated snapshot message holds;
- neutral wording: it names the conversation's messages and tool output, never hidden reasoning (one agent's
  archive preamble that named "assistant reasoning" made a model refuse every later request);
- it says where exact values come from: the text below (the identifier ledger, the user's messages) or a recall by
  message id, never the pixels.

The conventions it names are the renderer's (:mod:`snapglyph.raster.render`): the inverted ``#id role`` label, the
newline mark (:data:`snapglyph.raster.atlas.NEWLINE_MARKER`), tool output in grey, tool calls drawn decoded
(:mod:`snapglyph.model.tool_calls`), the code and logs of the ``auto`` layout (:mod:`snapglyph.raster.blocks`: as
flow, each line whole, its indentation at half width; the rare column bands) and the continuation mark of a wrapped
line (:data:`snapglyph.raster.atlas.CONT_MARK`).
"""

from __future__ import annotations

from ..raster.atlas import CONT_MARK, NEWLINE_MARKER

__all__ = ["reading_guide"]


def reading_guide(recall_tool: str | None = None) -> str:
    """The reading guide for a snapshot message.

    Parameters
    ----------
    recall_tool : str, optional
        Name of the tool in the request that returns a message's exact text by id; without one, the guide says to
        name the message id.

    Returns
    -------
    str
        One paragraph; the same for the same arguments.

    Examples
    --------
    >>> print(reading_guide("recall_messages"))  # doctest: +NORMALIZE_WHITESPACE
    The pages above show earlier messages of this conversation, oldest first, in reading order. Each opens with an
    inverted "#id role" label; ↵ marks a line break; grey text is tool output; "-> name key=value" is a tool call
    (long arguments follow under "key:"). Code keeps its lines whole; columns read down, then across; ↪ continues
    a wrapped line. Pixels can be misread: take exact values (hashes, ids, paths, numbers) from the text below, or
    get a message's exact text by id with recall_messages.
    """
    how = (f"get a message's exact text by id with {recall_tool}." if recall_tool
           else "ask for a message's exact text by its id (#id).")
    return ("The pages above show earlier messages of this conversation, oldest first, in reading order. Each opens "
            f"with an inverted \"#id role\" label; {chr(NEWLINE_MARKER)} marks a line break; grey text is tool "
            "output; \"-> name key=value\" is a tool call (long arguments follow under \"key:\"). Code keeps its "
            f"lines whole; columns read down, then across; {chr(CONT_MARK)} continues a wrapped line. "
            "Pixels can be misread: take exact values (hashes, ids, paths, numbers) from the text "
            "below, or " + how)
