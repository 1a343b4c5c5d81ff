"""``whichgpu runs``: a team's measured runs (add, list, export, import, remove)."""

from __future__ import annotations

from pathlib import Path

import typer

from whichgpu.answers import runs as r
from whichgpu.cli.bind import bind
from whichgpu.cli.common import console, emit_json


def register(app: typer.Typer) -> None:
    runs_app = typer.Typer(help="Measured runs: 'whichgpu runs add results.json' stores what "
                           "llama-bench, vLLM or SGLang measured, and speed and recommend use it.",
                           no_args_is_help=True)
    bind(runs_app, r.RunsAdd, add)
    bind(runs_app, r.RunsList, list_cmd, name="list")
    bind(runs_app, r.RunsExport, export)
    bind(runs_app, r.RunsImport, import_cmd, name="import")
    bind(runs_app, r.RunsRemove, remove)
    app.add_typer(runs_app, name="runs")


def _show(answer: r.RunsAnswer, as_json: bool, said: str) -> None:
    if as_json:
        emit_json(answer.to_json())
        return
    console.print(said, markup=False)
    if answer.runs:
        _table(answer)
    for why in answer.skipped:
        console.print(f"left out: {why}", markup=False)


def _table(answer: r.RunsAnswer) -> None:
    from rich.table import Table

    t = Table(pad_edge=False)
    t.add_column("id", justify="right", no_wrap=True)
    t.add_column("card", overflow="fold")
    t.add_column("engine", overflow="fold")
    t.add_column("model, quant", overflow="fold")
    t.add_column("measured (tok/s)", justify="right", no_wrap=True)
    t.add_column("batch, in+out", overflow="fold")
    t.add_column("date", no_wrap=True)
    for run in answer.runs:
        lengths = f"{run.prompt_tokens or 0}+{run.output_tokens or 0}"
        gpu = run.gpu if run.gpu_count == 1 else f"{run.gpu_count} x {run.gpu}"
        engine = f"{run.engine} {run.engine_version or ''}".strip()
        what = run.metric.removesuffix("_tokens_per_s")
        t.add_row(str(run.id), gpu, engine, f"{run.model_key or run.model} {run.precision}",
                  f"{what} {run.value:,.1f}", f"{run.batch}, {lengths}", (run.date or "")[:10])
    console.print(t)


def add(q: r.RunsAdd) -> None:
    answer = r.add_runs(Path(q.file), q.options(), q.store, q.format)
    _show(answer, q.as_json, f"Stored {len(answer.runs)} run(s) from {Path(q.file).name} "
          f"({answer.format}) in {answer.store}.")


def list_cmd(q: r.RunsList) -> None:
    answer = r.list_runs(q.store, gpu=q.gpu, engine=q.engine)
    _show(answer, q.as_json, f"{len(answer.runs)} run(s) in {answer.store}"
          + ("" if answer.runs else ": 'whichgpu runs add FILE' stores some") + ".")


def export(q: r.RunsExport) -> None:
    answer = r.export_runs(Path(q.file), q.store)
    _show(answer, q.as_json, f"Wrote {len(answer.runs)} run(s) to {q.file}.")


def import_cmd(q: r.RunsImport) -> None:
    answer = r.import_runs(Path(q.file), q.store)
    _show(answer, q.as_json, f"Imported {len(answer.runs)} run(s) from {Path(q.file).name} "
          f"into {answer.store}.")


def remove(q: r.RunsRemove) -> None:
    answer = r.remove_run(q.id, q.store)
    _show(answer, q.as_json, f"Removed run #{q.id} from {answer.store}.")
