"""Score the prefill/decode split against published disaggregation results
(validation/disaggregation.csv); nothing is fitted here.

For each comparable row the script sizes, within the row's GPUs, the best colocated layout
(tensor parallel x replicas, the serving model with chunked prefill) and the best split
(prefill and decode instances of any TP, estimate/disaggregation.py) at the same targets, and
prints the ratio of requests/s per GPU (what the sources call throughput/GPU at a latency) and
its error against the published one. Rows marked not comparable are listed with the reason.
Usage:

    python scripts/check_disaggregation.py
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

from whichgpu.advise.serving import TP_DEGREES, Targets, layout
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpus import default_catalog
from whichgpu.estimate import disaggregation as D

ROWS = Path(__file__).resolve().parents[1] / "validation/disaggregation.csv"
TTFT_S = 2.0  # the sources state no TTFT target: ours, stated
TPOTS_S = (0.020, 0.030, 0.050)  # 50, 33 and 20 tokens/s per user


def colocated_rate(w, gpu, gpus: int, targets: Targets) -> float:
    """Most requests/s the best colocated layout serves within ``gpus`` GPUs."""
    best = 0.0
    for tp in TP_DEGREES:
        if tp > gpus:
            break
        lay = layout(w, gpu, tp, targets)
        if getattr(lay, "feasible", False):
            best = max(best, (gpus // tp) * lay.max_rate)
    return best


def split_rate(w, gpu, gpus: int, targets: Targets) -> tuple[float, str]:
    """Most requests/s the best split serves within ``gpus`` GPUs (same card), and its P:D."""
    link = D.server_link(gpu) if gpus <= 8 else D.network_link(gpu, None)
    kv = D.kv_bytes_per_request(w, w.prompt_tokens)
    best, shape = 0.0, "-"
    for tp_p in TP_DEGREES:
        p = D.prefill_instance(w, gpu, tp_p)
        if p is None or tp_p > gpus:
            continue
        lam_p = p.max_rate(targets.ttft_s, link.transfer_s(kv))
        for tp_d in TP_DEGREES:
            d = D.decode_instance(w, gpu, tp_d)
            if d is None or tp_p + tp_d > gpus:
                continue
            lam_d = min(d.max_rate(targets.tpot_s),
                        D.MAX_LINK_LOAD * link.effective_bytes_per_s / kv)
            for n_p in range(1, gpus // tp_p + 1):
                n_d = (gpus - n_p * tp_p) // tp_d
                if n_d < 1:
                    break
                rate = min(n_p * lam_p, n_d * lam_d)
                if rate > best:
                    best, shape = rate, f"{n_p}P(tp{tp_p}):{n_d}D(tp{tp_d})"
    return best, shape


def main() -> None:
    cat = default_catalog()
    rows = list(csv.DictReader(ROWS.open(encoding="utf-8")))
    print(f"{'row':24} {'published':>10} {'ours (median)':>14} {'error':>7}  per TPOT target")
    errors = []
    for row in rows:
        if row["comparable"] != "yes":
            print(f"{row['id']:24} {row['published_value']:>10} {'-':>14} {'-':>7}  "
                  f"{row['note']}")
            continue
        w = build_workload(row["model"], quant=row["quant"] or None, engine="vllm",
                           prompt_tokens=row["prompt_tokens"],
                           output_tokens=row["output_tokens"])
        w = w.with_(context=w.prompt_tokens + w.output_tokens)
        gpu, gpus = cat.get(row["gpu"]), int(row["gpus"])
        ratios, said = [], []
        for tpot in TPOTS_S:
            targets = Targets(1.0, TTFT_S, tpot)
            co = colocated_rate(w, gpu, gpus, targets)
            sp, shape = split_rate(w, gpu, gpus, targets)
            if co > 0 and sp > 0:
                ratios.append(sp / co)
                said.append(f"{tpot * 1e3:.0f} ms: {sp / co:.2f}x {shape}")
            else:
                said.append(f"{tpot * 1e3:.0f} ms: colocated {co:.3g}, split {sp:.3g} req/s")
        ours = statistics.median(ratios) if ratios else float("nan")
        published = float(row["published_value"])
        err = ours / published - 1
        if row["published_metric"].endswith("_at_least"):
            verdict = "meets the bound" if ours >= published else "below the bound"
            print(f"{row['id']:24} {'>=' + row['published_value']:>10} {ours:>14.2f} "
                  f"{verdict:>7}  {'; '.join(said)}")
        else:
            errors.append(abs(err))
            print(f"{row['id']:24} {published:>10.2f} {ours:>14.2f} {err:>+7.0%}  "
                  f"{'; '.join(said)}")
    if errors:
        print(f"\n{len(errors)} point row(s): median |error| {statistics.median(errors):.0%}; "
              f"{sum(r['comparable'] != 'yes' for r in rows)} published result(s) not "
              "comparable (see the note of each)")


if __name__ == "__main__":
    main()
