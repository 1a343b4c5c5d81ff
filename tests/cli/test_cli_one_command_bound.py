"""A command used alone builds its own options only (cli/lazy.py ``load_module(module, root)``,
cli/bind.py ``only``; issue 27): ``memory`` does not build the options of ``speed`` and the
five ``validate`` commands that share its module, and what it builds is what the whole
module's registration builds for it."""

from __future__ import annotations

import pytest

import whichgpu.cli.bind as bind_module
from whichgpu.cli.app import app
from whichgpu.cli.lazy import load_module


@pytest.fixture
def bound(monkeypatch) -> list[str]:
    """The request models whose typer command gets built, in order."""
    seen: list[str] = []
    build = bind_module.command

    def spy(model, body, **kwargs):
        seen.append(model.COMMAND)
        return build(model, body, **kwargs)

    monkeypatch.setattr(bind_module, "command", spy)
    return seen


def _options(command) -> list[tuple[str, ...]]:
    return [tuple(p.opts) for p in command.params]


def test_memory_alone_binds_memory_alone(bound) -> None:
    commands = load_module("estimate_cmds", "memory")
    assert bound == ["memory"]
    assert "--quant" in {o for opts in _options(commands["memory"]) for o in opts}


def test_checklist_alone_binds_no_recommend(bound) -> None:
    load_module("advise_cmds", "checklist")
    assert bound == ["checklist"]


def test_a_group_gets_every_command_under_it(bound) -> None:
    """``validate`` alone: its five subcommands (bound once per process, whenever first)."""
    group = load_module("estimate_cmds", "validate")["validate"]
    assert sorted(group.commands) == ["fits", "memory", "questions", "serving", "speed"]
    assert all(c.startswith("validate ") for c in bound)


@pytest.mark.parametrize(("module", "root"), [("estimate_cmds", "memory"),
                                              ("estimate_cmds", "speed"),
                                              ("advise_cmds", "recommend"),
                                              ("bench_cmds", "compare")])
def test_alone_or_with_its_module_the_command_is_the_same(module, root) -> None:
    alone = load_module(module, root)[root]
    whole = load_module(module)[root]
    assert _options(alone) == _options(whole)
    assert alone.help == whole.help


def test_the_root_group_loads_the_command_asked_for(bound) -> None:
    import typer

    group = typer.main.get_command(app)
    group.commands["memory"]  # type: ignore[attr-defined]
    assert bound == ["memory"]
    assert sorted(group.commands) == sorted(group.commands.index)  # type: ignore[attr-defined]
