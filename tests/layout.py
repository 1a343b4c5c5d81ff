"""Where a test file lives: ``tests/<folder>/`` mirrors ``src/whichgpu/`` (issue 35, item 3).

A test file goes in the folder of the source package it checks: ``tests/estimate/memory/`` for
``whichgpu.estimate.memory``, ``tests/web/`` for ``whichgpu.web``, and so on. Two folders have
no package of their own: ``tests/base/`` for whichgpu's top-level modules (units, messages,
vocabulary, strict_json, the public API) and ``tests/project/`` for rules over the whole
repository (layers, import cycles, docs, the suite itself). Helpers shared by several files
(fixtures, fakes, recorded-data readers) stay at the top of ``tests/`` with ``tests/data/``.

A new test file may be written at the top of ``tests/`` (parallel branches do); then

    python tests/layout.py          # git mv each top-level test_*.py to its folder

places it by the first rule below whose prefix its name starts with, and names those it cannot
place. ``tests/project/test_tests_layout.py`` fails while a test file sits at the top.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# (file name prefix, folder): the first match wins, so the longer prefixes come first.
RULES: tuple[tuple[str, str], ...] = (
    ("test_prices_web", "web"),
    ("test_prices_", "catalog/prices"),
    ("test_store_", "catalog/prices"),
    ("test_api_prices", "catalog/prices"),
    ("test_validation_", "estimate/validation"),
    ("test_memory_", "estimate/memory"),
    ("test_training_", "estimate/memory"),
    ("test_speed_", "estimate/speed"),
    ("test_serving_", "estimate/speed"),
    ("test_kernel_db", "estimate/speed"),
    ("test_expert_parallel", "estimate/speed"),
    ("test_gb10_", "estimate/speed"),
    ("test_vllm_", "estimate/speed"),
    ("test_megatron_", "estimate/memory"),
    ("test_diffusion_", "estimate"),
    ("test_exl3", "estimate"),
    ("test_estimate_", "estimate"),
    ("test_energy", "estimate"),
    ("test_engine", "estimate"),
    ("test_rl_", "answers"),
    ("test_answer", "answers"),
    ("test_inputs_", "answers"),
    ("test_advise", "advise"),
    ("test_goodput_", "advise"),
    ("test_recommend_", "answers"),
    ("test_mcp_", "agents"),
    ("test_fuzz_mcp", "agents"),
    ("test_fuzz_cli", "cli"),
    ("test_fuzz_", "web"),
    ("test_bench_", "bench"),
    ("test_catalog_", "catalog"),
    ("test_gpu_", "catalog"),
    ("test_offers", "catalog"),
    ("test_user_gpu", "catalog"),
    ("test_runs_rest", "web"),
    ("test_runs_", "catalog"),
    ("test_cli_", "cli"),
    ("test_models_cli", "cli"),
    ("test_cost_", "cost"),
    ("test_spot", "cost"),
    ("test_vs_api", "cost"),
    ("test_export_", "export"),
    ("test_models_", "models"),
    ("test_presets_", "models"),
    ("test_hub_", "models"),
    ("test_gguf_", "models"),
    ("test_web_", "web"),
    ("test_rest_", "web"),
    ("test_serve_", "web"),
    ("test_units", "base"),
    ("test_money_", "base"),
    ("test_messages_", "base"),
    ("test_public_api", "base"),
    ("test_strict_json", "base"),
    ("test_docs_", "project"),
    ("test_import_", "project"),
    ("test_layers", "project"),
    ("test_suite_", "project"),
    ("test_architecture_", "project"),
    ("test_module_", "project"),
)


def folder_for(name: str) -> str | None:
    """The folder (under tests/) for a test file named ``name``, or None if no rule places it."""
    for prefix, folder in RULES:
        if name.startswith(prefix):
            return folder
    return None


def main() -> int:
    """git mv each top-level test file to its folder; name the ones no rule places."""
    unplaced = []
    for path in sorted(TESTS.glob("test_*.py")):
        folder = folder_for(path.name)
        if folder is None:
            unplaced.append(path.name)
            continue
        (TESTS / folder).mkdir(parents=True, exist_ok=True)
        target = TESTS / folder / path.name
        moved = subprocess.run(["git", "mv", str(path), str(target)], capture_output=True)
        if moved.returncode != 0:  # not tracked yet: a plain move
            path.rename(target)
        print(f"{path.name} -> tests/{folder}/")
    for name in unplaced:
        print(f"{name}: no rule places it; move it by hand to the folder of the package it "
              "checks (tests/layout.py)", file=sys.stderr)
    return 1 if unplaced else 0


if __name__ == "__main__":
    sys.exit(main())
