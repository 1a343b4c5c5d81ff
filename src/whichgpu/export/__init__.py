"""Exports: a ranked option as a task file a launcher runs (SkyPilot or dstack).

    from whichgpu.export import export_option
    text = export_option(recommendation, "skypilot", 1).text

The file asks for the option's machines in the launcher's own names (``data/
launcher_names.toml``), carries a commented header with the estimate (time, cost range,
assumptions, whichgpu's version and the prices' date) and runs the engine the estimate assumed,
with its settings (``commands.py``), or a marked placeholder. YAML is written with PyYAML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from whichgpu.errors import InputError
from whichgpu.export.names import LAUNCHERS, Launcher, label

if TYPE_CHECKING:
    from whichgpu.advise.recommend import Recommendation

__all__ = ["LAUNCHERS", "Export", "Launcher", "check_launcher", "export_option"]

_SUFFIX = {"skypilot": ".sky.yaml", "dstack": ".dstack.yml"}


@dataclass(frozen=True)
class Export:
    """One exported task file."""

    launcher: Launcher
    option: int  # 1-based rank of the option exported
    filename: str
    text: str
    placeholder: bool  # the run command is a placeholder to replace
    to_fill: tuple[str, ...] = ()  # environment variables the user must set
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {"launcher": self.launcher, "option": self.option, "filename": self.filename,
                "yaml": self.text, "placeholder": self.placeholder,
                "to_fill": list(self.to_fill), "notes": list(self.notes)}


def check_launcher(name: str) -> Launcher:
    """``skypilot`` or ``dstack`` (any case), else a one-line InputError."""
    n = str(name).strip().lower()
    if n not in LAUNCHERS:
        raise InputError(f"unknown launcher {name!r} for --export: use skypilot or dstack")
    return n


def export_option(rec: Recommendation, launcher: str, option: int | None = None, *,
                  selection=None, command: str | None = None) -> Export:
    """The ``option``-th ranked option of ``rec`` as a ``launcher`` task file; by default the
    best-ranked option the launcher can express (the header says which were passed over)."""
    from whichgpu.export.header import header
    from whichgpu.export.target import target
    from whichgpu.export.yaml_text import dump

    which = check_launcher(launcher)
    if not rec.options:
        raise InputError(f"nothing to export to {label(which)}: no option can run the job "
                         "(see why above)")
    skipped: list[str] = []
    if option is None:
        for i, candidate in enumerate(rec.options, start=1):
            try:
                target(candidate, which)
            except InputError as exc:
                skipped.append(f"option {i} ({candidate.label} on "
                               f"{candidate.offer.provider}) passed over: {exc}".split(": pick")[0])
                if i == len(rec.options):
                    raise InputError(f"{label(which)} can launch none of the "
                                     f"{len(rec.options)} ranked options: {exc}") from None
                continue
            option = i
            break
    if isinstance(option, bool) or not isinstance(option, int) or option < 1:
        raise InputError(f"--export-option must be a whole number >= 1, got {option!r}")
    if option > len(rec.options):
        raise InputError(f"--export-option {option}: there are only {len(rec.options)} "
                         "ranked option(s)")
    opt = rec.options[option - 1]
    if opt.workload is None:
        raise InputError(f"option {option} ({opt.label}) has no workload to export")
    from whichgpu.export.commands import commands

    where = target(opt, which)
    cmds = commands(opt, rec.job)
    if which == "skypilot":
        from whichgpu.export.skypilot import task
    else:
        from whichgpu.export.dstack import task
    body = task(rec, opt, where, cmds)
    notes = [*skipped, *where.notes]
    text = header(rec, opt, option, which, where, cmds, selection, command, notes) + dump(body)
    slug = "-".join(p for p in (rec.job.workload.model.id.replace("/", "-").lower(),
                                rec.job.workload.task, opt.gpu.id) if p)
    return Export(which, option, f"{slug}{_SUFFIX[which]}", text, cmds.placeholder,
                  tuple(cmds.to_fill), tuple(notes))
