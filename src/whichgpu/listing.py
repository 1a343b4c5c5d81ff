"""Shortened lists that say what they leave out: "a, b, c and 4 more", never a silent cut."""

from __future__ import annotations

from collections.abc import Sequence


def join_some(items: Sequence[str], n: int = 4, sep: str = ", ") -> str:
    """The first ``n`` items joined, and "and N more" when some are left out."""
    items = list(items)
    shown = sep.join(items[:n])
    rest = len(items) - n
    return f"{shown} and {rest} more" if rest > 0 else shown


def more_line(total: int, shown: int, what: str = "more", hint: str = "") -> str | None:
    """'... and 12 more (--json lists all)' when ``shown`` < ``total``, else None."""
    rest = total - shown
    if rest <= 0:
        return None
    return f"... and {rest} {what}" + (f" ({hint})" if hint else "")
