"""Measured runs: speeds a team measured (llama-bench, vLLM and SGLang serving benchmarks,
``whichgpu bench``, a CSV of its own), read from the files those tools write and kept in the
price store beside the prices (``runs`` table). The speed model uses them through
:mod:`whichgpu.estimate.measured`.

- :mod:`.record`: one run (:class:`MeasuredRun`), its metric and file-format vocabularies;
- :mod:`.formats`: reading each tool's file into runs, refusing what cannot be one;
- :mod:`.store`: the ``run`` table on SQLite and PostgreSQL (one transaction per file).
"""

from whichgpu.catalog.runs.record import MeasuredRun, RunFormat, RunMetric

__all__ = ["MeasuredRun", "RunFormat", "RunMetric"]
