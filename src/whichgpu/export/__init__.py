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
from whichgpu.messages import Field, Message, msg

if TYPE_CHECKING:
    from whichgpu.advise.options import Recommendation

__all__ = ["LAUNCHERS", "Export", "Launcher", "check_launcher", "export_file", "export_option"]

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
        raise InputError(msg("export.launcher", "unknown launcher {name!r} for {field}: use "
                             "skypilot or dstack", name=str(name), field=Field("export")))
    return n


def export_file(rec: Recommendation, launcher: str, option: int | None = None, *,
                selection=None, rates=None) -> tuple[str, str]:
    """``(filename, text)`` of the task file for the REST answer's request and chosen option:
    what a download button serves (``rec`` is the answer's recommendation, ``option`` its
    1-based rank or None for the best the launcher can launch, ``rates`` its exchange rates)."""
    e = export_option(rec, launcher, option, selection=selection, rates=rates)
    return e.filename, e.text


def export_option(rec: Recommendation, launcher: str, option: int | None = None, *,
                  selection=None, command: str | None = None, rates=None) -> Export:
    """The ``option``-th ranked option of ``rec`` as a ``launcher`` task file; by default the
    best-ranked option the launcher can express (the header says which were passed over).
    ``rates`` converts the offer's price back to US dollars for dstack's ``max_price``."""
    from whichgpu.export.header import header
    from whichgpu.export.target import target
    from whichgpu.export.yaml_text import dump

    which = check_launcher(launcher)
    if not rec.options:
        raise InputError(msg("export.nothing", "nothing to export to {launcher}: no option can "
                             "run the job (see why above)", launcher=label(which)))
    offers = list(selection.offers) if selection is not None else None

    def launchable(opt):
        """The option's machines and commands, or the InputError that says why not."""
        from whichgpu.export.commands import commands
        from whichgpu.export.target import check_features

        if opt.workload is None:
            raise InputError(msg("export.no_workload", "option {option} has no workload to "
                                 "export", option=opt.label))
        where = target(opt, which, offers)
        cmds = commands(opt, rec.job)
        check_features(opt, where, cmds, which)
        return where, cmds

    skipped: list[str] = []
    if option is None:
        for i, candidate in enumerate(rec.options, start=1):
            try:
                launchable(candidate)
            except InputError as exc:
                skipped.append(f"option {i} ({candidate.label} on "
                               f"{candidate.offer.provider}) passed over: {exc}".split(": pick")[0])
                if i == len(rec.options):
                    raise InputError(msg(
                        "export.none", "{launcher} can launch none of the {n} ranked options: "
                        "{reason}", launcher=label(which), n=len(rec.options),
                        reason=_reason(exc))) from None
                continue
            option = i
            break
    if isinstance(option, bool) or not isinstance(option, int) or option < 1:
        raise InputError(msg("export.option.whole", "{field} must be a whole number >= 1, "
                             "got {v!r}", field=Field("export_option"), v=option))
    if option > len(rec.options):
        raise InputError(msg("export.option.range", "{field}: there are only {n} ranked "
                             "option(s)", field=Field("export_option", option),
                             n=len(rec.options)))
    opt = rec.options[option - 1]
    where, cmds = launchable(opt)
    where = _in_usd(where, rates)
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


def _reason(exc: InputError) -> Message | str:
    """What an export error said, structured where it was a message (the web says it in its
    own words)."""
    first = exc.args[0] if exc.args else ""
    return first if isinstance(first, Message) else str(exc)


def _in_usd(where, rates):
    """The target with its price per node-hour in US dollars: launchers read prices in USD
    (dstack's ``max_price``, gpuhunt's catalogs), whatever currency the answer is shown in."""
    if where.currency == "USD":
        return where
    from dataclasses import replace

    from whichgpu.cost.currency import convert
    from whichgpu.units import Money

    usd = convert(Money(where.price_per_node_hour, where.currency), "USD", rates)
    return replace(where, price_per_node_hour=usd.amount, currency="USD")
