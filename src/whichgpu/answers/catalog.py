"""``gpus``, ``gpu``, ``models`` and ``model``: the catalog and the presets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.inputs.job import apply_currency, only_gpus
from whichgpu.answers.requests import Gpu, Gpus, Model, Models
from whichgpu.catalog.best_uses import BestUse, best_uses
from whichgpu.catalog.describe import gpu_to_json
from whichgpu.catalog.gpus import GPU, default_catalog, resolve_gpu
from whichgpu.catalog.offers import Offer
from whichgpu.catalog.prices import OfferSelection
from whichgpu.cost.per_tflop import GpuRow, catalog_rows
from whichgpu.currency import known_currency, rates_from
from whichgpu.errors import InputError
from whichgpu.messages import Field, Message, msg
from whichgpu.models.describe import spec_to_json
from whichgpu.models.preset_index import PresetRecord, list_presets
from whichgpu.models.spec import ModelSpec
from whichgpu.units import check_currency, parse_size

LANGS = ("en", "fr")


def in_currency(selection: OfferSelection, currency: str | None, rates: Any = None,
                ) -> OfferSelection:
    """The selection in ``currency`` (an ISO 4217 code or one of the rate table's)."""
    if currency:
        currency = known_currency(currency, rates)
    return apply_currency(selection, currency, rates)


@dataclass(frozen=True)
class GpusAnswer:
    """``whichgpu gpus``: the catalog rows with cost per TFLOP-hour."""

    request: Gpus
    rows: list[GpuRow]
    selection: OfferSelection

    def to_json(self) -> dict[str, Any]:
        return {"precision": self.request.precision, "prices": self.request.prices,
                "currency": self.selection.main_currency(),
                "price_selection": self.selection.to_json(),
                "gpus": [r.to_json() for r in self.rows]}


def gpus(q: Gpus, ctx: Context = LOCAL) -> GpusAnswer:
    """The GPU catalog with throughput, and cost per TFLOP-hour where there are prices."""
    rates = rates_from(q.rate)
    selection = in_currency(ctx.offers(q.prices, q.max_age, cheapest_only=True), q.currency,
                            rates)
    rows = catalog_rows(
        precision=q.precision, offers=list(selection.offers), vendor=q.vendor,
        min_memory_bytes=parse_size(q.min_memory) if q.min_memory else None,
        form_factor=q.form_factor, priced_only=q.priced_only, sort=q.sort,
        currency=check_currency(q.currency) if q.currency else selection.main_currency(),
        rates=rates)
    only = only_gpus(q.only)
    if only is not None:
        rows = [r for r in rows if r.gpu in only]
    return GpusAnswer(q, rows, selection)


def lang_code(tag: str | None) -> str | None:
    """One of the answer languages from a tag: 'fr', 'fr-FR', 'fr_CA', 'FR' -> 'fr'."""
    if not tag:
        return None
    code = tag.strip().lower().replace("_", "-").split("-")[0]
    return code if code in LANGS else None


@dataclass(frozen=True)
class GpuAnswer:
    """``whichgpu gpu ID``: one GPU with every spec, its offers and its best uses."""

    gpu: GPU
    offers: list[Offer]
    selection: OfferSelection
    note: str | None
    lang: str
    uses: tuple[BestUse, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return gpu_to_json(self.gpu, default_catalog(), self.offers, self.lang, self.note)


def gpu(q: Gpu, ctx: Context = LOCAL) -> GpuAnswer:
    """One GPU: every spec with its source, its offers, and what the articles say it is for."""
    code = lang_code(q.lang)
    if code is None:
        raise InputError(msg("gpu.unknown_lang", "unknown language {lang!r}; use en or fr",
                             lang=q.lang))
    res = resolve_gpu(q.gpu, default_catalog())
    selection = ctx.offers(None, gpus=[res.gpu.id])
    return GpuAnswer(res.gpu, [o for o in selection.offers if o.gpu == res.gpu.id], selection,
                     res.note, code, tuple(best_uses(res.gpu.id)))


@dataclass(frozen=True)
class ModelsAnswer:
    """``whichgpu models``: the shipped presets."""

    rows: list[PresetRecord]

    def to_json(self) -> dict[str, Any]:
        return {"models": [r.to_json() for r in self.rows]}


def models(q: Models, ctx: Context = LOCAL) -> ModelsAnswer:
    """The model presets shipped with whichgpu (they resolve offline)."""
    if q.family not in (None, "decoder", "diffusion"):
        raise InputError(msg("models.unknown_family", "unknown family {family!r}; use decoder "
                             "or diffusion", family=q.family))
    return ModelsAnswer([r for r in list_presets() if q.family is None or r.family == q.family])


@dataclass(frozen=True)
class ModelAnswer:
    """``whichgpu model MODEL``: its architecture and parameter breakdown."""

    spec: ModelSpec
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return spec_to_json(self.spec)


def model(q: Model, ctx: Context = LOCAL) -> ModelAnswer:
    """A model's architecture and parameter breakdown."""
    if q.model is None and q.params is None:
        raise InputError(msg("model.none", "name a model (see 'whichgpu models') or give "
                             "{params} 70e9", params=Field("params")))
    spec = ctx.model(q.model, params=q.params, offline=True if q.offline else None)
    notes: tuple[Message, ...] = ()
    if spec.approximate:
        notes = (msg("model.approximation", "{model} is an approximation, not a real model: "
                     "name the model for exact figures", model=spec.name),)
    return ModelAnswer(spec, notes)
