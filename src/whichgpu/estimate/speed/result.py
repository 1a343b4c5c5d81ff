"""The result of a speed estimate: rates as low/typical/high, the bound, the confidence."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast, overload

from whichgpu.estimate.constants import speed_constant, speed_value
from whichgpu.estimate.memo import Table
from whichgpu.messages import Message
from whichgpu.units import Range
from whichgpu.vocabulary import Engine, Task

if TYPE_CHECKING:
    from whichgpu.estimate.frameworks import Framework

BOUNDS = ("memory-bandwidth", "compute", "interconnect", "fixed-overhead", "host-memory",
          "pcie")
LEVELS = ("low", "medium", "high")
CATEGORIES = ("decode", "prefill", "serving", "training", "diffusion", "video")


def hardware_class(gpu) -> str:
    """The hardware class the range groups use: ``unified`` (Apple silicon, DGX Spark and
    other shared-memory machines), ``HBM`` (data-centre cards) or ``GDDR`` (the rest)."""
    if str(getattr(gpu, "form_factor", "")) == "unified":
        return "unified"
    return "HBM" if str(gpu.memory_type.value).upper().startswith("HBM") else "GDDR"


# Fewer bits per weight than this: the sub-2-bit codebook quants (GGUF IQ1_S, IQ1_M, TQ1_0,
# Unsloth's dynamic 1.58/1.73-bit MoE quants) have a precision class of their own. IQ1_S and
# IQ1_M decode 8 weights from one entry of a 2048-entry codebook (11 bits per 8 weights,
# llama.cpp pull request 6302, 2024-03-25), not by the shift and scale of the 2- to 6-bit
# k-quants, so their decode does not follow the 4-bit rows' error: the calibration rows of
# UD-IQ1_S DeepSeek-R1 (validation/speed.csv dec-uns1591-2xh100-dsr1-udiq1s-tg128 and
# dec-ll11474-3090-dsr1-udiq1s-ngl8) ran at 0.72x and 0.32x of the estimate, outside the 4-bit
# llama.cpp range (about 0.6-1.2x).
SUB2BIT = 2.0


def precision_class(quant) -> str:
    """The precision class the range groups use, by the linear layers' bits: ``16bit``,
    ``8bit``, ``4bit`` (2 to 8 bits: 4-bit and the mixed quantisations around it) or
    ``1bit`` (fewer than :data:`SUB2BIT` bits: the codebook quants)."""
    bits = float(getattr(quant, "linear_bits", 16) or 16)
    if bits < SUB2BIT:
        return "1bit"
    return "16bit" if bits >= 16 else "8bit" if bits >= 8 else "4bit"


def band_key(category: str, engine: str, gpu, quant) -> str:
    """The most specific range group of an estimate: category/engine/hardware class/precision
    (``make calibrate`` writes a band for each group with enough rows; :func:`band_ratios`
    falls back to the parent group)."""
    return "/".join((category, engine, hardware_class(gpu), precision_class(quant)))


def _band_group(table: dict[str, Any], key: str) -> str | None:
    """The most specific group of ``key`` (category/engine/class/precision) with a band."""
    parts = key.split("/")
    for n in range(len(parts), 0, -1):
        k = "/".join(parts[:n])
        if k in table:
            return k
    return None


_BAND_RATIOS = Table(512)  # (range group, confidence) -> (low, high)


def band_ratios(category: str | None, confidence: str) -> tuple[float, float]:
    """(low, high) multipliers of a typical rate: :func:`_band_ratios`, remembered by its
    arguments (every range of every option asks it again)."""
    key = (category, confidence)
    hit = _BAND_RATIOS.get(key)
    if hit is not None:
        return cast("tuple[float, float]", hit)
    return cast("tuple[float, float]", _BAND_RATIOS.put(key, _band_ratios(category,
                                                                           confidence)))


def _band_ratios(category: str | None, confidence: str) -> tuple[float, float]:
    """(low, high) multipliers of a typical rate.

    ``category`` is a category or a range group under it (``decode/llamacpp/GDDR/4bit``):
    the most specific group with a band gives an 80 % prediction interval of measured /
    estimated from held-out (cross-validated) residuals of the calibration split
    (``band_ratios``, written by ``make calibrate``), widened in log space for lower
    confidence (``confidence_widening``). A category with too few rows for a band gets the
    prior ``confidence_factors`` at low confidence.
    """
    table = speed_value("band_ratios")
    group = _band_group(table, category) if category else None
    if group is None:
        # no category band (too few calibration rows): the prior, at low confidence whenever
        # the category is named, since its error is unknown
        lo, hi = speed_constant("confidence_factors").value["low" if category else confidence]
        return float(lo), float(hi)
    lo, hi = table[group]
    k = float(speed_value("confidence_widening")[confidence])
    return min(float(lo), 1.0) ** k, max(float(hi), 1.0) ** k


def band_evidence(key: str) -> tuple[str, int]:
    """(the group whose band applies, the calibration rows behind it)."""
    table = speed_value("band_ratios")
    group = _band_group(table, key) or key.split("/")[0]
    return group, int(speed_value("band_evidence").get(group, 0))


# The speed refits (scripts/calibrate.py) read only each estimate's typical value, which band()
# passes through unscaled: inside typical_only() the confidence is not worked out (TYPICAL_ONLY,
# a placeholder) and each range is the typical value alone. Nothing that shows a range or a
# confidence may run inside it.
_TYPICAL_ONLY = [False]


@contextmanager
def typical_only() -> Iterator[None]:
    """Estimates with their typical values only (placeholder confidence, ranges of width 1)."""
    saved, _TYPICAL_ONLY[0] = _TYPICAL_ONLY[0], True
    try:
        yield
    finally:
        _TYPICAL_ONLY[0] = saved


def band(typical: float, confidence: str, inverse: bool = False,
         category: str | None = None) -> Range:
    """A range around ``typical`` at a confidence level (rates; ``inverse`` for times);
    ``category`` may name a range group (:func:`band_key`)."""
    if _TYPICAL_ONLY[0]:
        return Range(typical, typical, typical)
    lo, hi = band_ratios(category, confidence)
    if inverse:
        lo, hi = 1 / hi, 1 / lo
    return Range(typical * lo, typical, typical * hi)


def speed_family(model) -> str:
    """The family calibration evidence is kept by: the diffusers pipeline class for image and
    video models; for LLMs dense or MoE (with -mla), since the roofline treats every dense
    decoder alike and MoE routing and MLA change what is read per token."""
    if model.diffusion is not None:
        return str(model.architecture)
    family = "moe" if model.is_moe else "dense"
    return family + ("-mla" if model.mla is not None else "")


def is_hybrid(model) -> bool:
    """Whether an LLM mixes linear-attention or SSM layers (Gated DeltaNet, Mamba-2: Qwen3.5,
    Qwen3-Next, Nemotron-H) into its attention layers."""
    return any(layer.attention == "linear" for layer in getattr(model, "layers", ()) or ())


def evidence(category: str, family: str, engine: Engine | Framework) -> tuple[int, str]:
    """How much calibration evidence backs (family, engine) in a category: 2, 1 or 0 and why."""
    rows = speed_value("calibration_evidence").get(category, {})
    n = int(rows.get(f"{family}/{engine}", 0))
    if n:
        return 2, f"{n} calibration row(s) of {family} on {engine} ({category})"
    same_family = sum(int(v) for k, v in rows.items() if k.split("/")[0] == family)
    if same_family:
        return 1, (f"{family} has {same_family} calibration row(s) on other engines, none on "
                   f"{engine} ({category})")
    return 0, f"no calibration rows of {family} ({category})"


# The confidence label, one definition for every command, page and API answer: the width of
# the stated 80 % range (high / low) and the evidence behind it. High: a range at most
# HIGH_WIDTH wide resting on calibration rows of the same model family and engine, and on at
# least HIGH_MIN_ROWS calibration rows of the answer's own range group (band_key: category,
# engine, hardware class, precision class); medium: at most MEDIUM_WIDTH wide with some
# evidence of the family; low otherwise. The widths are the targets (issue 30: 2x for
# decode and memory, 3x for the other categories).
HIGH_WIDTH = 2.0
MEDIUM_WIDTH = 3.0
# With fewer rows than this in its own group, an answer's range is not that group's own
# empirical 10th-90th percentiles (scripts/calibrate.py switches to them at EMPIRICAL_ROWS = 10)
# but a Student t interval from a handful of rows or a parent group's interval measured on
# other cards, precisions or engines: its narrowness does not show this answer's error, so the
# label is at most medium (thin evidence) and says why. The same holds for a hybrid
# linear-attention model, whose family's calibration rows are plain-attention models.
HIGH_MIN_ROWS = 10
# A group's rows may all be of other models: decode/llamacpp/unified/4bit holds 15 rows, none
# of an MLA model, so DeepSeek-R1 on an M3 Ultra rested on rows of dense and plain-MoE models
# alone. High also needs at least HIGH_FAMILY_ROWS calibration rows of the answer's model family
# (speed_family) on its engine and hardware class (family_evidence, written by make
# calibrate): the same 3 rows as the fewest that give a range group an interval of its own
# (scripts/calibrate.py MIN_GROUP_ROWS).
HIGH_FAMILY_ROWS = 3
WIDEST_WITHOUT_REASON = 5.0  # a range wider than this says why (issue 30)


class Confidence(NamedTuple):
    """A confidence label, why, the band level that widens the range, and the range group."""

    label: str
    why: str
    level: str
    band_key: str


#: the confidence of an estimate made inside typical_only()
TYPICAL_ONLY = Confidence(LEVELS[0], "not worked out (typical values only)", LEVELS[0], "")


def label_for(width: float, evidence_level: int) -> str:
    """The confidence label of a range ``width`` (high / low) backed by evidence at
    ``evidence_level`` (2: rows of the family on the engine, 1: of the family, 0: none)."""
    by_width = 2 if width <= HIGH_WIDTH else 1 if width <= MEDIUM_WIDTH else 0
    return LEVELS[min(by_width, evidence_level)]


_CONFIDENCE = Table(2048)  # by the settings it reads (model, format, GPU by identity)


def confidence_for(category: str, w, hw, engine: Engine | Framework) -> Confidence:
    """(label, why, band level, range group): :func:`_confidence_for`, remembered by what it
    reads (a recommendation asks it per GPU x count x category; a card the user described,
    compared with its nearest measured relative, is not remembered)."""
    if _TYPICAL_ONLY[0]:
        return TYPICAL_ONLY
    model, quant, gpu = w.model, w.quant_format, hw.gpu
    if getattr(gpu, "user_spec", False):
        return _confidence_for(category, w, hw, engine)
    key = (category, engine, id(model), id(quant), id(gpu), hw.link.kind, bool(hw.calibration))
    hit = _CONFIDENCE.get(key)
    if hit is not None and hit[0] is model and hit[1] is quant and hit[2] is gpu:
        return cast(Confidence, hit[3])
    value = _confidence_for(category, w, hw, engine)
    _CONFIDENCE.put(key, (model, quant, gpu, value))
    return value


def _confidence_for(category: str, w, hw, engine: Engine | Framework) -> Confidence:
    """(label, why, band level, range group).

    The band level is the evidence for (family, engine) in the category, lowered for a generic
    model or GPUs without peer-to-peer and raised by a calibration profile; it chooses how far
    the group's band is widened. The label is :func:`label_for` of the widened range's width
    and that evidence.
    """
    level, why = evidence(category, speed_family(w.model), engine)
    if w.model.approximate:
        level, why = 0, why + "; a generic model from a bare size"
    if hw.link.kind == "pcie_host" and level > 0:
        level, why = 0, why + "; GPUs without peer-to-peer (S28: scaling varies)"
    if hw.calibration:
        level = min(level + 1, 2)
        why += "; hardware measured by a calibration profile"
    relative = None
    if getattr(hw.gpu, "user_spec", False):
        relative = _relative_confidence(category, w, hw, engine)
        if relative is not None:
            level = min(level, LEVELS.index(relative.level))
    key = band_key(category, engine, relative_gpu(hw.gpu) or hw.gpu, w.quant_format)
    lo, hi = band_ratios(key, LEVELS[level])
    group, n = band_evidence(key)
    if _band_group(speed_value("band_ratios"), key) is None:
        # too few held-out residuals for an interval (make calibrate): the prior, said as such
        lo0, hi0 = speed_constant("confidence_factors").value["low"]
        why += (f"; range: a wide prior (x{lo0:g}-{hi0:g}), since {group} has {n} held-out "
                "measurement(s), too few for an interval of its own")
    else:
        why += f"; range: the 80 % interval of {group} from {n} held-out measurement(s)"
    cap, thin = evidence_cap(key, w.model)
    if thin:
        why += f"; {thin}; a measured run on the card (whichgpu bench) would narrow it"
    if hi / lo > WIDEST_WITHOUT_REASON:
        base_lo, base_hi = band_ratios(key, LEVELS[2])
        if level < 2:
            why += (f"; the range is {hi / lo:.1f}x wide because no measurement of this model "
                    f"family on {engine} backs it: the {group} range ({base_hi / base_lo:.1f}x) "
                    "is widened by the error of such estimates")
        else:
            why += (f"; the range is {hi / lo:.1f}x wide because the held-out measurements of "
                    f"{group} scatter that much around the estimate")
    label = label_for(hi / lo, level)
    if LEVELS.index(label) > cap:
        label = LEVELS[cap]
        why += f"; so {label}, not high, though the range is only {hi / lo:.1f}x wide"
    if relative is not None:
        label = LEVELS[min(LEVELS.index(label), LEVELS.index(relative.label))]
        why += (f"; a card you described: at most the confidence of its nearest measured "
                f"catalog card, {relative_gpu(hw.gpu).id} ({relative.label})")
    return Confidence(label, why, LEVELS[level], key)


_PRECISION_WORDS = {"1bit": "under 2 bits per weight", "4bit": "2 to 8 bits per weight",
                    "8bit": "8 bits per weight", "16bit": "16 bits per weight"}


def own_rows(key: str) -> int:
    """The calibration rows in the range group ``key`` itself (not its parents)."""
    return int(speed_value("band_evidence").get(key, 0))


def family_rows(key: str, family: str) -> int:
    """The calibration rows of model ``family`` on the engine and hardware class of range
    group ``key`` (category/engine/class/precision), any precision."""
    category, engine, cls = key.split("/")[:3]
    table = speed_value("family_evidence").get(category, {})
    return int(table.get(f"{family}/{engine}/{cls}", 0))


def evidence_cap(key: str, model) -> tuple[int, str]:
    """(the highest label index the evidence allows, why it is lower than high; "" if not)
    for an answer in range group ``key`` about ``model`` (see HIGH_MIN_ROWS and
    HIGH_FAMILY_ROWS; ``model`` None: the group's rows alone)."""
    category, engine, cls, precision = key.split("/")
    n = own_rows(key)
    if n < HIGH_MIN_ROWS:
        return 1, (f"thin evidence: {n} published measurement(s) of {engine} {category} on "
                   f"{cls} cards at {_PRECISION_WORDS.get(precision, precision)} "
                   f"({HIGH_MIN_ROWS} needed for high)")
    if model is not None:
        family = speed_family(model)
        m = family_rows(key, family)
        if m < HIGH_FAMILY_ROWS:
            return 1, (f"thin evidence for this model family: {m} published measurement(s) "
                       f"of {family} models with {engine} ({category}) on {cls} cards "
                       f"({HIGH_FAMILY_ROWS} needed for high); its range rests on {n} "
                       f"measurements, {n - m} of other model families")
    if is_hybrid(model):
        return 1, ("a hybrid linear-attention model: its calibration rows are of plain-"
                   "attention models, whose kernels differ")
    return 2, ""


def relative_gpu(gpu):
    """A described card's nearest measured relative: the catalog card with calibration rows
    (``measured_gpus``, written by make calibrate) on the same platform closest in memory
    bandwidth and 16-bit tensor rate (sum of the absolute log ratios); None for a catalog
    card or when nothing compares."""
    if not getattr(gpu, "user_spec", False):
        return None
    return _nearest(gpu.bandwidth_gb_s.value, gpu.tflops("bf16") or gpu.tflops("fp16") or 0.0,
                    str(gpu.platform.value))


@cache
def _nearest(bandwidth: float, tflops: float, platform: str):
    import math

    from whichgpu.catalog.gpus import default_catalog

    if bandwidth <= 0 or tflops <= 0:
        return None
    measured = speed_value("measured_gpus")
    best, best_d = None, math.inf
    for g in default_catalog().gpus:
        tf = g.tflops("bf16") or g.tflops("fp16")
        if g.id not in measured or not tf or not g.bandwidth_gb_s.value or \
                str(g.platform.value) != platform:
            continue
        d = abs(math.log(g.bandwidth_gb_s.value / bandwidth)) + abs(math.log(tf / tflops))
        if d < best_d:
            best, best_d = g, d
    return best


def _relative_confidence(category: str, w, hw, engine: Engine | Framework) -> Confidence | None:
    from dataclasses import replace

    from whichgpu.estimate.speed.hardware import hardware

    rel = relative_gpu(hw.gpu)
    if rel is None:
        return None
    rel_hw = replace(hardware(rel, hw.count), calibration=hw.calibration)
    return confidence_for(category, w, rel_hw, engine)


@dataclass(frozen=True)
class Component:
    """One term of a time: what it is and how long it takes (seconds)."""

    name: str
    seconds: float
    formula: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "seconds": self.seconds, "formula": self.formula}


