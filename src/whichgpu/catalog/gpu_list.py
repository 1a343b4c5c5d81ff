"""Several cards in one machine, as ``--gpu`` names them: ``rtx-5090,rtx-3090``.

The spelling: cards separated by commas, in the order the machine numbers them (CUDA0 first,
the order llama.cpp and vLLM use them); ``N x NAME`` (``2xrtx-3090``, ``2 x rtx-3090``, the
way answers write a count) stands for N of one card, and a repeated name counts again, so
``2xrtx-3090,rtx-4090`` and ``rtx-3090,rtx-3090,rtx-4090`` are one machine. Each name is
forgiving as a single ``--gpu`` is (a catalog id, a family, or a bare size such as 24GB); an
unknown one is refused with the closest catalog ids.
"""

from __future__ import annotations

import re

from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.messages import Field, msg

#: The most cards one machine takes here (a server holds 8-10 double-width cards; risers 16).
MAX_CARDS = 16
_COUNT = re.compile(r"\s*(\d+)\s*[x×*]\s*(\S.*?)\s*", re.I)


def is_gpu_list(text: str | None) -> bool:
    """Whether a ``--gpu`` value names several cards (a comma, or a count such as 2xrtx-3090)
    rather than one card."""
    if not text:
        return False
    return "," in text or _COUNT.fullmatch(text) is not None


def parse_gpu_list(text: str) -> tuple[GPU, ...]:
    """The cards of ``rtx-5090,rtx-3090`` or ``2xrtx-3090,rtx-4090``, in the order given."""
    from whichgpu.catalog.user_gpu import resolve_gpu_arg

    items = [p.strip() for p in str(text).split(",")]
    if any(not p for p in items):
        raise InputError(msg("gpu_list.empty", "{field} {v!r}: an empty card between commas; "
                             "write the cards like rtx-5090,rtx-3090 or 2xrtx-3090,rtx-4090",
                             field=Field("gpu"), v=text))
    cards: list[GPU] = []
    for item in items:
        count, name = 1, item
        m = _COUNT.fullmatch(item)
        if m is not None:
            count, name = int(m.group(1)), m.group(2)
            if count < 1:
                raise InputError(msg("gpu_list.count", "{field} {v!r}: a count must be 1 or "
                                     "more", field=Field("gpu"), v=item))
        if count > MAX_CARDS:
            raise InputError(msg("gpu_list.too_many", "{field}: at most {n} cards in one "
                                 "machine", field=Field("gpu"), n=MAX_CARDS))
        res = resolve_gpu_arg(name)
        assert res is not None  # a non-empty name resolves or raises
        cards.extend([res.gpu] * count)
        if len(cards) > MAX_CARDS:
            raise InputError(msg("gpu_list.too_many", "{field}: at most {n} cards in one "
                                 "machine", field=Field("gpu"), n=MAX_CARDS))
    return tuple(cards)


def all_same(cards: tuple[GPU, ...]) -> bool:
    """Whether every card is the same catalog GPU (then ``N x GPU`` answers it)."""
    return len({g.id for g in cards}) == 1


def describe_cards(cards: tuple[GPU, ...]) -> str:
    """``rtx-5090 + 2 x rtx-3090`` in the order given (runs of one card counted)."""
    parts: list[str] = []
    run: list[GPU] = []
    for g in (*cards, None):
        if run and (g is None or g.id != run[0].id):
            parts.append(run[0].id if len(run) == 1 else f"{len(run)} x {run[0].id}")
            run = []
        if g is not None:
            run.append(g)
    return " + ".join(parts)
