"""The GPU catalog: typed, immutable records loaded from reviewed data (``data/gpus.toml``).

Every figure is kept with its source. Throughput is dense; the accumulate precision is part of
the precision name (see :data:`PRECISIONS`).
"""

from __future__ import annotations

import difflib
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, SkipValidation, ValidationError, model_validator

from whichgpu.engines import labels as engine_labels
from whichgpu.errors import DataError, InputError, NotFoundError, closest
from whichgpu.messages import Field, Join, Message, data_text, msg
from whichgpu.units import GB, MiB

# precision key -> (what it measures, accumulator). Dense figures only.
PRECISIONS: dict[str, tuple[str, str | None]] = {
    "fp64": ("FP64 vector", None),
    "fp64_tensor": ("FP64 tensor core", "fp64"),
    "fp32": ("FP32 vector (non-tensor)", None),
    "tf32": ("TF32 tensor core", "fp32"),
    "bf16": ("BF16 tensor core, FP32 accumulate", "fp32"),
    "fp16": ("FP16 tensor core, FP32 accumulate", "fp32"),
    "fp16_acc16": ("FP16 tensor core, FP16 accumulate", "fp16"),
    "fp8": ("FP8 tensor core, FP32 accumulate", "fp32"),
    "fp8_acc16": ("FP8 tensor core, FP16 accumulate", "fp16"),
    "fp4": ("FP4 tensor core", "fp32"),
    "int8": ("INT8 tensor core (TOPS)", "int32"),
}
# Where a card has no separate FP16-accumulate figure, the FP32-accumulate one applies.
_FALLBACK = {"fp16_acc16": "fp16", "fp8_acc16": "fp8"}

FormFactor = Literal["sxm", "pcie", "nvl", "oam", "superchip", "consumer", "unified"]
Vendor = Literal["nvidia", "amd", "intel", "apple", "other"]
# The software stack a card's kernels run on (the catalog's [platforms] table says which
# engines run on each): NVIDIA CUDA, AMD ROCm/HIP, Apple Metal, Intel oneAPI/SYCL (XPU),
# Intel Gaudi (Habana HPU).
Platform = Literal["cuda", "rocm", "metal", "xpu", "hpu"]
FORM_FACTORS: tuple[str, ...] = get_args(FormFactor)
VENDORS: tuple[str, ...] = get_args(Vendor)
PLATFORMS: tuple[str, ...] = get_args(Platform)


class _Frozen(BaseModel):
    # defer_build: a model's validator is built when it first validates, not at import: a
    # process that reads the catalog from the parse cache (parse_cache.py: unpickled, never
    # validated) builds none of them (~5 ms of every command's start, issue 27)
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Sourced(_Frozen):
    """A value and where it comes from (a datasheet key of ``[sources]`` or an article id)."""

    value: Any
    source: str
    note: str | None = None


class Throughput(_Frozen):
    """Dense throughput at one precision. ``status`` tells unsupported apart from unknown."""

    precision: str
    status: Literal["supported", "unsupported", "unknown"]
    tflops: float | None = None
    sparse_tflops: float | None = None
    source: str | None = None
    note: str | None = None

    @property
    def meaning(self) -> str:
        return PRECISIONS[self.precision][0] + ", dense"


class Interconnect(_Frozen):
    kind: Sourced
    bandwidth_gb_s: Sourced
    direction: Sourced
    peer_to_peer: Sourced
    domain_gpus: Sourced
    host_link: Sourced
    # a bridge sold apart from the card (GeForce RTX 3090): False when a machine of these
    # cards is not assumed to have it fitted, so they talk over host_link (absent: fitted)
    bridge_fitted: Sourced | None = None

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """Per-GPU bandwidth as stored (see :attr:`direction`)."""
        return float(self.bandwidth_gb_s.value) * GB

    @property
    def one_way_bytes_per_s(self) -> float:
        """Per-GPU bandwidth in one direction, what a ring all-reduce step can use."""
        bw = self.bandwidth_bytes_per_s
        return bw / 2 if self.direction.value == "bidirectional" else bw

    @property
    def is_nvlink(self) -> bool:
        return str(self.kind.value).startswith(("nvlink", "infinity"))


class PurchasePrice(_Frozen):
    low: float
    high: float
    currency: str
    date: str
    source: str
    note: str | None = None

    @property
    def typical(self) -> float:
        return (self.low + self.high) / 2