T = TypeVar("T")


class Later(Sequence[T]):
    """A tuple made when first read: an estimate's words (its components' formulas, its
    assumptions) are formatted only if someone reads them. A recommendation estimates
    hundreds of configurations and shows a few; the serving search asks for rates alone.

    Equal to the tuple it makes; pickles and copies as that tuple."""

    __slots__ = ("_items", "_make")

    def __init__(self, make: Callable[[], Iterable[T]]) -> None:
        self._make: Callable[[], Iterable[T]] | None = make
        self._items: tuple[T, ...] | None = None

    def items(self) -> tuple[T, ...]:
        """The tuple, made at the first read."""
        if self._items is None:
            assert self._make is not None
            self._items, self._make = tuple(self._make()), None
        return self._items

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...
    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        return self.items()[i]

    def __len__(self) -> int:
        return len(self.items())

    def __iter__(self) -> Iterator[T]:
        return iter(self.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Later):
            other = other.items()
        return self.items() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.items())

    def __repr__(self) -> str:
        return repr(self.items())

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self.items(),))


@dataclass(frozen=True)
class SpeedEstimate:
    """How fast a workload runs on ``count`` x ``gpu``; rates are aggregate over the batch."""

    gpu: str
    count: int
    task: Task
    engine: Engine | Framework  # for training, the framework that runs it (unsloth, megatron)
    precision: str  # compute precision key used
    bound: str
    confidence: str
    rates: dict[str, Range]  # name -> range (tokens_per_s, images_per_min ...)
    times: dict[str, Range] = field(default_factory=dict)  # name -> seconds range
    # mfu, batch used ... and a few words (link kind, framework) and flags (compile)
    scalars: dict[str, Any] = field(default_factory=dict)
    # the words: a tuple, or a Later that makes it when read (see Later)
    components: Sequence[Component] = ()
    assumptions: Sequence[str] = ()
    warnings: tuple[Message, ...] = ()
    calibration: str | None = None
    details: dict[str, Any] = field(default_factory=dict)  # nested results (saturation ...)

    def rate(self, name: str) -> Range:
        return self.rates[name]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "gpu": self.gpu, "count": self.count, "task": self.task, "engine": self.engine,
            "precision": self.precision, "bound": self.bound, "confidence": self.confidence,
        }
        for k, r in self.rates.items():
            data[k] = r.to_json()
        for k, r in self.times.items():
            data[k] = r.to_json()
        data.update(self.scalars)
        data["components"] = [c.to_json() for c in self.components]
        data["assumptions"] = list(self.assumptions)
        data["warnings"] = list(self.warnings)
        data["calibration"] = self.calibration
        for k, v in self.details.items():
            data[k] = _jsonable(v)
        return data


def _jsonable(value: Any) -> Any:
    if isinstance(value, Range):
        return value.to_json()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def dominant(parts: dict[str, float]) -> str:
    """The bound whose time is largest."""
    return max(parts, key=parts.__getitem__) if parts else "fixed-overhead"
