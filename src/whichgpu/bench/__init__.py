"""Measuring a real local GPU and calibrating the estimates against it (docs/calibration.md).

Modules (none imports PyTorch at import time, except ``decoder``):

- ``detect``:      :func:`detect_gpus` (NVML, else nvidia-smi), :func:`catalog_id_for`,
                   :class:`GpuInfo`, :class:`BenchUnavailable` (exit status 2)
- ``topology``:    :func:`read_topology`, :func:`parse_topo_matrix` (``nvidia-smi topo -m``),
                   :func:`parse_p2p_matrix` (``topo -p2p r``), :class:`Topology`, :class:`Pair`
- ``needs``:       :func:`require_cuda`, :func:`import_torch`: what measuring needs, or why not
- ``kernels``:     the timing harness (CUDA events / perf_counter) and its measurements
- ``run``:         :func:`run_bench` -> :class:`BenchResult` (``to_profile()``)
- ``profile``:     :func:`load_profile`, :func:`save_profile`, :func:`profile_from_option`,
                   :class:`CalibrationProfile` (``scales_for``, ``link_for``)
- ``model_bench``: :func:`run_model_bench`, :func:`validation_rows`, :func:`append_rows`
- ``decoder``:     the random-weight stand-in of a dense decoder (imports PyTorch)
- ``compare``:     :func:`parse_measured`, :func:`compare` (S30), :func:`time_command`
"""
