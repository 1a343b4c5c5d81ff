"""A Job's defaults are written once (advise/job.py, issue 35): build_job passes on only what
was given, and the request model's defaults agree with the Job's."""

from __future__ import annotations

import dataclasses

from whichgpu.advise.job import Job
from whichgpu.answers.inputs.job import build_job
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.answers.requests import Recommend
from whichgpu.models import resolve_model
from whichgpu.vocabulary import Objective


def test_nothing_given_is_the_jobs_own_defaults():
    w = build_workload(resolve_model("llama-3.1-8b"))
    assert build_job(w) == Job(w)


def test_what_is_given_still_counts():
    w = build_workload(resolve_model("llama-3.1-8b"))
    job = build_job(w, objective="time", spot=True)
    assert (job.objective, job.spot) == (Objective.TIME, True)


def test_the_request_models_defaults_match_the_jobs():
    fields = {f.name: f.default for f in dataclasses.fields(Job)}
    model = Recommend.model_fields
    for name in ("objective", "spot"):
        assert model[name].default == fields[name], name
