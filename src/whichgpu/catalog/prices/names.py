"""Provider GPU names -> catalog ids, without collapsing SXM, PCIe and NVL.

Providers and gpuhunt name GPUs their own way ("H100", "NVIDIA H100 80GB HBM3",
"A100-80GB-SXM", "RTX 4090 24GB"). A name maps to a catalog id only on evidence:

1. our own catalog id, spelt exactly;
2. a rule of the reviewed alias table ``data/provider_gpu_names.csv``, most specific first:
   the provider's instance type (``p5.48xlarge`` -> H100 SXM), gpuhunt's name for one
   provider (``gpuhunt:verda``), the provider's own GPU name, gpuhunt's normalised name
   (``gpuhunt``), then rules for any source (``*``);
3. the catalog's own resolution in strict mode ("H100 PCIE" -> h100-pcie), which refuses
   ambiguous names.

What cannot be told apart is *reported* (:class:`NameMatch` with ``gpu=None`` and a reason),
never guessed. A mapped name whose memory disagrees with the catalog (a fractional GPU, a
different card) is reported too.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from whichgpu.catalog.gpus import Catalog, default_catalog, resolve_gpu
from whichgpu.errors import DataError, NotFoundError

TABLE = "data/provider_gpu_names.csv"
GPUHUNT = "gpuhunt"  # rules on gpuhunt's normalised gpu_name, for any gpuhunt provider
SKYPILOT = "skypilot"  # rules on the SkyPilot catalog's AcceleratorName, for any cloud
CATALOGS = (GPUHUNT, SKYPILOT)  # catalogs whose names collapse variants
ANY = "*"
#: Catalog ids agreed with the catalog engineer for cards being added in another branch. A rule
#: may name one before the catalog has it; until then its rows are reported as "catalog has no
#: <id>", never dropped and never matched to another card.
PENDING_IDS = frozenset("""
rtx-3060-12gb rtx-3070 rtx-3080-10gb rtx-3080-12gb rtx-3090-ti rtx-4060-ti-16gb rtx-4070
rtx-4070-super rtx-4070-ti rtx-4070-ti-super rtx-4080 rtx-4080-super rtx-5060-ti-16gb rtx-5070
rtx-5070-ti rtx-5080 rtx-pro-6000-server rtx-pro-6000-ws rtx-pro-6000-maxq rtx-pro-5000
rtx-5000-ada rtx-4000-ada rtx-a5000 rtx-a4000 b300 gb300 h20 h800 l20 mi250x mi210 gaudi3
apple-m3-ultra apple-m4-max apple-m4-pro dgx-spark ryzen-ai-max-395 rx-7900-xtx
radeon-ai-pro-r9700 arc-b580 arc-pro-b60
""".split())
MEMORY_TOLERANCE = 0.12  # GiB vs GB is 7.4 %; providers round


@dataclass(frozen=True)
class AliasRule:
    provider: str  # a provider key, "gpuhunt", "gpuhunt:<provider>" or "*"
    match: str  # "instance" or "name"
    pattern: re.Pattern[str]
    memory_gb: float | None
    gpu: str | None  # None: a known name that must not be mapped (the evidence says why)
    evidence: str
    row: int

    def matches(self, *, name: str, instance: str | None, memory_gb: float | None) -> bool:
        text = instance if self.match == "instance" else name
        if not text or not self.pattern.fullmatch(text.strip()):
            return False
        if self.memory_gb is not None:
            return memory_gb is not None and _close(memory_gb, self.memory_gb)
        return True


@dataclass(frozen=True)
class NameMatch:
    """The catalog id a provider's name maps to, or why it does not map."""

    name: str
    gpu: str | None
    how: str  # the evidence for a match, or the reason for none
    candidates: tuple[str, ...] = ()

    @property
    def mapped(self) -> bool:
        return self.gpu is not None


def provider_key(provider: str | None) -> str:
    """'Lambda Labs' -> 'lambdalabs': how providers are compared."""
    return re.sub(r"[^a-z0-9]+", "", (provider or "").lower())


def _scope(provider: str) -> str:
    """'*', 'gpuhunt', 'gpuhunt:verda' (gpuhunt names of one provider) or a provider key."""
    provider = provider.strip()
    if provider == ANY:
        return ANY
    for via in CATALOGS:
        if provider.startswith(via + ":"):
            return f"{via}:{provider_key(provider.split(':', 1)[1])}"
    return provider_key(provider)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= MEMORY_TOLERANCE * max(a, b)


