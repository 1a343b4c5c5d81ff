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


@runtime_checkable
class RunsSource(Protocol):
    """A calibration that also holds measured runs (:class:`WithRuns`)."""

    def measured_runs(self, gpu_id: str) -> tuple[Any, ...]:
        """The stored runs measured on this catalog id (MeasuredRun)."""
        ...


class WithRuns:
    """A calibration profile (or none) together with the measured runs of the store.

    The profile's answers pass through unchanged (hardware scales, links, its description);
    :meth:`measured_runs` adds the runs, which the speed model applies after its estimate
    (:func:`whichgpu.estimate.measured.apply_runs`). With no runs it is never built (see
    :func:`with_store_runs`), so an empty store changes no answer.
    """

    def __init__(self, base: Calibration | None, runs: tuple[Any, ...], where: str) -> None:
        self.base = base
        self.runs = runs
        self.where = where  # the store, for people (no password)

    def entries(self, gpu_id: str) -> list[dict[str, Any]]:
        return self.base.entries(gpu_id) if self.base is not None else []

    def scales_for(self, gpu_id: str, ref_matmul: float,
                   ref_bandwidth: float) -> tuple[float, float]:
        if self.base is None:
            return 1.0, 1.0
        return self.base.scales_for(gpu_id, ref_matmul, ref_bandwidth)

    def link_for(self, gpu_id: str, count: int) -> dict[str, Any] | None:
        return self.base.link_for(gpu_id, count) if self.base is not None else None

    def describe(self) -> str | None:
        return self.base.describe() if self.base is not None else None

    def measured_runs(self, gpu_id: str) -> tuple[Any, ...]:
        return tuple(r for r in self.runs if r.gpu == gpu_id)

    def __getattr__(self, name: str) -> Any:  # the profile's own fields (path, data)
        if name in ("base", "runs", "where"):
            raise AttributeError(name)
        return getattr(self.base, name)


def with_store_runs(base: Calibration | None, store: Any = None) -> Calibration | None:
    """``base`` with the measured runs of the price store (``store``: a PriceStore, a
    location, or None for the default); ``base`` itself when the store holds none, or when it
    does not exist yet (asking never creates a store)."""
    from whichgpu.catalog.prices.backends import parse_target
    from whichgpu.catalog.prices.store import PriceStore
    from whichgpu.catalog.runs.store import RunStore
    from whichgpu.errors import WhichGPUError

    try:
        if not isinstance(store, PriceStore):
            target = parse_target(store)
            if target.kind == "sqlite" and (target.path is None or not target.path.exists()):
                return base
            store = PriceStore(store)
        runs = tuple(RunStore(store).list())
    except WhichGPUError as exc:  # a store that cannot be read (down, newer): no runs, said
        import logging

        logging.getLogger("whichgpu").warning("measured runs not used: %s", exc)
        return base
    if not runs:
        return base
    return WithRuns(base, runs, store.location)
