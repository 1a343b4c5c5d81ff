"""Presets shipped with whichgpu: real config files under ``models/presets/<alias>/`` and an
index (``presets/index.toml``) with display names, Hub ids and official parameter counts.

Names resolve offline, by alias ("llama-3.1-70b"), extra alias ("llama3.1-70b") or Hub id
("meta-llama/Llama-3.1-70B-Instruct"), case-insensitively.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from whichgpu.errors import DataError
from whichgpu.models.spec import ModelSpec

_PRECISIONS = ("exact", "3sf", "2sf", "1sf", "nominal")
# what a checkpoint's safetensors total holds beyond the model's parameters (official_checkpoint)
CHECKPOINT_EXTRAS = ("mtp", "mtp-copies", "fp8-scales")
_FP8_BLOCK = 128  # DeepSeek-style FP8 checkpoints: one float32 scale per 128 x 128 block


@dataclass(frozen=True)
class Preset:
    """One shipped model: where its configs are and what its publisher says it has."""

    alias: str
    name: str
    family: str  # "decoder" or "diffusion"
    hub_ids: tuple[str, ...]
    aliases: tuple[str, ...]
    official_params: float
    official_precision: str
    official_source: str
    config_source: str
    official_active: float | None = None
    official_active_precision: str | None = None
    official_active_excludes_embedding: bool = False
    component_params: dict[str, dict[str, Any]] | None = None  # pipelines: recorded counts
    pipeline: dict[str, Any] | None = None  # pipelines: run-time defaults for this model
    # the official figure is a checkpoint's safetensors total, which also holds these
    official_checkpoint: tuple[str, ...] = ()
    # another model with this architecture (DeepSeek-R1 on DeepSeek-V3's): the Hub id an
    # extra alias names, and the name an answer gives a Hub id that is not the preset's own
    alias_hub_ids: dict[str, str] | None = None
    hub_names: dict[str, str] | None = None

    def named(self, hub_id: str | None) -> str:
        """The name of the model a Hub id of this preset is (the preset's unless listed)."""
        return (self.hub_names or {}).get(hub_id or "", self.name)

    def hub_id_for(self, requested: str) -> str | None:
        """The Hub id an extra alias names (``deepseek-r1``: deepseek-ai/DeepSeek-R1), if any."""
        wanted = _key(requested)
        return next((h for a, h in (self.alias_hub_ids or {}).items() if _key(a) == wanted),
                    None)

    @property
    def folder(self) -> Traversable:
        return _root().joinpath(self.alias)

    def read_json(self, relpath: str) -> Any | None:
        """A JSON file of this preset (``config.json``, ``unet/config.json``) or None."""
        f = self.folder.joinpath(*relpath.split("/"))
        if not f.is_file():
            return None
        try:
            return json.loads(f.read_text("utf-8"))
        except json.JSONDecodeError as exc:
            raise DataError(f"presets/{self.alias}/{relpath}", f"invalid JSON: {exc}") from exc

    def source_text(self) -> str:
        """The official count's source with its key expanded to the URL it stands for."""
        return _expand(self.official_source)

    def config_source_text(self) -> str:
        return _expand(self.config_source)


def _root() -> Traversable:
    return resources.files("whichgpu.models").joinpath("presets")


def _expand(text: str) -> str:
    sources = _index()[1]
    key = re.split(r"[\s(;]", text, maxsplit=1)[0]
    if key in sources:
        return f"{sources[key]}{text[len(key):]}"
    return text


@cache
def _index_data() -> dict[str, Any]:
    """presets/index.toml, parsed (once per change of the file or of this module: see
    parse_cache.py). Read, never changed, by its callers."""
    from pathlib import Path

    from whichgpu.parse_cache import cached_parse

    def parse() -> dict[str, Any]:
        try:
            return tomllib.loads(_root().joinpath("index.toml").read_text("utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise DataError("presets/index.toml", f"invalid TOML: {exc}") from exc

    data = _root().joinpath("index.toml")
    if not isinstance(data, Path):  # a zipped package: parse each time
        return parse()
    return cached_parse("presets-index", data, Path(__file__), parse, dict)


@cache
def _index() -> tuple[tuple[Preset, ...], dict[str, str]]:
    path = "presets/index.toml"
    data = _index_data()
    out = []
    for i, raw in enumerate(data.get("model", []), start=1):
        try:
            alias = raw["alias"]
            family = "diffusion" if _root().joinpath(alias, "model_index.json").is_file() \
                else "decoder"
            p = Preset(
                alias=alias, name=raw["name"], family=family,
                hub_ids=tuple(raw.get("hub_ids", ())), aliases=tuple(raw.get("aliases", ())),
                official_params=float(raw["official_params"]),
                official_precision=raw["official_precision"],
                official_source=raw["official_source"], config_source=raw["config_source"],
                official_active=(float(raw["official_active"]) if "official_active" in raw
                                 else None),
                official_active_precision=raw.get("official_active_precision"),
                official_active_excludes_embedding=bool(
                    raw.get("official_active_excludes_embedding", False)),
                component_params=raw.get("component_params"), pipeline=raw.get("pipeline"),
                official_checkpoint=tuple(raw.get("official_checkpoint", ())),
                alias_hub_ids=raw.get("alias_hub_ids"), hub_names=raw.get("hub_names"))
        except KeyError as exc:
            raise DataError(path, "required field is missing", row=i,
                            field=exc.args[0]) from exc
        if p.official_precision not in _PRECISIONS:
            raise DataError(path, f"must be one of {', '.join(_PRECISIONS)}", row=i,
                            field="official_precision")
        for field, ids in (("alias_hub_ids", (p.alias_hub_ids or {}).values()),
                           ("hub_names", (p.hub_names or {}).keys())):
            if set(ids) - set(p.hub_ids):
                raise DataError(path, "names a Hub id that is not in hub_ids", row=i,
                                field=field)
        if set(p.alias_hub_ids or {}) - set(p.aliases):
            raise DataError(path, "names an alias that is not in aliases", row=i,
                            field="alias_hub_ids")
        if set(p.official_checkpoint) - set(CHECKPOINT_EXTRAS):
            raise DataError(path, f"entries must be among {', '.join(CHECKPOINT_EXTRAS)}",
                            row=i, field="official_checkpoint")
        out.append(p)
    sources: dict[str, str] = {}
    for key, value in data.get("sources", {}).items():
        if isinstance(value, dict):  # a group of sources ([sources.diffusion])
            sources.update(value)
        else:
            sources[key] = value
    return tuple(out), sources


def presets() -> tuple[Preset, ...]:
    """Every shipped preset, in index order."""
    return _index()[0]


def _key(name: str) -> str:
    """Loose form of a short name: case, spaces, '-', '_' and chat/instruct suffixes ignored."""
    s = name.strip().lower()
    while True:
        shorter = re.sub(r"[-_ ](instruct|it|chat|hf|base|pt)$", "", s)
        if shorter == s:
            return re.sub(r"[\s_\-]", "", s)
        s = shorter


@cache
def _lookup() -> dict[str, Preset]:
    table: dict[str, Preset] = {}
    for p in presets():
        for hub_id in p.hub_ids:
            table[hub_id.lower()] = p
        for name in (p.alias, *p.aliases):
            table.setdefault(_key(name), p)
    by_alias = {p.alias: p for p in presets()}
    for v in variants():
        table.setdefault(v.hub_id.lower(), by_alias[v.preset])
    return table


@dataclass(frozen=True)
class Variant:
    """A published repository with the architecture of a preset but other weights or limits:
    a dated re-release (Qwen3-4B-Instruct-2507), a base model, or the publisher's FP8 copy
    (``<hub id>-FP8``: the same layers with FP8 weights)."""

    hub_id: str
    preset: str  # the alias whose config it is read with
    source: str  # what says the architecture is the same, and what differs
    max_context: int | None = None  # its own max_position_embeddings where it differs
    quantization: str | None = None  # its checkpoint's weight format ("fp8")

    def apply(self, spec: ModelSpec) -> ModelSpec:
        import dataclasses

        differs = []
        if self.max_context and self.max_context != spec.max_context:
            differs.append(f"its context is {self.max_context:,} tokens")
        if self.quantization and self.quantization != spec.quantization:
            differs.append(f"its checkpoint is {self.quantization.upper()}")
        note = (f"{self.hub_id} is read with preset {self.preset}'s config (the same "
                f"architecture; {_expand(self.source)})"
                + (f": {' and '.join(differs)}" if differs else ""))
        return dataclasses.replace(
            spec, name=self.hub_id.split("/")[-1], hub_id=self.hub_id,
            max_context=self.max_context or spec.max_context,
            quantization=self.quantization or spec.quantization, notes=(*spec.notes, note))


_FP8_SUFFIX = "-fp8"


@cache
def variants() -> tuple[Variant, ...]:
    """The index's [[variant]] rows, and the ``-FP8`` repositories its [fp8] table lists (the
    publisher's FP8 copy of a preset's or a variant's Hub id: the same config, FP8 weights)."""
    path = "presets/index.toml"
    data = _index_data()
    aliases = {p.alias: p for p in presets()}
    rows: list[Variant] = []
    for i, raw in enumerate(data.get("variant", []), start=1):
        try:
            v = Variant(hub_id=raw["hub_id"], preset=raw["preset"], source=raw["source"],
                        max_context=raw.get("max_context"),
                        quantization=raw.get("quantization"))
        except KeyError as exc:
            raise DataError(path, "required field is missing", row=i,
                            field=exc.args[0]) from exc
        if v.preset not in aliases:
            raise DataError(path, f"no preset {v.preset!r}", row=i, field="preset")
        rows.append(v)
    own: dict[str, tuple[Preset, Variant | None]] = {
        h.lower(): (p, None) for p in presets() for h in p.hub_ids}
    own.update({v.hub_id.lower(): (aliases[v.preset], v) for v in rows})
    fp8_table = data.get("fp8", {})
    fp8: list[Variant] = []
    for hub_id in fp8_table.get("hub_ids", []):
        if hub_id.lower() not in own:
            raise DataError(path, f"{hub_id!r} is neither a preset's Hub id nor a variant's",
                            field="fp8.hub_ids")
        p, base = own[hub_id.lower()]
        if _stored_quantized(p):
            raise DataError(path, f"{hub_id!r}: preset {p.alias} is stored quantized already",
                            field="fp8.hub_ids")
        fp8.append(Variant(
            hub_id=hub_id + "-FP8", preset=p.alias, quantization="fp8",
            max_context=base.max_context if base else None,
            source=f"{fp8_table.get('source', 'the publisher')}: the FP8 copy of {hub_id}"))
    return (*rows, *fp8)


def _stored_quantized(p: Preset) -> bool:
    data = p.read_json("config.json") or {}
    tc = data.get("text_config")
    text = tc if isinstance(tc, dict) else {}
    return bool(data.get("quantization_config") or text.get("quantization_config"))


def find_variant(name: str) -> Variant | None:
    """The variant row a Hub id names (None for a preset's own id or anything else)."""
    wanted = name.strip().lower()
    return next((v for v in variants() if v.hub_id.lower() == wanted), None)


def find_preset(name: str) -> Preset | None:
    """The preset a user's name means (alias, extra alias or Hub id), or None."""
    table = _lookup()
    text = name.strip()
    if "/" in text:
        return table.get(text.lower())
    exact = next((p for p in presets() if text.lower() in (p.alias, *p.aliases)), None)
    return exact or table.get(_key(text))


def closest_by_hub_id(repo_id: str, n: int = 3) -> list[str]:
    """The shipped Hub ids (presets' and variants') closest to ``repo_id``, as "id (alias)":
    the same organisation first, then by similarity of the names ("Qwen/Qwen3-4B-Instruct-2512"
    -> Qwen/Qwen3-4B-Instruct-2507, Qwen/Qwen3-4B ...)."""
    import difflib

    wanted = repo_id.strip().lower()
    org, _, name = wanted.partition("/")
    ids = {h: p.alias for p in presets() for h in p.hub_ids}
    ids.update({v.hub_id: v.preset for v in variants()})

    def score(hub_id: str) -> tuple[float, float]:
        h_org, _, h_name = hub_id.lower().partition("/")
        ratio = difflib.SequenceMatcher(None, name, h_name).ratio()
        prefix = len(_common_prefix(name, h_name)) / max(len(name), 1)
        return (ratio + prefix + (0.5 if h_org == org else 0.0), -len(h_name))

    ranked = sorted(ids, key=score, reverse=True)
    best = [h for h in ranked if score(h)[0] >= 0.9][:n]
    return [f"{h} ({ids[h]})" for h in best]


def _common_prefix(a: str, b: str) -> str:
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return a[:i]


def preset_names() -> list[str]:
    """Aliases first, then Hub ids: the names suggestions are drawn from."""
    ps = presets()
    return [p.alias for p in ps] + [h for p in ps for h in p.hub_ids]


#: parsed presets, by (the Preset's identity, Hub id, variant): each is parsed once per process,
#: as the index is read once (presets()), and a question about a preset gets the same ModelSpec
#: as the last one, so the memos keyed by a spec's identity (a GGUF recipe, the KV cache)
#: carry over from one question to the next (before: every question parsed its config.json
#: again, and a 70B GGUF memory answer walked three recipes again)
_LOADED: dict[tuple[int, str | None, str | None], tuple[Preset, ModelSpec]] = {}
_LOADED_SIZE = 64  # presets kept (a spec is ~0.1-1 MB of layers; the shipped set is ~100)


def load_preset(p: Preset, *, requested: str | None = None) -> ModelSpec:
    """The ModelSpec of a preset, parsed from its shipped config files (once per preset, Hub
    id and variant; the spec is frozen, so it is shared)."""
    hub_id = None
    if requested and "/" in requested:
        hub_id = next((h for h in p.hub_ids if h.lower() == requested.strip().lower()), None)
    elif requested:  # an extra alias that names another model of this architecture
        hub_id = p.hub_id_for(requested)
    hub_id = hub_id or (p.hub_ids[0] if p.hub_ids else None)
    variant = find_variant(requested) if requested and "/" in requested else None
    if variant is not None and variant.preset != p.alias:
        variant = None
    key = (id(p), hub_id, variant.hub_id if variant is not None else None)
    hit = _LOADED.get(key)
    if hit is not None and hit[0] is p:
        return hit[1]
    spec = _parse_preset(p, hub_id, variant)
    while len(_LOADED) >= _LOADED_SIZE:
        _LOADED.pop(next(iter(_LOADED)), None)
    _LOADED[key] = (p, spec)
    return spec


def _parse_preset(p: Preset, hub_id: str | None, variant: Variant | None) -> ModelSpec:
    import dataclasses

    source = f"preset:{p.alias}"
    if p.family == "diffusion":
        from whichgpu.models.diffusion import parse_pipeline

        recorded = {k: {"params": v["params"], "source": _expand(v.get("source", ""))}
                    for k, v in (p.component_params or {}).items()}
        spec = parse_pipeline(p.read_json, origin=f"presets/{p.alias}", source=source,
                              name=p.named(hub_id), hub_id=hub_id, recorded=recorded,
                              overrides=p.pipeline)
    else:
        from whichgpu.models.config_parse import parse_config

        data = p.read_json("config.json")
        if data is None:
            raise DataError(f"presets/{p.alias}", "config.json is missing")
        spec = parse_config(data, origin=f"presets/{p.alias}/config.json", source=source,
                            hub_id=hub_id, name=p.named(hub_id))
    spec = dataclasses.replace(spec, id=p.alias)
    return variant.apply(spec) if variant is not None else spec


@dataclass(frozen=True)
class PresetRecord:
    """What ``whichgpu models`` lists: a preset with its computed and official counts."""

    alias: str
    name: str
    hub_ids: tuple[str, ...]
    family: str
    params_total: int
    params_active: int
    official_params: float
    official_precision: str
    official_source: str
    aliases: tuple[str, ...] = ()
    compared_params: int = 0  # what official_params describes (a pipeline: its denoiser)

    @property
    def official_error(self) -> float:
        """Relative difference of the computed count from the official one."""
        return self.compared_params / self.official_params - 1

    def to_json(self) -> dict[str, Any]:
        return {"alias": self.alias, "name": self.name, "hub_ids": list(self.hub_ids),
                "aliases": list(self.aliases), "family": self.family,
                "params_total": self.params_total, "params_active": self.params_active,
                "official_params": self.official_params,
                "official_precision": self.official_precision,
                "compared_params": self.compared_params,
                "official_error": round(self.official_error, 6), "source": self.official_source}


def official_compared(spec: ModelSpec, extras: tuple[str, ...] = ()) -> int:
    """The computed count a preset's official figure is about: the denoiser for a pipeline;
    for a checkpoint's safetensors total, the parameters plus ``extras``: the MTP layers, the
    copies of the embedding and LM head some checkpoints store with them (DeepSeek-V3,
    GLM-4.5), and the FP8 block scales (one per 128 x 128 block of every FP8 linear)."""
    if spec.diffusion:
        return spec.diffusion.component(spec.diffusion.denoiser).params
    n = spec.params_total
    if "mtp" in extras:
        n += spec.mtp_params
    if "mtp-copies" in extras:
        n += 2 * spec.vocab_size * spec.hidden_size
    if "fp8-scales" in extras:
        n += sum(-(-g.out_features // _FP8_BLOCK) * -(-g.in_features // _FP8_BLOCK) * g.count
                 for g in spec.linears)
    return n


@cache
def list_presets() -> tuple[PresetRecord, ...]:
    """Every preset with its parameter counts computed from the shipped configs."""
    out = []
    for p in presets():
        spec = load_preset(p)
        out.append(PresetRecord(
            alias=p.alias, name=p.name, hub_ids=p.hub_ids, family=p.family,
            params_total=spec.params_total, params_active=spec.params_active,
            official_params=p.official_params, official_precision=p.official_precision,
            official_source=p.source_text(), aliases=p.aliases,
            compared_params=official_compared(spec, p.official_checkpoint)))
    return tuple(out)
