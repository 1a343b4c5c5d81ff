"""``whichgpu runs``: a team's measured runs in the store (add, list, export, import,
remove), the same for the command line and the REST API."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whichgpu.catalog.runs.formats import Reading, read_runs, read_text
from whichgpu.catalog.runs.record import EXPORT_SCHEMA, MeasuredRun, RunFormat
from whichgpu.errors import InputError
from whichgpu.messages import msg

#: what a file may lack and an option gives (an option given wins over the file)
OPTION_FIELDS = ("gpu", "gpu_count", "engine", "engine_version", "model", "precision", "source")


@dataclass(frozen=True)
class RunsAnswer:
    """Runs stored (or listed), and what a file left out."""

    runs: tuple[MeasuredRun, ...]
    store: str
    format: str | None = None
    skipped: tuple[str, ...] = ()
    action: str = "list"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "store": self.store, "format": self.format,
                "count": len(self.runs), "runs": [r.to_json() for r in self.runs],
                "skipped": list(self.skipped), **self.extra}


def _store(store: Any):
    from whichgpu.catalog.prices.store import PriceStore
    from whichgpu.catalog.runs.store import RunStore

    return RunStore(store if isinstance(store, PriceStore) else PriceStore(store))


def checked_runs(reading: Reading, options: dict[str, Any]) -> list[MeasuredRun]:
    """Every run of a reading checked (:func:`whichgpu.estimate.measured.check_run`): the
    first refusal refuses the file."""
    from whichgpu.estimate.measured import check_run

    given = {k: v for k, v in options.items() if k in OPTION_FIELDS and v not in (None, "")}
    def kept_format(d) -> str:  # an export keeps each run's own format
        if d.format is RunFormat.EXPORT and d.fields.get("format") in {f.value for f in
                                                                       RunFormat}:
            return str(d.fields["format"])
        return d.format.value

    return [check_run(d.fields, d.where, given, kept_format(d)) for d in reading.drafts]


def add_reading(reading: Reading, options: dict[str, Any], store: Any = None,
                action: str = "add") -> RunsAnswer:
    """Check every run, then store them all in one transaction (a refused run stores none)."""
    runs = checked_runs(reading, options)
    rs = _store(store)
    stored, again = rs.add(runs)
    twice = tuple(f"{r.label()}: already stored as #{held}" for r, held in again)
    return RunsAnswer(tuple(stored), rs.location, reading.format.value,
                      (*reading.skipped, *twice), action)


def add_runs(path: Path, options: dict[str, Any] | None = None, store: Any = None,
             fmt: RunFormat | None = None) -> RunsAnswer:
    """``whichgpu runs add FILE``."""
    return add_reading(read_runs(path, fmt), options or {}, store)


def add_text(text: str, name: str, options: dict[str, Any] | None = None, store: Any = None,
             fmt: RunFormat | None = None) -> RunsAnswer:
    """A file's text (the REST API's body) added as ``runs add`` adds a file."""
    return add_reading(read_text(text, name, fmt), options or {}, store)


def list_runs(store: Any = None, *, gpu: str | None = None,
              engine: str | None = None) -> RunsAnswer:
    rs = _store(store)
    if gpu:
        from whichgpu.catalog.gpus import resolve_gpu

        gpu = resolve_gpu(gpu).gpu.id
    return RunsAnswer(tuple(rs.list(gpu=gpu, engine=engine)), rs.location)


def export_runs(path: Path, store: Any = None) -> RunsAnswer:
    """Every run to a JSON file ``runs import`` reads back (ids and times kept for people;
    an import gives new ids)."""
    rs = _store(store)
    runs = tuple(rs.list())
    data = {"schema": EXPORT_SCHEMA, "runs": [r.to_json() for r in runs]}
    try:
        path.write_text(json.dumps(data, indent=1) + "\n", "utf-8")
    except OSError as exc:
        raise InputError(msg("runs.export_unwritable", "{file} cannot be written: {why}",
                             file=str(path), why=type(exc).__name__)) from None
    return RunsAnswer(runs, rs.location, RunFormat.EXPORT.value, action="export",
                      extra={"file": str(path)})


def import_runs(path: Path, store: Any = None) -> RunsAnswer:
    """``runs import FILE``: an export (or the runs CSV), checked whole, stored in one
    transaction."""
    reading = read_runs(path)
    if reading.format not in (RunFormat.EXPORT, RunFormat.CSV):
        raise InputError(msg("runs.import_format", "{file} is a {format} file: import reads a "
                             "runs export or the runs CSV; add benchmark files with runs add",
                             file=path.name, format=reading.format.value))
    return add_reading(reading, {}, store, action="import")


def remove_run(run_id: int, store: Any = None) -> RunsAnswer:
    rs = _store(store)
    if not rs.remove(run_id):
        raise InputError(msg("runs.no_such", "no run #{id} in the store", id=run_id))
    return RunsAnswer((), rs.location, action="remove", extra={"removed": run_id})


# ------------------------------------------------------------------ the requests
# (kept here, not in requests.COMMANDS: runs have no web page; REST: web/runs_api.py)

from typing import Annotated, ClassVar  # noqa: E402

from pydantic import Field  # noqa: E402

from whichgpu.answers.field_types import Json, Store  # noqa: E402
from whichgpu.answers.fields import Cli, Web  # noqa: E402
from whichgpu.answers.request import Request  # noqa: E402

RunsFile = Annotated[str, Field(description=(
    "A results file: llama-bench -o json / -o csv, vllm bench serve --save-result, "
    "sglang.bench_serving --output-file, whichgpu bench model --json, or the runs CSV.")),
    Cli(positional=True, metavar="FILE"), Web(skip=True)]


class RunsAdd(Request):
    """``whichgpu runs add``: store the runs of a benchmark results file; speed and
    recommend then use them for that card, engine and model family."""

    COMMAND: ClassVar[str] = "runs add"

    file: RunsFile
    format: Annotated[RunFormat | None, Field(description=(
        "The file's format (default: found from its content).")), Web(skip=True)] = None
    gpu: Annotated[str | None, Field(description=(
        "The card the runs were measured on, for files that do not say (vLLM, SGLang) or "
        "say it in a form whichgpu cannot read.")), Web(skip=True)] = None
    count: Annotated[int | None, Field(ge=1, le=1024, description=(
        "How many of that card ran the model (tensor parallel).")), Web(skip=True)] = None
    engine: Annotated[str | None, Field(description=(
        "The engine that ran it, where the file does not name it.")), Web(skip=True)] = None
    engine_version: Annotated[str | None, Field(description=(
        "Its version (a llama.cpp build like b6153, a vLLM release).")), Web(skip=True)] = None
    model: Annotated[str | None, Field(description=(
        "The model (a preset or a Hub id), where the file does not name it (SGLang).")),
        Web(skip=True)] = None
    quant: Annotated[str | None, Field(description=(
        "The precision it ran at (default: the file's, else the checkpoint's own).")),
        Web(skip=True)] = None
    source: Annotated[str | None, Field(description=(
        "Where the run comes from (default: the file's name).")), Web(skip=True)] = None
    store: Store = None
    as_json: Json = False

    def options(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "gpu_count": self.count, "engine": self.engine,
                "engine_version": self.engine_version, "model": self.model,
                "precision": self.quant, "source": self.source or Path(self.file).name}


class RunsList(Request):
    """``whichgpu runs list``: the measured runs in the store."""

    COMMAND: ClassVar[str] = "runs list"

    gpu: Annotated[str | None, Field(description="Only the runs of this card."),
                   Web(skip=True)] = None
    engine: Annotated[str | None, Field(description="Only the runs of this engine."),
                      Web(skip=True)] = None
    store: Store = None
    as_json: Json = False


class RunsExport(Request):
    """``whichgpu runs export``: every run to a JSON file that ``runs import`` reads."""

    COMMAND: ClassVar[str] = "runs export"

    file: Annotated[str, Field(description="The JSON file to write."),
                    Cli(positional=True, metavar="FILE"), Web(skip=True)]
    store: Store = None
    as_json: Json = False


class RunsImport(Request):
    """``whichgpu runs import``: the runs of an export (or the runs CSV), checked whole and
    stored in one transaction (one bad run stores none)."""

    COMMAND: ClassVar[str] = "runs import"

    file: Annotated[str, Field(description="A runs export (JSON) or the runs CSV."),
                    Cli(positional=True, metavar="FILE"), Web(skip=True)]
    store: Store = None
    as_json: Json = False


class RunsRemove(Request):
    """``whichgpu runs remove``: delete one run by its id (``runs list`` shows them)."""

    COMMAND: ClassVar[str] = "runs remove"

    id: Annotated[int, Field(ge=1, description="The run's id."),
                  Cli(positional=True, metavar="ID"), Web(skip=True)]
    store: Store = None
    as_json: Json = False