class NoPublicPrice(_Frozen):
    """An explicit "there is no public purchase price": where we looked, and why there is none."""

    source: str
    note: str


class PlatformInfo(_Frozen):
    """One software stack: its name and the engines that run on it, each with its source.
    A refusal names the engines that run there instead, from this list, so that it never
    points to an engine ``--engine`` does not take."""

    name: str
    engines: dict[str, str]  # engine -> source key
    note: str | None = None


class GPU(_Frozen):
    """One physical GPU variant (form factor x memory), every figure with its source."""

    id: str
    name: str
    vendor: Vendor
    family: str
    form_factor: FormFactor
    form_factor_source: str
    default_variant: bool = False
    aliases: tuple[str, ...] = ()
    platform: Sourced
    engines: Sourced | None = None  # only where the card runs fewer engines than its platform
    architecture: Sourced
    compute_capability: Sourced
    launch_year: Sourced
    memory_gb: Sourced
    memory_usable_mib: Sourced
    memory_type: Sourced
    bandwidth_gb_s: Sourced
    tdp_w: Sourced
    purchase_price: PurchasePrice | None = None
    no_public_price: NoPublicPrice | None = None
    throughput: dict[str, Throughput]
    interconnect: Interconnect

    user_spec: bool = False  # described by the user (--gpu 12GB, --gpu-spec), not the catalog

    @model_validator(mode="after")
    def _one_price_statement(self) -> GPU:
        if self.purchase_price is not None and self.no_public_price is not None:
            raise ValueError("give purchase_price or no_public_price, not both")
        if self.platform.value not in PLATFORMS:
            raise ValueError(f"platform must be one of {', '.join(PLATFORMS)}")
        return self

    @property
    def unified_memory(self) -> bool:
        """CPU and GPU share one memory (Apple M-series, DGX Spark, Strix Halo)."""
        return self.form_factor == "unified"

    # --- conveniences, all in base units
    @property
    def memory_bytes(self) -> int:
        """Memory as marketed, in bytes (GB = 10^9)."""
        return int(float(self.memory_gb.value) * GB)

    @property
    def usable_memory_bytes(self) -> int:
        """Memory a process can see (nvidia-smi total), in bytes."""
        return int(self.memory_usable_mib.value) * MiB

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return float(self.bandwidth_gb_s.value) * GB

    @property
    def tdp_watts(self) -> float:
        return float(self.tdp_w.value)

    def tflops(self, precision: str) -> float | None:
        """Dense TFLOPS at ``precision`` (None if unsupported or unknown)."""
        t = self.throughput_at(precision)
        return t.tflops if t.status == "supported" else None

    def throughput_at(self, precision: str) -> Throughput:
        if precision not in PRECISIONS:
            raise NotFoundError("precision", precision, PRECISIONS)
        t = self.throughput.get(precision)
        if t is None and precision in _FALLBACK:
            base = self.throughput.get(_FALLBACK[precision])
            if base is not None:
                return base.model_copy(update={"precision": precision, "note": (
                    f"same as {_FALLBACK[precision]}: this card has no separate FP16-accumulate "
                    "rate")})
        return t or Throughput(precision=precision, status="unknown")

    def supports(self, precision: str) -> bool:
        return self.throughput_at(precision).status == "supported"

    def source_refs(self) -> list[tuple[str, str]]:
        """Every ``(field, source key)`` pair of this GPU: what each value rests on."""
        refs = [("form_factor", self.form_factor_source), ("platform", self.platform.source)]
        if self.engines is not None:
            refs.append(("engines", self.engines.source))
        refs += [(name, getattr(self, name).source) for name in _SOURCED_FIELDS]
        refs += [(f"tflops.{k}", t.source) for k, t in self.throughput.items() if t.source]
        ic = self.interconnect
        refs += [(f"interconnect.{n}", getattr(ic, n).source) for n in _INTERCONNECT_FIELDS]
        price = self.purchase_price or self.no_public_price
        if price is not None:
            field = "purchase_price" if self.purchase_price else "no_public_price"
            refs.append((f"{field}.source", price.source))
        return refs


# How engines are named in sentences (the CLI ids are the keys): data/engines.toml.
ENGINE_LABELS = engine_labels()

