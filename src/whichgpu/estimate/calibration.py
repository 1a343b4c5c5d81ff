"""What the speed model needs from a calibration profile (bench/profile.py writes them).

A profile measured on real cards rescales their compute and bandwidth and may replace the
assumed link between them; it speaks only for the GPUs it measured.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Calibration(Protocol):
    """A calibration profile as the speed model reads it."""

    def entries(self, gpu_id: str) -> list[dict[str, Any]]:
        """The measurements of the GPUs of this catalog id (empty: not measured)."""
        ...

    def scales_for(self, gpu_id: str, ref_matmul: float,
                   ref_bandwidth: float) -> tuple[float, float]:
        """(compute scale, bandwidth scale) against the reference fractions; (1, 1) if the
        GPU was not measured."""
        ...

    def link_for(self, gpu_id: str, count: int) -> dict[str, Any] | None:
        """The measured link among ``count`` GPUs of this id, or None."""
        ...

    def describe(self) -> str | None:
        """Where the figures come from, for an answer's assumptions."""
        ...
