"""Image limits resolved inside compaction, before an error: the conversation's own images made to fit.

In this order, each only where the limit still breaks (:mod:`snapglyph.providers.limits` says what the limits are):

1. too many images: the oldest become a short text placeholder naming their size (the newest are kept);
2. an image above the bytes per image, or above the side allowed (the many-image rule's 2000 px once a request
   holds more than 20 images on Claude, else the hard side limit): a new PNG/JPEG of the allowed size, made from
   the image's own source bytes (:func:`snapglyph.model.images.downscale`), never from an earlier page or an
   earlier downscaled copy (the source store keeps the original, and every pass starts from it);
3. an image that cannot be made to fit (its bytes do not decode): a placeholder too.

It runs twice: on the whole conversation before the cut (``extra=None``: the count, the bytes and the hard side;
the request's final image count is not known yet), and on the head and tail once the pages are chosen (``extra``
pages beside them), where the many-image rule is decided on the request's real count: a request whose pages
take it past 20 images keeps its pages and downscales the conversation's oversized images instead.
Every change is counted as a rewrite, in the counter returned beside the messages. Pages are never among these
images: they are made to the profile's size, which :class:`~snapglyph.providers.profiles.Profile` checks against
the many-image side.

:func:`fit_request_bytes` resolves the request's byte budget (:func:`snapglyph.providers.limits.byte_budget`, which
the pages and the conversation's own images share) in the passthrough and beside the pages: while the body is over
it, the oldest own image is made smaller from its source bytes (where a smaller copy saves what is missing) or
replaced by a placeholder naming it; its source stays in the store. Only a body whose text alone is over the budget
is left to :class:`~snapglyph.errors.LimitError`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Sequence

from ..model.images import downscale
from ..model.messages import Message, Part, images_in
from ..providers.limits import byte_budget, image_target, images_over

if TYPE_CHECKING:  # pragma: no cover
    from ..providers.profiles import Profile

__all__ = ["fit_image_limits", "fit_request_bytes"]


def _placeholder(p: Part, why: str) -> Part:
    size = f"{p.width}x{p.height} " if p.width and p.height else ""
    return Part("text", text=f"[image not sent: {size}{p.media_type or 'image'}, {p.nbytes:,} bytes; {why}]")


def _map_images(messages: Sequence[Message], fn) -> list[Message]:
    """``messages`` with each image part ``q`` (tool results' included, in order) replaced by ``fn(k, q)``; the
    messages and parts that do not change are shared, the input is not modified."""
    k = 0
    out = []
    for m in messages:
        parts, changed = [], False
        for p in m.parts:
            if p.kind == "image":
                q = fn(k, p)
                k += 1
            elif p.kind == "tool_result" and any(c.kind == "image" for c in p.content):
                content = []
                for c in p.content:
                    content.append(fn(k, c) if c.kind == "image" else c)
                    k += c.kind == "image"
                q = replace(p, content=content) if any(a is not b for a, b in zip(content, p.content)) else p
            else:
                q = p
            changed = changed or q is not p
            parts.append(q)
        out.append(replace(m, parts=parts) if changed else m)
    return out


def fit_image_limits(messages: Sequence[Message], prof: "Profile", *,
                     extra: int | None = 0) -> tuple[list[Message], Counter]:
    """The conversation with its images within ``prof``'s limits: oldest dropped, oversized ones downscaled.

    Parameters
    ----------
    messages : sequence of Message
        Normalized messages (not modified).
    prof : Profile
    extra : int or None
        Images the request carries beside ``messages`` (its pages), counted for the image count and the
        many-image rule; ``None`` when the request's count is not known yet: the many-image rule is then left
        to a later call, and only the count, the bytes and the hard side limit are met.

    Returns
    -------
    (list of Message, collections.Counter)
        The messages (unchanged ones are the same objects) and each change counted by kind.

    Examples
    --------
    >>> from snapglyph.providers.profiles import profile
    >>> png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="
    >>> msgs = [Message(0, "user", [Part("image", media_type="image/png", data=png, width=1, height=1)] * 102)]
    >>> out, rw = fit_image_limits(msgs, profile("claude"))
    >>> [p.kind for p in out[0].parts[:3]], len(images_in(out)), dict(rw)
    (['text', 'text', 'image'], 100, {'oldest images replaced by a placeholder for the image count limit': 2})
    """
    rewrites: Counter = Counter()
    own = len(images_in(messages))
    drop = min(own, images_over(prof, own + (extra or 0)))
    n = own - drop + extra if extra is not None else 0  # 0: below any many-image threshold
    why_dropped = (f"the request keeps the newest {own - drop} images beside {extra} pages (profile {prof.name} "
                   f"allows {prof.max_images})" if extra else
                   f"the request keeps the newest {prof.max_images} images (profile {prof.name})")

    def fit(k: int, q: Part) -> Part:
        if k < drop:
            rewrites["oldest images replaced by a placeholder for the image count limit"] += 1
            return _placeholder(q, why_dropped)
        side, nbytes = image_target(prof, n)
        too_big = side is not None and max(q.width or 0, q.height or 0) > side
        if not q.data or not (too_big or len(q.data) > nbytes):
            return q
        small = downscale(q.data, max_side=side, max_b64_bytes=nbytes)
        if small is None:
            rewrites["images over a provider limit that could not be downscaled replaced by a placeholder"] += 1
            return _placeholder(q, f"over profile {prof.name}'s image limits and not readable to downscale")
        rewrites["images downscaled to a provider limit"] += 1
        data, media_type, w, h = small
        return replace(q, data=data, media_type=media_type, width=w, height=h,
                       meta={**q.meta, "downscaled_from": [q.width, q.height, len(q.data)]})

    return _map_images(messages, fit), rewrites


def _smaller(q: Part, over: int, prof: "Profile", rewrites: Counter) -> Part:
    """``q`` made ``over`` bytes (base64) smaller from its own bytes where a copy of at least half its size does it,
    else the placeholder; counted."""
    have = len(q.data or "")
    want = have - over - 1024  # a little below, so one step is enough
    small = downscale(q.data, max_side=None, max_b64_bytes=want) if q.data and want >= have // 2 else None
    if small is None:
        rewrites["oldest images replaced by a placeholder for the request's byte budget"] += 1
        return _placeholder(q, f"the request keeps within profile {prof.name}'s budget of "
                               f"{byte_budget(prof):,} bytes")
    rewrites["oldest images made smaller for the request's byte budget"] += 1
    data, media_type, w, h = small
    return replace(q, data=data, media_type=media_type, width=w, height=h,
                   meta={**q.meta, "downscaled_from": [q.width, q.height, len(q.data)]})


def fit_request_bytes(messages: Sequence[Message], prof: "Profile",
                      size_of: "Callable[[list[Message]], int]") -> tuple[list[Message], Counter]:
    """The conversation with its oldest own images made smaller or left out until its request fits the byte budget.

    Parameters
    ----------
    messages : sequence of Message
        Normalized messages (not modified); images whose ``meta`` holds ``"page"`` (snapglyph's pages) are left as
        they are.
    prof : Profile
    size_of : callable
        ``size_of(messages) -> int``: the bytes of the request body built from the messages (pages beside them
        included).

    Returns
    -------
    (list of Message, collections.Counter)
        The messages (the same list where the request already fits) and each change counted by kind.

    Examples
    --------
    >>> import base64, io, json
    >>> from PIL import Image
    >>> from snapglyph.providers.profiles import profile
    >>> buf = io.BytesIO(); Image.effect_noise((600, 600), 60).save(buf, format="PNG")
    >>> shot = Part("image", media_type="image/png", data=base64.b64encode(buf.getvalue()).decode(), width=600,
    ...             height=600)
    >>> msgs = [Message(i, "user", [shot]) for i in range(3)]
    >>> size = lambda ms: len(json.dumps([p.data for m in ms for p in m.parts if p.kind == "image"]))
    >>> tight = replace(profile("claude"), max_request_bytes=2 * len(shot.data))
    >>> out, rw = fit_request_bytes(msgs, tight, size)
    >>> [p.kind for m in out for p in m.parts], size(out) <= tight.max_request_bytes, sorted(rw.values())
    (['text', 'image', 'image'], True, [1, 1])
    >>> [k.split(" for")[0] for k in sorted(rw)]  # the oldest left out, the next smaller for the JSON around them
    ['oldest images made smaller', 'oldest images replaced by a placeholder']
    """
    rewrites: Counter = Counter()
    out = list(messages)
    if not any((q.data or q.url) and q.meta.get("page") is None for q in images_in(out)):
        return out, rewrites  # no own image to make smaller: the body is not even measured
    limit = byte_budget(prof)
    for _ in range(4):  # a step frees what it measured; a rerun only for JSON escapes the count did not see
        over = size_of(out) - limit
        if over <= 0:
            break
        state = {"over": over}

        def fit(k: int, q: Part) -> Part:
            if state["over"] <= 0 or q.meta.get("page") is not None or not (q.data or q.url):
                return q
            new = _smaller(q, state["over"], prof, rewrites)
            state["over"] -= len(q.data or q.url) - len(new.data or new.text or "")
            return new

        out = _map_images(out, fit)
    return out, rewrites
