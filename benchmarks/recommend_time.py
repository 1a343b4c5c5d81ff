"""How long ``recommend`` takes on a few questions (not a test): the median of a few runs each.

    python benchmarks/recommend_time.py            # every question, 3 runs each
    python benchmarks/recommend_time.py --runs 5

Prints one line per question (median seconds, options, GPUs in the catalog) and the total, so
the cost of searching more GPU counts can be measured before and after a change.
"""

from __future__ import annotations

import argparse
import statistics
import time

QUESTIONS = {
    "70b-awq-1M-tokens": dict(model="llama-3.1-70b", quant="awq", tokens="1M",
                              prompt_tokens="512", output_tokens="512"),
    "flux-1000-images": dict(model="flux.1-dev", task="image", quant="fp8", images="1000"),
    "7b-lora-2000-steps": dict(model="llama-2-7b", task="lora", context="512", steps="2000"),
    "70b-q4-serving": dict(model="llama-3.1-70b", quant="q4_k_m", context="8k", users=1,
                           tokens_per_s_each=5),
    "70b-pretrain-2B": dict(model="llama-3.1-70b", task="pretrain", train_tokens="2B"),
}


def run_once(q: dict) -> tuple[float, int]:
    from whichgpu.advise.build import build_job
    from whichgpu.advise.recommend import recommend
    from whichgpu.catalog.prices import current_offers
    from whichgpu.estimate.build import build_workload

    q = dict(q)
    w = build_workload(q.pop("model"), task=q.pop("task", "inference"), quant=q.pop("quant", None),
                       context=q.pop("context", None),
                       prompt_tokens=q.pop("prompt_tokens", None),
                       output_tokens=q.pop("output_tokens", None))
    job = build_job(w, **q)
    offers = list(current_offers("vramfarm-2026-11").offers) + list(
        current_offers("article-000").offers)
    t0 = time.perf_counter()
    rec = recommend(job, offers)
    return time.perf_counter() - t0, len(rec.options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from whichgpu.catalog.gpus import default_catalog

    n_gpus = len(default_catalog().gpus)
    total = 0.0
    run_once(QUESTIONS["7b-lora-2000-steps"])  # warm the caches (presets, catalog, constants)
    for name, q in QUESTIONS.items():
        times, options = [], 0
        for _ in range(args.runs):
            seconds, options = run_once(q)
            times.append(seconds)
        med = statistics.median(times)
        total += med
        print(f"{name:24s} {med:7.2f} s  {options:4d} options  ({n_gpus} catalog GPUs)")
    print(f"{'total':24s} {total:7.2f} s")


if __name__ == "__main__":
    main()
