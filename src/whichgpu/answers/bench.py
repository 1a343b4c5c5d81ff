"""``bench``, ``bench model`` and ``compare``: measuring this machine's GPUs, and the same
short job on several cards (S30). PyTorch is imported only when a measurement runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from whichgpu.answers.estimates import workload
from whichgpu.answers.inputs.values import TokenCount
from whichgpu.answers.requests import Bench, BenchModel, Compare, Speed
from whichgpu.bench import needs
from whichgpu.bench.compare import Comparison, Measured, looks_like_pair, parse_measured
from whichgpu.bench.compare import compare as run_compare
from whichgpu.bench.detect import GpuInfo
from whichgpu.bench.model_bench import (
    ModelBench,
    Settings,
    append_rows,
    check_buildable,
    check_fits,
    run_model_bench,
)
from whichgpu.bench.profile import CalibrationProfile, profile_from_option, save_profile
from whichgpu.bench.run import QUICK, BenchResult, Options, conditions, run_bench
from whichgpu.bench.topology import Topology, read_topology
from whichgpu.catalog.gpus import resolve_gpu
from whichgpu.catalog.prices.selection import get_offers
from whichgpu.currency import rates_from
from whichgpu.errors import InputError
from whichgpu.models.resolve import resolve_model
from whichgpu.units import parse_count

Reporter = Any  # start(total), step(description), done(): a progress display


@dataclass(frozen=True)
class BenchAnswer:
    """What ``whichgpu bench`` measured, and where the profile was saved."""

    result: BenchResult
    saved: Path | None
    device_type: str
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = self.result.to_json()
        data["saved_to"] = str(self.saved) if self.saved else None
        return data


def select_gpus(found: list[GpuInfo], gpus: str | None, as_id: str | None) -> list[GpuInfo]:
    """The GPUs ``--gpu-index`` names (all by default), named ``--as`` a catalog card if asked."""
    if gpus:
        try:
            wanted = {int(x) for x in gpus.split(",") if x.strip()}
        except ValueError:
            raise InputError(f"--gpu-index takes indices such as 0,1, got {gpus!r}") from None
        missing = wanted - {g.index for g in found}
        if missing:
            raise InputError(f"no GPU {', '.join(map(str, sorted(missing)))} here; this "
                             f"machine has {', '.join(str(g.index) for g in found)}")
        found = [g for g in found if g.index in wanted]
    if as_id:
        gid = resolve_gpu(as_id, strict=True).gpu.id
        found = [replace(g, catalog_id=gid, catalog_note=f"--as {as_id}") for g in found]
    return found


def bench(q: Bench, reporter: Reporter) -> BenchAnswer:
    """Measure each GPU (matmul per precision, memory, host and peer bandwidth) and save a
    calibration profile for 'speed --calibration'."""
    opts = QUICK if q.quick else Options()
    if q.precision:
        opts = replace(opts, precisions=tuple(p.strip() for p in q.precision.split(",")))
    if q.no_p2p:
        opts = replace(opts, p2p=False)
    if q.device == "cpu":
        torch = needs.import_torch()
        found = [GpuInfo(index=0, name="CPU", source="cpu", catalog_note="the CPU")]
        topo = Topology((0,), source="cpu")
    elif q.device == "cuda":
        torch, found = needs.require_cuda()
        found = select_gpus(found, q.gpu_index, q.as_id)
        topo = read_topology(max(g.index for g in found) + 1)
        keep = {g.index for g in found}
        topo = replace(topo, gpus=tuple(i for i in topo.gpus if i in keep),
                       pairs=tuple(p for p in topo.pairs if p.a in keep and p.b in keep))
    else:
        raise InputError(f"--device must be cuda or cpu, got {q.device!r}")
    result = run_bench(torch, found, topo, options=opts, reporter=reporter,
                       device_type=q.device)
    notes: tuple[str, ...] = ()
    saved = None
    if not (q.no_save or q.device == "cpu"):
        profile = result.to_profile()
        if profile["gpus"]:
            saved = save_profile(profile, q.output)
        else:
            notes = ("no measured GPU maps to a catalog card, so no profile was saved; name it "
                     "with --as ID",)
    return BenchAnswer(result, saved, q.device, notes)


@dataclass(frozen=True)
class ModelBenchAnswer:
    """What ``whichgpu bench model`` measured beside the estimates."""

    result: ModelBench
    profile: CalibrationProfile | None
    appended: list[str] = field(default_factory=list)
    append: str | None = None
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = self.result.to_json()
        data["appended"] = self.appended
        return data


def bench_model(q: BenchModel, reporter: Reporter) -> ModelBenchAnswer:
    """Build the model from its config with random weights, time prefill, decode and
    optionally a training step, and set the numbers beside whichgpu's estimates."""
    settings = Settings(batch=q.batch, prompt_tokens=parse_count(q.prompt_tokens, binary=True),
                        output_tokens=parse_count(q.output_tokens, binary=True),
                        train=q.train, train_seq=parse_count(q.context, binary=True),
                        dtype=q.dtype, repeat=q.repeat)
    spec = resolve_model(q.model)
    check_buildable(spec)
    profile = profile_from_option(q.calibration)
    notes: tuple[str, ...] = ()
    found: list[GpuInfo]
    if q.device == "cpu":
        torch = needs.import_torch("whichgpu bench model")
        found, dev, gpu_id = [], "cpu", None
        if q.gpu:
            notes = ("--gpu is ignored on the CPU: CPU numbers are not compared with a GPU "
                     "estimate",)
        if q.append:
            raise InputError("--append records GPU measurements; a CPU run is not one")
    elif q.device == "cuda":
        torch, found = needs.require_cuda("whichgpu bench model")
        found = sorted(found, key=lambda g: 10**6 if g.cuda_index is None else g.cuda_index)
        dev = f"cuda:{found[0].cuda_index or 0}"
        gpu_id = resolve_gpu(q.gpu).gpu.id if q.gpu else found[0].catalog_id
        if gpu_id is None:
            raise InputError(f"{found[0].name} is not in the catalog ({found[0].catalog_note});"
                             " name the card with --gpu ID to compare with its estimate")
        check_fits(torch, dev, spec, settings)
    else:
        raise InputError(f"--device must be cuda or cpu, got {q.device!r}")
    cond = conditions(torch, found[:1])
    if found:
        cond["gpu_name"] = found[0].name
        if found[0].power_limit_w:
            cond["power_limit_w"] = found[0].power_limit_w
    result = run_model_bench(torch, spec, settings, device=dev, gpu_id=gpu_id, profile=profile,
                             reporter=reporter, conditions=cond)
    written = append_rows(q.append, result.rows) if q.append else []
    return ModelBenchAnswer(result, profile, written, q.append, notes)


