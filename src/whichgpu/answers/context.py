"""How a surface reaches what an answer needs: models, offers, calibration profiles.

The answer functions are the same for the command line and the web; what differs is only how
a name becomes a model (the command line reads files and asks the Hub directly; the server
never reads a file and asks the Hub through its bounded pool), where offers come from (the
command line reads the store each time; the server keeps a selection per snapshot) and what
``calibration`` may name (a file, or only the server's own profile). :data:`LOCAL` is the
command line's; the web builds its own (web/services.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from whichgpu.answers.inputs.workload import PARAMS_WORDS
from whichgpu.models.resolve import resolve_model
from whichgpu.models.spec import ModelSpec
from whichgpu.units import parse_count

if TYPE_CHECKING:  # the price store and calibration load when an answer reads them
    from whichgpu.catalog.prices import OfferSelection
    from whichgpu.estimate.calibration import Calibration


class ModelResolver(Protocol):
    def __call__(self, name: str | None, *, params: str | float | None = None,
                 config: dict[str, Any] | None = None,
                 offline: bool | None = None) -> ModelSpec: ...


class OfferReader(Protocol):
    def __call__(self, prices: str | None, max_age: float | None = None, *,
                 gpus: Sequence[str] | None = None,
                 cheapest_only: bool = False) -> OfferSelection: ...


@dataclass(frozen=True)
class Context:
    """What answers read from the world, as the surface asking allows."""

    model: ModelResolver
    offers: OfferReader
    calibration: Callable[[str | None], Calibration | None]
    #: a server's answer: no path of its machine in the JSON (the price store's)
    public: bool = False


def local_model(name: str | None, *, params: str | float | None = None,
                config: dict[str, Any] | None = None, offline: bool | None = None,
                ) -> ModelSpec:
    """The command line's model: a preset, a size, a Hub id, or a file on this machine
    (``offline``: never the Hub; None follows HF_HUB_OFFLINE)."""
    count = float(parse_count(params, what=PARAMS_WORDS)) if params else None
    return resolve_model(name, params=count, config=config, offline=offline)


def local_offers(prices: str | None, max_age: float | None = None, *,
                 gpus: Sequence[str] | None = None,
                 cheapest_only: bool = False) -> OfferSelection:
    """The command line's offers: read from the price store (or an offer file) now."""
    from whichgpu.catalog.prices import current_offers

    return current_offers(prices, max_age_days=max_age,
                          gpus=list(gpus) if gpus is not None else None,
                          cheapest_only=cheapest_only)


def local_calibration(value: str | None) -> Calibration | None:
    """``--calibration``: nothing, ``default`` (what 'whichgpu bench' saved) or a file; with
    the measured runs of the store, if it holds any (``whichgpu runs add``)."""
    from whichgpu.bench.profile import profile_from_option
    from whichgpu.estimate.measured import with_store_runs

    return with_store_runs(profile_from_option(value))


LOCAL = Context(model=local_model, offers=local_offers, calibration=local_calibration)
