"""The Workload a request describes (memory, speed, recommend, fits ...): its model resolved
the surface's way (answers/context.py), then build_workload with the request's settings."""

from __future__ import annotations

from typing import Any

from whichgpu.answers.context import LOCAL, Context
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.answers.requests import Workload
from whichgpu.errors import InputError
from whichgpu.estimate.workload import Workload as Job
from whichgpu.messages import Field, msg


def workload(q: Workload, ctx: Context = LOCAL, **overrides: Any) -> Job:
    """The Workload a request describes: its model resolved the surface's way, then the
    engine's builder with the request's settings (``overrides`` replace some)."""
    if q.task.is_rl:
        raise InputError(msg("rl.not_ranked", "{task} (RL post-training) is answered by the "
                             "memory and speed questions for a GPU you name; ranking every GPU "
                             "for it is not modelled yet", task=str(q.task)))
    config = getattr(q, "config", None)
    if not q.model and not q.params and config is None:
        raise InputError(msg("workload.no_model", "name a model (see 'whichgpu models') or give "
                             "{params}, e.g. 70e9", params=Field("params")))
    spec = ctx.model(q.model, params=q.params, config=config)
    names = (*q.WORKLOAD_FIELDS, *getattr(q, "EXTRA_WORKLOAD", ()))
    values = {**q.fields(*names), **overrides}
    job = build_workload(spec, **values)
    if job.expert_parallel and job.gpus < 2 and q.COMMAND != "recommend":
        _one_gpu(q)
    return job


def _one_gpu(q: Workload) -> None:
    """Expert parallelism asked on one GPU (recommend tries it only where there are more)."""
    raise InputError(msg("workload.expert_parallel.one_gpu", "expert parallelism spreads the "
                         "experts over several GPUs; ask for 2 or more with {field}",
                         field=Field("count" if q.COMMAND == "speed" else "gpus")))
