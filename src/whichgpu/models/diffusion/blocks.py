"""Parameter counts of the blocks diffusion models share (a linear layer, a GroupNorm + conv
ResNet block), used by the pipelines' formulas (models/diffusion/__init__.py) and the VAEs'
(models/diffusion/vaes.py)."""

from __future__ import annotations


def lin(fin: int, fout: int, bias: bool = True) -> int:
    """A linear layer's weights (and bias)."""
    return fin * fout + (fout if bias else 0)


def resnet(cin: int, cout: int, temb: int | None, k: int = 9) -> int:
    """A GroupNorm + conv ResNet block; ``k`` is the kernel volume (9 for 3x3, 27 for 3x3x3)."""
    p = 2 * cin + cin * cout * k + cout + 2 * cout + cout * cout * k + cout
    if temb:
        p += temb * cout + cout
    if cin != cout:
        p += cin * cout + cout
    return p
