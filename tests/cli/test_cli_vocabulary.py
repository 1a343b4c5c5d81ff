"""One concept, one name on the command line (issue 31): the flags are read from the real
command tree (every command and subcommand typer builds from the request models), so a new
field that names a known concept differently, or gives one flag two meanings, fails here."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
import typer

from whichgpu.answers import requests as req
from whichgpu.answers.fields import cli_of, option_flags
from whichgpu.cli.app import app

# Field names that mean the same thing, and the one flag every command says it with.
CONCEPTS: dict[str, tuple[frozenset[str], str]] = {
    "the GPU (a catalog id, or your card's memory)": (frozenset({"gpu"}), "--gpu"),
    "how many cards": (frozenset({"count", "gpus"}), "--count"),
    "compare only these GPUs": (frozenset({"only"}), "--only"),
    "the price list": (frozenset({"prices"}), "--prices"),
    "the display currency": (frozenset({"currency"}), "--currency"),
}
# The commands that list GPUs, each of which takes --only.
LISTS_GPUS = (req.Recommend, req.Checklist, req.Gpus, req.Memory)


def _walk(command, path=()):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _walk(sub, (*path, name))


def _options() -> dict[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """Every command path -> {parameter name: its option spellings}, from the click tree."""
    root = typer.main.get_command(app)
    out = {}
    for path, command in _walk(root):
        opts = {}
        for p in command.params:
            if getattr(p, "param_type_name", "") == "option" and p.name:
                opts[p.name.removesuffix("__as_option")] = tuple(p.opts)
        out[path] = opts
    return out


def test_every_command_is_in_the_tree():
    paths = {" ".join(p) for p in _options()}
    assert {m.COMMAND for m in req.COMMANDS} <= paths


def test_one_field_has_one_main_flag_in_every_command():
    """The same field name is spelt the same way wherever it is an option."""
    main: dict[str, set[str]] = defaultdict(set)
    for path, opts in _options().items():
        for name, spellings in opts.items():
            if path and spellings:
                main[name].add(spellings[0])
    assert {n: f for n, f in main.items() if len(f) > 1} == {}


def _concept(name: str) -> str:
    """A field's concept: its group in CONCEPTS, else its own name."""
    return next((c for c, (names, _) in CONCEPTS.items() if name in names), name)


def test_one_flag_means_one_concept_in_every_command():
    """No spelling (alias included) stands for two different things."""
    meaning: dict[str, set[str]] = defaultdict(set)
    for path, opts in _options().items():
        for name, spellings in opts.items():
            if path:
                for s in spellings:
                    meaning[s].add(_concept(name))
    assert {s: n for s, n in meaning.items() if len(n) > 1} == {}


@pytest.mark.parametrize("concept", sorted(CONCEPTS))
def test_a_concept_has_one_flag_everywhere(concept):
    names, flag = CONCEPTS[concept]
    seen = {}
    for path, opts in _options().items():
        for name in names & set(opts):
            seen[" ".join(path)] = opts[name][0]
    assert seen, concept
    assert {cmd: f for cmd, f in seen.items() if f != flag} == {}


def test_the_old_spelling_of_the_card_count_still_works():
    assert option_flags(req.Memory, "gpus") == ("--count", "--gpus")


@pytest.mark.parametrize("model", LISTS_GPUS, ids=lambda m: m.COMMAND)
def test_every_command_that_lists_gpus_takes_only(model):
    assert option_flags(model, "only") == ("--only",)


@pytest.mark.parametrize("model", [m for m in req.COMMANDS if "gpu" in m.model_fields
                                   and cli_of(m, "gpu").positional],
                         ids=lambda m: m.COMMAND)
def test_a_positional_gpu_is_also_taken_as_gpu(model):
    assert option_flags(model, "gpu") == ("--gpu",)


# ------------------------------------------------------------------ behaviour

def test_gpu_as_argument_or_option_gives_the_same_answer(cli):
    a = cli("gpu", "rtx-4090", "--json")
    b = cli("gpu", "--gpu", "rtx-4090", "--json")
    assert a.code == b.code == 0
    assert a.json() == b.json()


def test_prices_list_takes_gpu(cli):
    a = cli("prices", "list", "h100", "--prices", "article-000", "--json")
    b = cli("prices", "list", "--gpu", "h100", "--prices", "article-000", "--json")
    assert a.code == b.code == 0 and a.json() == b.json()
    assert {o["gpu"] for o in b.json()["offers"]} == {"h100-sxm"}


def test_a_gpu_given_as_argument_and_option_is_refused(cli):
    r = cli("gpu", "rtx-4090", "--gpu", "h100")
    assert r.code == 2 and "given twice" in r.err and "'h100'" in r.err


def test_a_required_gpu_missing_either_way_is_a_usage_error(cli):
    r = cli("gpu")
    assert r.code == 2 and "--gpu" in r.err


@pytest.mark.parametrize("args", [
    ("memory", "llama-3.1-8b", "--gpu", "h100", "--gpu", "a100"),
    ("speed", "llama-3.1-8b", "--gpu", "h100", "--count", "2", "--count=4"),
    ("memory", "llama-3.1-8b", "--gpus", "2", "--count", "4"),
    ("recommend", "llama-3.1-8b", "--prices", "article-000", "--prices", "vramfarm-2026-11"),
    ("memory", "llama-3.1-8b", "-ngl", "10", "--gpu-layers", "20"),
])
def test_a_single_valued_option_given_twice_is_a_usage_error(cli, args):
    r = cli(*args)
    lines = [line for line in r.err.splitlines() if line.strip()]
    assert r.code == 2 and len(lines) == 1, r
    assert "given 2 times" in r.err and "give it once" in r.err


def test_a_repeatable_option_may_be_repeated(cli):
    r = cli("memory", "qwen3-30b-a3b", "--quant", "q4_k_m", "-ot", "exps=CPU", "-ot",
            "blk.0=CPU", "--json")
    assert r.code == 0, r.err


def test_count_and_its_old_spelling_ask_the_same(cli):
    a = cli("memory", "llama-3.1-70b", "--quant", "awq", "--gpu", "l40s", "--count", "2", "--json")
    b = cli("memory", "llama-3.1-70b", "--quant", "awq", "--gpu", "l40s", "--gpus", "2", "--json")
    assert a.code == b.code == 0
    assert a.json()["target"] == b.json()["target"]
    assert a.json()["target"]["count"] == 2


def test_only_narrows_the_lists_of_gpus(cli):
    gpus = json.loads(cli("gpus", "--only", "rtx-4090,h100-sxm", "--json").out)
    assert {g["id"] for g in gpus["gpus"]} == {"rtx-4090", "h100-sxm"}
    mem = cli("memory", "llama-3.1-70b", "--quant", "awq", "--only", "a100-80gb-sxm,l40s",
              "--json").json()
    assert {f["gpu"] for f in mem["gpus_that_fit"]} <= {"a100-80gb-sxm", "l40s"}
    assert {f["gpu"] for f in mem["gpus_that_fit"]}
    assert cli("gpus", "--only", "h10").code == 2
