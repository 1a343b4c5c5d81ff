"""Issue 27: the "what would fit" suggestions place on every GPU x count only what they show.
Each GPU's fewest GPUs (smallest_fits) and the paired changes (only the ``keep`` shown are
placed; which pairs fit one GPU is read from the need on one GPU) must say exactly what the
exhaustive search says: every GPU x count as fits() lists it, every pair placed."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog, get_gpu
from whichgpu.estimate import memo
from whichgpu.estimate.memory import changes
from whichgpu.estimate.memory.fit import fits, smallest_fits
from whichgpu.vocabulary import SuggestionKind

# batches and contexts that fit no GPU, some GPUs, and one GPU with a pair
WORKLOADS = [
    dict(model="llama-3.1-70b", quant="q4_k_m", context="8k", batch=300),
    dict(model="llama-3.1-70b", quant="q4_k_m", context="8k", batch=64),
    dict(model="llama-3.1-70b", context="128k", batch=32),
    dict(model="llama-3.1-8b", context="128k", batch=256),
    dict(model="llama-3.1-70b", task="full-ft", context="4k", batch=8),
    dict(model="llama-3.1-70b", engine="vllm", context="8k", batch=512),
]


@pytest.fixture(autouse=True)
def _fresh_memos():
    memo.clear()
    yield
    memo.clear()


def _exhaustive_smallest(w):
    best = {}
    for f in fits(w):
        if f.fits and f.gpu.id not in best:
            best[f.gpu.id] = f
    return sorted(best.values(), key=lambda f: (f.count, f.gpu.usable_memory_bytes))


def _exhaustive_pairs(w, target, keep=4):
    catalog = default_catalog()
    found = [changes.Change(words, wc, total, changes._fits_on(wc, target, catalog),
                            SuggestionKind.PAIR, settings)
             for words, wc, total, settings in changes._paired(w)]
    fitting = [c for c in found if changes._fits_one(c, target)]
    return sorted(fitting or found, key=lambda c: c.total_bytes)[:keep]


@pytest.mark.parametrize("fields", WORKLOADS, ids=lambda f: "-".join(map(str, f.values())))
def test_smallest_fits_is_every_gpu_x_count_kept_at_its_fewest(fields) -> None:
    w = build_workload(**fields)
    got = smallest_fits(w)
    assert got == _exhaustive_smallest(w)


@pytest.mark.parametrize("target", [None, "rtx-4090", "h100-sxm"])
@pytest.mark.parametrize("fields", WORKLOADS, ids=lambda f: "-".join(map(str, f.values())))
def test_pairs_shown_are_the_exhaustive_searchs(fields, target) -> None:
    w = build_workload(**fields)
    gpu = get_gpu(target) if target else None
    assert changes._paired(w), "each workload here has pairs to try"
    got = changes._pairs(w, gpu, default_catalog())
    want = _exhaustive_pairs(w, gpu)
    assert [(c.description, c.total_bytes, c.fits_on, c.settings) for c in got] == \
        [(c.description, c.total_bytes, c.fits_on, c.settings) for c in want]
