"""The visible text of a page after an anchor, tags stripped and spaces folded, for tests that
read one answer block of a served page."""

from __future__ import annotations

import re


def text_after(html: str, anchor: str, span: int) -> str:
    """The text of ``html`` from ``anchor`` over ``span`` characters of markup (the anchor
    must be there)."""
    i = html.find(anchor)
    assert i >= 0, anchor
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html[i:i + span]))
