"""The one-line hint for a missing optional dependency: the pip command that installs the extra it belongs to.

snapglyph is installed from its repository (it is not on PyPI), so the hint is the editable install of the extra
from the repository's folder, as the README's install lines are.
"""

from __future__ import annotations

__all__ = ["extra_hint"]


def extra_hint(extra: str, missing: str | None = None) -> str:
    """The words of a missing extra's error: what is missing and the pip command, on one line.

    Parameters
    ----------
    extra : str
        The extra of pyproject.toml (``serve``, ``plot``, ``corpus``, ...).
    missing : str, optional
        The module that could not be imported.

    Examples
    --------
    >>> print("snapglyph serve needs " + extra_hint("serve", "anyio"))  # doctest: +NORMALIZE_WHITESPACE
    snapglyph serve needs the serve extra (module anyio is not installed): pip install -e '.[serve]' in the
    snapglyph repository
    """
    what = f" (module {missing} is not installed)" if missing else ""
    return f"the {extra} extra{what}: pip install -e '.[{extra}]' in the snapglyph repository"