@dataclass(frozen=True)
class CompareAnswer:
    """S30: the same job on several cards, by minutes and cost per run."""

    result: Comparison
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = self.result.to_json()
        if self.notes:  # how a card's name was read (a family: its cheapest variant)
            data["notes"] = [str(n) for n in self.notes]
        return data


def _refuse_unused(q: Compare, *, timing: bool) -> None:
    """An option that this comparison does not use is refused rather than ignored (so a typo
    or a ``nan`` in it is never silently dropped): the job's options need ``--model``, and
    ``--gpu`` needs a command to time."""
    if not q.model:
        given = [name for name in ("quant", "context", "prompt_tokens", "output_tokens",
                                   "engine") if getattr(q, name) is not None]
        given += [name for name in ("task", "batch")
                  if getattr(q, name) != Compare.model_fields[name].default]
        if given:
            flags = ", ".join("--" + n.replace("_", "-") for n in given)
            raise InputError(f"{flags}: used only with --model (the job's model, to project "
                             "the other cards with the speed model); give --model or leave "
                             "them out")
    if q.gpu is not None and not timing:
        raise InputError("--gpu names this machine's card for a command timed here (after "
                         "--); with --measured pairs, name the cards in the pairs")


def compare(q: Compare, time_here: Callable[[list[str], str | None], list[Measured]],
            ) -> CompareAnswer:
    """Compare measured (or timed here, through ``time_here``) minutes on cards, and project
    the other cards from them."""
    args = list(q.args)
    _refuse_unused(q, timing=bool(args) and not all(looks_like_pair(a) for a in args))
    if q.measured and args and not all(looks_like_pair(a) for a in args):
        raise InputError("give either --measured CARD=DURATION pairs or a command after --, "
                         "not both")
    if q.measured or (args and all(looks_like_pair(a) for a in args)):
        pairs = parse_measured([*q.measured, *args])
    else:
        if not args:
            raise InputError("give --measured CARD=DURATION pairs (h100=12m a100=21m) or a "
                             "command to time after -- (whichgpu compare -- python train.py)")
        pairs = time_here(args, q.gpu)
    job = None
    if q.model:
        job = workload(Speed(model=q.model, task=q.task, quant=q.quant, batch=q.batch,
                             context=TokenCount.of(q.context, "context"),
                             prompt_tokens=TokenCount.of(q.prompt_tokens, "prompt_tokens"),
                             output_tokens=TokenCount.of(q.output_tokens, "output_tokens"),
                             engine=q.engine), gpus=q.count)
    offers = get_offers(q.prices)
    pairs = [_cheapest_measured(p, offers, q) for p in pairs]
    result = run_compare(pairs, offers, prices=q.prices, currency=q.currency,
                         rates=rates_from(q.rate), count=q.count, spot=q.spot, workload=job,
                         bound=q.bound, project=not q.no_project,
                         profile=profile_from_option(q.calibration))
    if q.priced_only:
        result.rows = [r for r in result.rows if r.measured or r.cost is not None]
    return CompareAnswer(result, tuple(p.note for p in pairs if p.note))


def _cheapest_measured(m: Measured, offers: list, q: Compare) -> Measured:
    """A card measured under a family name ('a100=12m'): priced as the family's variant that
    rents for least in these offers (as ``cost`` and ``tco`` do), and the note says which."""
    if m.note is None:
        return m
    res = resolve_gpu(m.text.partition("=")[0].strip())
    if len(res.candidates) < 2:
        return m
    from whichgpu.answers.inputs.ownership import cheapest_variant

    gpu, note = cheapest_variant(res, offers, q.currency or "USD", rates_from(q.rate),
                                 q.count, q.spot)
    return replace(m, gpu=gpu, note=note)
