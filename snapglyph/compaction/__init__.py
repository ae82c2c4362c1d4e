"""Stage 3, reconstruction: head verbatim, middle as page images, tail verbatim, inside a token budget.

- :mod:`.compactor`    :func:`compact`: the algorithm over the steps below.
- :mod:`.estimate`     token estimate of messages and pages for one profile.
- :mod:`.snapshot_message` the snapshot message (page images, then the text naming the ids shown).
- :mod:`.tail_paging`  oversized outputs of the newest messages shown as pages.
- :mod:`.second_pass`  compacting a compacted request: the conversation key and the source behind it.
- :mod:`.store`        the source store: retained source of every message shown as pages.
- :mod:`.recall`       exact source by message id, and the recall tool definition.
- :mod:`.tiers`        free tiers below the snapshot (omission, image drop) and the ladder over all tiers.
"""