def load_rules(path: str | Path | None = None, catalog: Catalog | None = None) -> list[AliasRule]:
    """The alias table, checked: valid regexes, known catalog ids, known match kinds."""
    catalog = catalog or default_catalog()
    if path is None:
        text = resources.files("whichgpu.catalog.prices").joinpath(TABLE).read_text("utf-8")
        where: object = f"whichgpu/catalog/prices/{TABLE}"
    else:
        text, where = Path(path).read_text("utf-8"), path
    ids = {g.id for g in catalog.gpus}
    rules = []
    for i, row in enumerate(csv.DictReader(text.splitlines()), start=2):
        if row["match"] not in ("instance", "name"):
            raise DataError(where, "must be 'instance' or 'name'", row=i, field="match")
        try:
            pattern = re.compile(row["pattern"], re.IGNORECASE)
        except re.error as exc:
            raise DataError(where, f"not a valid regex: {exc}", row=i, field="pattern") from exc
        gpu = row["gpu"].strip() or None
        if gpu is not None and gpu not in ids and gpu not in PENDING_IDS:
            raise DataError(where, f"{gpu!r} is not a catalog id", row=i, field="gpu")
        if not row["evidence"].strip():
            raise DataError(where, "every rule needs its evidence", row=i, field="evidence")
        memory = float(row["memory_gb"]) if row["memory_gb"].strip() else None
        rules.append(AliasRule(_scope(row["provider"]), row["match"], pattern, memory, gpu,
                               row["evidence"].strip(), i))
    return rules


@cache
def _default_rules() -> tuple[AliasRule, ...]:
    return tuple(load_rules())


def _ordered(rules: tuple[AliasRule, ...], provider: str, via: str | None) -> list[AliasRule]:
    """Most specific first: the provider's instance rules, its name rules (the catalog's names
    of it first: ``gpuhunt:verda``), the catalog's names (``gpuhunt``, ``skypilot``), any
    source."""
    scopes = [(provider, "instance")]
    if via:
        scopes.append((f"{via}:{provider}", "name"))
    scopes.append((provider, "name"))
    if via:
        scopes.append((via, "name"))
    scopes.append((ANY, "name"))
    return [r for scope in scopes for r in rules if (r.provider, r.match) == scope]


def _candidates(text: str, catalog: Catalog) -> tuple[str, ...]:
    try:
        resolve_gpu(text, catalog, strict=True)
    except NotFoundError as exc:
        return tuple(exc.suggestions)
    return ()


def map_gpu_name(name: str, *, provider: str | None = None, instance: str | None = None,
                 memory_gb: float | None = None, gpuhunt: bool = False,
                 via: str | None = None, catalog: Catalog | None = None,
                 rules: tuple[AliasRule, ...] | None = None) -> NameMatch:
    """Map a provider's GPU name (and instance type, memory per GPU) to a catalog id.

    ``gpuhunt=True`` (or ``via="gpuhunt"``) says ``name`` is gpuhunt's normalised
    ``gpu_name``; ``via="skypilot"`` says it is the SkyPilot catalog's ``AcceleratorName``.
    Both collapse variants ("H100" is SXM or PCIe), so that catalog's rules apply.
    """
    via = GPUHUNT if gpuhunt else via
    catalog = catalog or default_catalog()
    rules = _default_rules() if rules is None else rules
    text = str(name or "").strip()
    if not text:
        return NameMatch(text, None, "no GPU name")
    ids = {g.id: g for g in catalog.gpus}
    match = None
    if text.lower() in ids:
        match = NameMatch(text, text.lower(), "catalog id")
    else:
        for rule in _ordered(rules, provider_key(provider), via):
            if rule.matches(name=text, instance=instance, memory_gb=memory_gb):
                what = f"{rule.provider} {rule.match} rule (row {rule.row}): {rule.evidence}"
                if rule.gpu is None:
                    return NameMatch(text, None, rule.evidence, _candidates(text, catalog))
                if rule.gpu not in ids:  # an agreed id the catalog does not have yet
                    return NameMatch(text, None, f"catalog has no {rule.gpu}", (rule.gpu,))
                match = NameMatch(text, rule.gpu, what)
                break
    if match is None:
        try:
            res = resolve_gpu(text, catalog, strict=True)
            match = NameMatch(text, res.gpu.id, "catalog name")
        except NotFoundError as exc:
            if "ambiguous" in str(exc):
                return NameMatch(text, None, f"ambiguous: it could be {', '.join(exc.suggestions)}",
                                 tuple(exc.suggestions))
            return NameMatch(text, None, "not in the catalog", tuple(exc.suggestions))
    if match.gpu is not None and memory_gb:
        catalog_gb = float(ids[match.gpu].memory_gb.value)
        if not _close(memory_gb, catalog_gb):
            return NameMatch(text, None, f"memory: the provider says {memory_gb:g} GB per GPU, "
                             f"{match.gpu} has {catalog_gb:g} GB (a fractional GPU or another "
                             "card)", (match.gpu,))
    return match
