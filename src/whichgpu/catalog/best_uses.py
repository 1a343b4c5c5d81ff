"""What the articles say each GPU is best for (S4, S5, S7, S8, S12, S23, S24, S27, S29)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class BestUse:
    gpu: str
    source: str
    en: str
    fr: str

    def text(self, lang: str = "en") -> str:
        return self.fr if lang == "fr" else self.en


@cache
def _all() -> tuple[BestUse, ...]:
    text = resources.files("whichgpu.catalog").joinpath("data/best_uses.toml").read_text("utf-8")
    return tuple(BestUse(**u) for u in tomllib.loads(text)["use"])


def best_uses(gpu_id: str) -> list[BestUse]:
    """The article statements about one catalog GPU, in file order."""
    return [u for u in _all() if u.gpu == gpu_id]