# Engines that run diffusion pipelines; the others run language models.
_DIFFUSION_ENGINES = ("diffusers", "comfyui")


def _same_kind(engine: str, runs: tuple[str, ...]) -> list[str]:
    """The engines of ``runs`` that do the job ``engine`` does (a language model or a
    diffusion pipeline), in the catalog's order."""
    diffusion = engine in _DIFFUSION_ENGINES
    return [e for e in runs if (e in _DIFFUSION_ENGINES) == diffusion]


_SOURCED_FIELDS = ("architecture", "compute_capability", "launch_year", "memory_gb",
                   "memory_usable_mib", "memory_type", "bandwidth_gb_s", "tdp_w")
_INTERCONNECT_FIELDS = ("kind", "bandwidth_gb_s", "direction", "peer_to_peer", "domain_gpus",
                        "host_link")
ARTICLE_FACT = re.compile(r"S([1-9]|[12]\d|30)$")


class QuotedFigure(_Frozen):
    """A throughput figure as an article quoted it, kept to reproduce the article."""

    set: str
    precision: str
    gpu: str
    value: float
    source: str
    note: str | None = None


class Catalog(_Frozen):
    gpus: tuple[GPU, ...]
    sources: dict[str, str]
    quoted: tuple[QuotedFigure, ...] = ()
    platforms: dict[str, PlatformInfo] = {}

    def engines_for(self, gpu: GPU) -> tuple[str, ...] | None:
        """The engines that run on ``gpu``: its own list where it has one, else its
        platform's; None when the catalog does not describe its platform (any engine)."""
        if gpu.engines is not None:
            return tuple(gpu.engines.value)
        info = self.platforms.get(str(gpu.platform.value))
        return tuple(info.engines) if info else None

    def engine_problem(self, gpu: GPU, engine: str) -> Message | None:
        """Why ``engine`` cannot run on ``gpu`` (None when it can), with what runs instead."""
        info = self.platforms.get(str(gpu.platform.value))
        if info is None:
            return None
        runs = self.engines_for(gpu)
        if runs is None or engine in runs:
            return None
        label = ENGINE_LABELS.get(engine, engine)
        where = data_text(info.name) if gpu.engines is None else gpu.name
        same = [ENGINE_LABELS.get(e, e) for e in _same_kind(engine, runs)]
        instead = Join(same or [ENGINE_LABELS.get(e, e) for e in runs], last=" or ")
        if gpu.engines is not None and gpu.engines.note:
            return msg("engine.not_here.note", "{engine} does not run on {where}; {instead} do "
                       "({note})", engine=label, where=where, instead=instead,
                       note=data_text(gpu.engines.note))
        return msg("engine.not_here", "{engine} does not run on {where}; {instead} do",
                   engine=label, where=where, instead=instead)

    def get(self, gpu_id: str) -> GPU:
        return resolve_gpu(gpu_id, self).gpu

    def by_id(self) -> dict[str, GPU]:
        return {g.id: g for g in self.gpus}

    def quoted_sets(self) -> list[str]:
        return sorted({f"{q.set}:{q.precision}" for q in self.quoted})

    def quoted_figure(self, set_precision: str, gpu_id: str) -> QuotedFigure | None:
        name, _, precision = set_precision.partition(":")
        for q in self.quoted:
            if q.set == name and q.precision == precision and q.gpu == gpu_id:
                return q
        return None

    def source_url(self, key: str) -> str:
        """A source key's URL, or the article fact id itself (S1..S30)."""
        return self.sources.get(key, key)

    def knows_source(self, key: str) -> bool:
        """A key of ``[sources]`` or an article fact id (S1..S30)."""
        return key in self.sources or bool(ARTICLE_FACT.match(key))


# ------------------------------------------------------------------------ loading

