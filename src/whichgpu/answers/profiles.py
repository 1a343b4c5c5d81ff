"""Saved descriptions of the user's own machine (``whichgpu profile``), applied by
``--profile NAME`` (or the default profile) to every command that asks about that hardware,
and by ``?profile=NAME`` to the REST questions of the server that saved it (named only: a
server applies no default profile to its visitors).

A profile is a few request fields under their request names, kept as the user typed them
(``"host_ram": "64GB"``) in ``profiles.json`` in whichgpu's data folder. Applying one fills a
command's field only where the field means the user's own hardware (``gpu`` is the card of
``memory``, ``speed``, ``fits``, ``recommend`` and ``tco``, never the filter of ``prices
list``) and only where the command line did not set it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from whichgpu.errors import InputError

#: profile key -> the commands where that field is the user's own hardware or money
APPLIES: dict[str, frozenset[str]] = {
    "gpu": frozenset({"memory", "speed", "fits", "recommend", "tco"}),
    "gpu_spec": frozenset({"memory", "speed", "fits", "recommend", "tco"}),
    "count": frozenset({"memory", "speed", "fits", "recommend"}),
    "host_ram": frozenset({"memory", "speed", "fits", "recommend"}),
    "host_memory": frozenset({"memory", "speed", "fits", "recommend"}),
    "kwh_price": frozenset({"tco"}),
    "currency": frozenset({"recommend", "checklist", "tco", "cost", "gpus", "prices list",
                           "compare"}),
}
#: a profile key that a command names otherwise (memory's card count is its ``gpus`` field)
FIELD_OF: dict[tuple[str, str], str] = {("memory", "count"): "gpus"}
KEYS = tuple(APPLIES)


def path() -> Path:
    from whichgpu.paths import data_dir

    return data_dir() / "profiles.json"


def load() -> dict[str, Any]:
    """``{"default": NAME | None, "profiles": {NAME: {key: value}}}`` (empty if none saved)."""
    p = path()
    if not p.is_file():
        return {"default": None, "profiles": {}}
    from whichgpu.user_files import read_text

    try:
        data = json.loads(read_text(p))
    except ValueError as exc:
        raise InputError(f"{p} is not a profiles file ({str(exc)[:100]}); remove it or "
                         "fix it") from None
    if not isinstance(data, dict) or not isinstance(data.get("profiles"), dict):
        raise InputError(f"{p} is not a profiles file; remove it or fix it")
    return {"default": data.get("default"), "profiles": data["profiles"]}


def _write(data: dict[str, Any]) -> None:
    p = path()
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, p)  # never a half-written file


def check(values: dict[str, Any]) -> None:
    """Refuse a value no command would take (said now, not at each later use)."""
    from whichgpu.catalog.user_gpu import resolve_gpu_arg
    from whichgpu.units import check_currency, parse_money, parse_size

    if values.get("gpu") or values.get("gpu_spec"):
        resolve_gpu_arg(values.get("gpu"), values.get("gpu_spec"))
    if values.get("host_ram"):
        parse_size(values["host_ram"])
    if values.get("host_memory"):
        from whichgpu.answers.inputs.host import parse_host

        parse_host(values.get("host_ram"), values["host_memory"], None)
    if values.get("kwh_price"):
        parse_money(values["kwh_price"])
    if values.get("currency"):
        values["currency"] = check_currency(values["currency"])


def save(name: str, values: dict[str, Any], default: bool = False) -> dict[str, Any]:
    name = name.strip()
    if not name or len(name) > 40 or not name.replace("-", "").replace("_", "").isalnum():
        raise InputError(f"a profile name is letters, digits, - and _ (at most 40), got "
                         f"{name!r}")
    kept = {k: v for k, v in values.items() if k in KEYS and v not in (None, "")}
    if not kept:
        raise InputError("a profile needs at least one of --gpu, --gpu-spec, --count, "
                         "--host-ram, --host-memory, --kwh-price, --currency")
    check(kept)
    data = load()
    data["profiles"][name] = kept
    if default:
        data["default"] = name
    _write(data)
    return kept


def remove(name: str) -> None:
    data = load()
    if name not in data["profiles"]:
        raise InputError(_unknown(name, data))
    del data["profiles"][name]
    if data.get("default") == name:
        data["default"] = None
    _write(data)


def _unknown(name: str, data: dict[str, Any]) -> str:
    known = ", ".join(sorted(data["profiles"])) or "none saved"
    return f"no profile {name!r} (profiles: {known}; 'whichgpu profile save NAME' saves one)"


def chosen(name: str | None) -> tuple[str, dict[str, Any]] | None:
    """The profile ``--profile`` names, else the default one, else None."""
    if name is None and not path().is_file():
        return None
    data = load()
    if name is None:
        name = data.get("default")
        if not name or name not in data["profiles"]:
            return None
    if name not in data["profiles"]:
        raise InputError(_unknown(name, data))
    return name, data["profiles"][name]


def fill(command: str, values: dict[str, Any], given: set[str], fields: set[str],
         profile: dict[str, Any]) -> list[str]:
    """Fill ``values`` (a command's typer values) from ``profile`` where the command takes
    the key as the user's hardware and the command line did not give it; the keys filled."""
    filled = []
    own_card = bool(given & {"gpu", "gpu_spec"})  # a card named here: none of the profile's
    for key, value in profile.items():
        if command not in APPLIES.get(key, ()):
            continue
        name = FIELD_OF.get((command, key), key)
        if name not in fields or name in given:
            continue
        if own_card and key in ("gpu", "gpu_spec", "count"):
            continue
        values[name] = value
        filled.append(name)
    return filled


#: REST paths (under /api/v1/) that take ``?profile=NAME``, and the command each answers
REST_PATHS: dict[str, str] = {"memory": "memory", "speed": "speed", "fits": "fits",
                              "recommend": "recommend", "tco": "tco", "cost": "cost",
                              "gpus": "gpus", "checklist": "checklist", "prices": "prices list"}


def fill_query(command: str, params: list[tuple[str, str]], name: str,
               ) -> tuple[list[tuple[str, str]], list[str]]:
    """A REST query with the profile ``name`` filled in where the query left a field out (as
    ``--profile`` fills a command line), and the fields filled. An unknown name is an
    InputError (a 422)."""
    from whichgpu.answers.requests import COMMANDS

    model = next(m for m in COMMANDS if m.COMMAND == command)
    got = chosen(name)
    assert got is not None  # a name was given: chosen() answers or raises
    _label, profile = got
    values: dict[str, Any] = {}
    filled = fill(command, values, {k for k, _ in params}, set(model.model_fields), profile)
    return params + [(k, str(values[k])) for k in filled], filled


def public(data: dict[str, Any] | None = None) -> dict[str, Any]:
    """The saved profiles as the REST API lists them (``GET /api/v1/profiles``)."""
    data = load() if data is None else data
    return {"default": data.get("default"),
            "profiles": [{"name": n, "values": v, "applies_to": sorted(
                {c for k in v for c in APPLIES.get(k, ())})}
                for n, v in sorted(data["profiles"].items())],
            "how": "add profile=NAME to a GET question (memory, speed, fits, recommend, tco, "
                   "cost, gpus, checklist, prices): its values fill the fields the question "
                   "leaves out"}


def detected() -> tuple[dict[str, Any], list[str]]:
    """This machine as profile values (its NVIDIA cards as 'whichgpu bench' finds them, and
    its RAM), and what was found, in words. No GPU found is said, not an error: the RAM is
    still this machine's."""
    from whichgpu.bench.detect import BenchUnavailable, detect_gpus

    values: dict[str, Any] = {}
    said: list[str] = []
    try:
        found = detect_gpus()
    except BenchUnavailable as exc:
        found = []
        said.append(str(exc))
    if found:
        ids = [g.catalog_id for g in found]
        known = [i for i in ids if i is not None]
        if known:
            card = max(set(known), key=known.count)  # mixed cards: the most common one
            values.update(gpu=card, count=known.count(card))
        else:  # no catalog card: by its memory (MiB as the driver reports it)
            mib = found[0].memory_total_mib
            if mib:
                values.update(gpu=f"{mib}MiB", count=len(found))
        names = ", ".join(f"{g.index}: {g.name}" + (f" ({g.catalog_id})" if g.catalog_id
                                                    else "") for g in found)
        said.append(f"found {len(found)} GPU(s) with {found[0].source}: {names}")
    ram = host_ram_bytes()
    if ram:
        values["host_ram"] = f"{ram / 2**30:.1f}GiB"
        said.append(f"host RAM {ram / 2**30:.1f} GiB (the operating system's total)")
    return values, said


def host_ram_bytes() -> int | None:
    """This machine's RAM as the operating system counts it (POSIX sysconf), None if unknown."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None
