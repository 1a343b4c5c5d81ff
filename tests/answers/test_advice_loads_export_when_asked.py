"""The recommend answer loads the launcher export (whichgpu.export) only where --export asks
for a task file (issue 27: ~1.7 ms of CPU a recommend process otherwise). Import graph in a
fresh interpreter, not a timing; the export itself: tests/export/test_export_launchers.py."""

from __future__ import annotations

import os
import subprocess
import sys

from whichgpu.answers.advice import recommend_job


def test_the_answer_module_does_not_load_the_export(tmp_path) -> None:
    probe = ("import sys, whichgpu.answers.advice; "
             "print('whichgpu.answers.advice' in sys.modules, 'whichgpu.export' in sys.modules)")
    env = {**os.environ, "WHICHGPU_HOME": str(tmp_path), "WHICHGPU_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["True", "False"]


def test_an_unknown_launcher_is_still_refused() -> None:
    import pytest

    from whichgpu.answers.requests import Recommend
    from whichgpu.errors import InputError

    with pytest.raises(InputError, match="skypilot"):
        recommend_job(Recommend(model="llama-3.1-8b", tokens="1M", export="skypiIot"))