def _parse_gpu(raw: dict[str, Any], path: Path, index: int) -> GPU:
    raw = dict(raw)
    tflops = raw.pop("tflops", {})
    throughput: dict[str, Throughput] = {}
    for key, entry in tflops.items():
        if key not in PRECISIONS:
            raise DataError(path, f"gpu {raw.get('id', '?')!r}: unknown precision {key!r}; use one "
                            f"of {', '.join(PRECISIONS)}", row=index, field=f"tflops.{key}")
        if not isinstance(entry, dict) or "source" not in entry:
            gid = raw.get("id", "?")
            raise DataError(path, f"gpu {gid!r}: needs {{value = ..., source = ...}} or "
                            "{unsupported = true, source = ...}", row=index, field=f"tflops.{key}")
        if entry.get("unsupported"):
            throughput[key] = Throughput(precision=key, status="unsupported",
                                         source=entry["source"], note=entry.get("note"))
        else:
            throughput[key] = Throughput(
                precision=key, status="supported", tflops=entry.get("value"),
                sparse_tflops=entry.get("sparse"), source=entry["source"], note=entry.get("note"))
    raw["throughput"] = throughput
    if "aliases" in raw:
        raw["aliases"] = tuple(raw["aliases"])
    return GPU.model_validate(raw)


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Read a catalog file (the shipped one by default). Errors name the file, row and field."""
    import tomllib  # only on a parse: a start reads the parse cache (parse_cache.py)

    if path is None:
        text = resources.files("whichgpu.catalog").joinpath("data/gpus.toml").read_text("utf-8")
        path = Path("whichgpu/catalog/data/gpus.toml")
    else:
        path = Path(path)
        try:
            text = path.read_text("utf-8")
        except OSError as exc:
            raise DataError(path, f"cannot read the file ({exc.strerror})") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataError(path, f"not valid TOML: {exc}") from exc
    gpus = []
    for i, raw in enumerate(data.get("gpu", []), start=1):
        try:
            gpus.append(_parse_gpu(raw, path, i))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            gid = raw.get("id", "?")
            raise DataError(path, f"gpu {gid!r}: {err['msg']}", row=i, field=field) from exc
    ids = [g.id for g in gpus]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise DataError(path, f"duplicate gpu ids: {', '.join(sorted(dupes))}")
    try:
        quoted = tuple(QuotedFigure.model_validate(q) for q in data.get("quoted", []))
    except ValidationError as exc:
        raise DataError(path, str(exc.errors()[0]["msg"]), field="quoted") from exc
    platforms: dict[str, PlatformInfo] = {}
    for key, raw in data.get("platforms", {}).items():
        if key not in PLATFORMS:
            raise DataError(path, f"unknown platform {key!r}; use one of {', '.join(PLATFORMS)}",
                            field=f"platforms.{key}")
        try:
            platforms[key] = PlatformInfo.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise DataError(path, f"platform {key!r}: {err['msg']}",
                            field=f"platforms.{key}.{field}") from exc
    catalog = Catalog(gpus=tuple(gpus), sources=data.get("sources", {}), quoted=quoted,
                      platforms=platforms)
    for key, info in platforms.items():
        for engine, src in info.engines.items():
            if not catalog.knows_source(src):
                raise DataError(path, f"platform {key!r}: unknown source {src!r} for {engine}",
                                field=f"platforms.{key}.engines.{engine}")
    for i, g in enumerate(catalog.gpus, start=1):
        for field, key in g.source_refs():
            if not catalog.knows_source(key):
                raise DataError(path, f"gpu {g.id!r}: unknown source {key!r}; name a key of "
                                "[sources] or an article fact (S1...S30)", row=i, field=field)
    return catalog


@cache
def default_catalog() -> Catalog:
    """The catalog shipped with the package (loaded once; parsed once per change of the file
    or of this module, see parse_cache.py)."""
    from whichgpu.parse_cache import cached_parse

    data = resources.files("whichgpu.catalog").joinpath("data/gpus.toml")
    if not isinstance(data, Path):  # a zipped package: parse each time
        return load_catalog()
    return cached_parse("gpus", data, Path(__file__), load_catalog, Catalog)


# ------------------------------------------------------------------------ id resolution

_FORM_WORDS = {
    "sxm": "sxm", "sxm2": "sxm", "sxm4": "sxm", "sxm5": "sxm", "hgx": "sxm", "dgx": "sxm",
    "pcie": "pcie", "pcie4": "pcie", "pcie5": "pcie", "pci": "pcie",
    "nvl": "nvl", "oam": "oam",
}
_NOISE = {"nvidia", "amd", "geforce", "tesla", "instinct", "gpu", "tensor", "core", "hbm3",
          "hbm3e", "hbm2e", "hbm2", "gddr6", "gddr6x", "gddr7", "generation", "x1"}


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _tokens(text: str) -> list[str]:
    s = text.lower()
    s = re.sub(r"\b(\d+)\s*(gb|g)\b", r" \1gb ", s)  # "80 GB" -> "80gb" (not "A10G")
    s = re.sub(r"(?<=[a-z])(?=\d{2,}gb)", " ", s)
    return [t for t in re.split(r"[^a-z0-9]+", s) if t]


class Resolution(_Frozen):
    """The GPU an id resolved to, and a note when the id was ambiguous."""

    gpu: GPU
    query: str
    # a Message, kept as one (validated, pydantic would make it a plain str: the page then
    # could not say it in its own words)
    note: Annotated[str | None, SkipValidation] = None
    candidates: tuple[str, ...] = ()


_ID_KEYS: dict[int, tuple[tuple[GPU, ...], dict[str, GPU], dict[str, GPU]]] = {}


def _id_keys(gpus: tuple[GPU, ...]) -> tuple[dict[str, GPU], dict[str, GPU]]:
    """Each GPU by its normalised id and aliases (the last one wins, as the catalog is read),
    and by the same keys without hyphens (the first one wins): built once per catalog (the
    calibration refits resolve about 17,000 ids, each of which normalised every name again)."""
    hit = _ID_KEYS.get(id(gpus))
    if hit is not None and hit[0] is gpus:
        return hit[1], hit[2]
    by_key: dict[str, GPU] = {}
    for g in gpus:
        for key in (g.id, *g.aliases):
            by_key[_norm(key)] = g
    compact: dict[str, GPU] = {}
    for k, v in by_key.items():
        compact.setdefault(k.replace("-", ""), v)
    if len(_ID_KEYS) >= 16:  # catalogs made by tests come and go
        _ID_KEYS.clear()
    _ID_KEYS[id(gpus)] = (gpus, by_key, compact)
    return by_key, compact


def resolve_gpu(text: str, catalog: Catalog | None = None, *, strict: bool = False) -> Resolution:
    """Resolve a forgiving GPU id: 'h100', 'H100-SXM', 'nvidia-h100-sxm5-80gb', 'RTX 4090 24GB'.

    An ambiguous id ('h100') picks the family's default variant and says which others exist;
    with ``strict=True`` ambiguity is an error instead (price sources use this, so that an
    unknown form factor is reported rather than guessed).
    """
    catalog = catalog or default_catalog()
    query = str(text).strip()
    norm = _norm(query)
    by_key, compact = _id_keys(catalog.gpus)
    if norm in by_key:
        return Resolution(gpu=by_key[norm], query=query)
    if norm.replace("-", "") in compact:
        return Resolution(gpu=compact[norm.replace("-", "")], query=query)

    tokens = [t for t in _tokens(query) if t not in _NOISE]
    form = next((_FORM_WORDS[t] for t in tokens if t in _FORM_WORDS), None)
    mem = next((int(t[:-2]) for t in tokens if re.fullmatch(r"\d+gb", t)), None)
    rest = [t for t in tokens if t not in _FORM_WORDS and not re.fullmatch(r"\d+gb", t)]
    fam_text = "".join(rest)
    families = {g.family.replace("-", ""): g.family for g in catalog.gpus}
    family = families.get(fam_text) or families.get(fam_text.replace("rtx", "rtx"))
    if family is None and fam_text:
        # "rtx4090" / "4090" / "a6000": match a family whose compact name ends with it.
        matches = [f for k, f in families.items() if k == fam_text or k.endswith(fam_text)
                   or k == "rtx" + fam_text]
        family = matches[0] if len(matches) == 1 else None
    if family is None:
        named = _named_by_words(rest, catalog)
        if named is not None:
            return Resolution(gpu=named, query=query)
        if _LAPTOP_WORDS & set(tokens) or {"max", "q"} <= set(tokens):
            raise LaptopGPU(query, gpu_suggestions(query, catalog))
        raise UnknownGPU(query, gpu_suggestions(query, catalog))

    candidates = [g for g in catalog.gpus if g.family == family]
    # Memory first: an "A100-PCIE-40GB" is a 40 GB card before it is a PCIe one. A size no
    # variant has is refused, never swapped for another card's (an 8 GB RTX 4060 Ti is not
    # the 16 GB one: its fit, and often its bandwidth and clocks, differ).
    if mem:
        narrowed = [g for g in candidates
                    if abs(float(g.memory_gb.value) - mem) <= 0.08 * mem]
        if not narrowed:
            raise MemoryNotInCatalog(query, mem, candidates)
        candidates = narrowed
    if form:
        narrowed = [g for g in candidates if g.form_factor == form]
        if not narrowed and strict and len(candidates) == 1 and mem:
            raise NotFoundError("GPU", query, [g.id for g in candidates],
                                hint=msg("gpu.no_form_variant", "the catalog has no {form} "
                                         "variant of that size", form=form))
        candidates = narrowed or candidates
    if len(candidates) == 1:
        return Resolution(gpu=candidates[0], query=query)
    ids = tuple(g.id for g in candidates)
    if strict:
        raise NotFoundError("GPU", query, ids,
                            hint=msg("gpu.ambiguous.strict", "ambiguous: it could be {ids}; "
                                     "name the variant", ids=Join(ids)))
    chosen = next((g for g in candidates if g.default_variant), candidates[0])
    note = msg("gpu.ambiguous", "{query!r} is ambiguous: {ids} exist; using {chosen}. Name "
               "the variant to choose another.", query=query, ids=Join(ids), chosen=chosen.id)
    return Resolution(gpu=chosen, query=query, note=note, candidates=ids)


class MemoryNotInCatalog(NotFoundError):
    """A GPU name whose stated memory no catalog variant of its family has ("RTX 4060 Ti
    8GB", "M4 Max 36GB"): refused with the variants that exist and how to describe the card."""

    def __init__(self, name: str, mem_gb: int, variants: list[GPU]) -> None:
        have = Join([f"{g.id} ({float(g.memory_gb.value):g} GB)" for g in variants])
        InputError.__init__(self, msg(
            "gpu.memory_not_in_catalog",
            "no {gb} GB variant of {name!r} in the catalog, which has {have}: name one of "
            "them, or describe your card with {gpu} (the fit only) or {spec} (its bandwidth "
            "and clocks may differ from the catalog card's)", gb=mem_gb, name=name, have=have,
            gpu=Field("gpu", f"{mem_gb}GB"),
            spec=Field("gpu_spec", f"memory={mem_gb}GB,bandwidth=...,fp16=...")))
        self.kind, self.name = "GPU", name
        self.suggestions = [g.id for g in variants]


class UnknownGPU(NotFoundError):
    """A GPU id that names no catalog GPU, with the closest catalog ids."""

    def __init__(self, name: str, suggestions: list[str]) -> None:
        kind, hint = msg("kind.gpu", "GPU"), msg("gpu.list_hint", "'whichgpu gpus' lists them")
        InputError.__init__(self, msg(
            "unknown.near.hint", "unknown {kind} {name!r}: did you mean {near}? ({hint})",
            kind=kind, name=name, near=Join(suggestions), hint=hint) if suggestions else msg(
            "unknown.hint", "unknown {kind} {name!r} ({hint})", kind=kind, name=name, hint=hint))
        self.kind, self.name, self.suggestions = "GPU", name, suggestions


# Words that name a laptop part: a laptop "RTX 5090" is another chip than the desktop card
# (the RTX 5090 Laptop GPU launched at CES 2025: GB203, 24 GB GDDR7 on a 256-bit bus, 28 Gbps
# = 896 GB/s, up to 175 W (hothardware.com, 2025-01-02); the desktop card: GB202, 32 GB on 512
# bits, 1,792 GB/s, 575 W), so the closest desktop name is never taken for it.
_LAPTOP_WORDS = {"laptop", "mobile", "notebook", "maxq"}


class LaptopGPU(NotFoundError):
    """A laptop GPU ("RTX 5090 Laptop", "RTX 4080 Max-Q"): the catalog has none, and the
    desktop card of the same name is a different chip, so it is refused with how to describe
    it rather than answered as the desktop card."""

    def __init__(self, name: str, suggestions: list[str]) -> None:
        InputError.__init__(self, msg(
            "gpu.laptop",
            "{name!r} is a laptop GPU: the catalog has none, and a laptop part is another chip "
            "than the desktop card of the same name, with less memory and bandwidth and a lower "
            "power limit; describe yours with {spec} from its maker's specifications (the "
            "desktop cards nearest by name: {near})", name=name, near=Join(suggestions),
            spec=Field("gpu_spec", "memory=...,bandwidth=...,fp16=...")))
        self.kind, self.name, self.suggestions = "GPU", name, suggestions


def _named_by_words(words: list[str], catalog: Catalog) -> GPU | None:
    """The GPU whose id or alias words all appear in ``words`` ("RTX PRO 6000 Blackwell
    Server Edition" holds rtx, pro, 6000, server: rtx-pro-6000-server); the most specific
    one when several do, None when none or a tie."""
    have = set(words)
    best: list[tuple[int, GPU]] = []
    for g in catalog.gpus:
        for key in (g.id, *g.aliases):
            parts = [t for t in _norm(key).split("-") if t not in _NOISE]
            # every word of the id is typed, and every other word typed is a filler word
            # ("super" is not: an RTX 4070 SUPER is not an RTX 4070)
            if parts and set(parts) <= have and have - set(parts) <= _FILLER:
                best.append((len(parts), g))
    if not best:
        return None
    top = max(n for n, _ in best)
    winners = {g.id: g for n, g in best if n == top}
    return next(iter(winners.values())) if len(winners) == 1 else None


_FILLER = {"blackwell", "edition", "generation", "ada", "lovelace", "ampere", "hopper",
           "graphics", "card", "founders", "fe", "macbook", "mac", "studio", "mini", "pro",
           "desktop", "workstation", "gpu", "apple", "intel", "radeon", "arc", "ryzen"}
_MODEL_NUMBER = re.compile(r"\d{3,}")


def _fix_letter_digits(text: str) -> str:
    """Letters typed for digits inside a model number: "h1OO" -> "h100", "a6ooo" -> "a6000"."""
    prev = None
    while prev != text:
        prev = text
        text = re.sub(r"(?<=\d)[oO]|[oO](?=\d)", "0", text)
    return text


def gpu_suggestions(text: str, catalog: Catalog | None = None, n: int = 3) -> list[str]:
    """Catalog ids closest to ``text``, family first: a model number the user typed finds
    its family ("4060tii" -> rtx-4060-ti-16gb, not rtx-4090); letters typed for digits are
    read as digits ("h1OO" -> the h100 variants); otherwise the closest ids, aliases and
    family names, each family standing for its variants (default variant first)."""
    catalog = catalog or default_catalog()
    by_family: dict[str, list[GPU]] = {}
    for g in catalog.gpus:
        by_family.setdefault(g.family, []).append(g)
    for members in by_family.values():
        members.sort(key=lambda g: not g.default_variant)
    names: dict[str, str] = {}  # compact id / alias / family -> family
    for g in catalog.gpus:
        for key in (g.id, *g.aliases, g.family):
            names.setdefault(_norm(key).replace("-", ""), g.family)
    words = [t for t in _tokens(_fix_letter_digits(str(text))) if t not in _NOISE]
    query = "".join(words)
    if not query:
        return []
    families: list[str] = []
    if query in names:
        families.append(names[query])
    numbers = _MODEL_NUMBER.findall(query)
    if numbers:
        with_number = {f for key, f in names.items()
                       if any(num in _MODEL_NUMBER.findall(key) for num in numbers)}
        families += sorted(with_number, key=lambda f: (-max(
            difflib.SequenceMatcher(None, query, k).ratio() for k, ff in names.items()
            if ff == f), f))  # ties by name: the same suggestions on every run
    for key in closest(query, names, n=2 * n):
        families.append(names[key])
    out: list[str] = []
    for f in dict.fromkeys(families):
        out += [g.id for g in by_family[f] if g.id not in out]
    return out[:n]


def family_ids(text: str | None, catalog: Catalog | None = None,
               ) -> tuple[list[str] | None, str | None]:
    """The catalog ids a GPU argument covers, and a note when it covers several.

    A family name ("h100") covers all its variants; a precise id covers itself; no text covers
    everything (``None``). Used by price listings and history (CLI and web).
    """
    if not text:
        return None, None
    res = resolve_gpu(text, catalog)
    if res.candidates:
        ids = list(res.candidates)
        return ids, msg("gpu.family", "{query!r} covers {ids}; showing all of them",
                        query=text, ids=Join(ids))
    return [res.gpu.id], None


def get_gpu(gpu_id: str, catalog: Catalog | None = None) -> GPU:
    """The catalog GPU for a forgiving id (see :func:`resolve_gpu`)."""
    return resolve_gpu(gpu_id, catalog).gpu
