"""Run validation/speed.csv's LLM rows through llm-analysis (cli99/llm-analysis) as a baseline
and print its error beside whichgpu's, row by row and as medians.

    make baseline      (installs llm-analysis into .venv first)

llm-analysis covers LLM decode, prefill and training on the GPUs in its registry. It is run
twice: with its defaults (100 % of peak FLOPS and bandwidth) and with the efficiencies its
documentation suggests for realistic numbers (FLOPS 0.5, HBM 0.8). Rows it cannot model (GPUs
outside its registry, diffusion, MoE routing it does not support, serving throughput) are
skipped and counted. The medians are printed per split: whichgpu's constants were fitted on
the calibration rows, so its holdout column is the fair comparison (llm-analysis fitted none).
"""

from __future__ import annotations

import logging
import math
import statistics
import sys

GPU_MAP = {"a100-80gb-sxm": "a100-sxm-80gb", "a100-40gb": "a100-sxm-40gb",
           "a100-80gb-pcie": "a100-pcie-80gb", "h100-sxm": "h100-sxm-80gb",
           "h100-pcie": "h100-pcie-80gb", "rtx-a6000": "a6000-48gb", "a10g": "a10g-pcie-24gb",
           "v100-32gb": "v100-sxm-32gb", "v100-16gb": "v100-sxm-16gb"}
DTYPE = {16: "w16a16e16", 8: "w8a16e16", 4: "w4a16e16"}


def _bits(quant: str) -> int:
    from whichgpu.models.quant import get_quant

    b = get_quant(quant or "bf16").linear_bits
    return 16 if b >= 12 else 8 if b >= 6 else 4


def _model_config(spec):
    from llm_analysis.config import ModelConfig

    ffn = spec.intermediate_size or 4 * spec.hidden_size
    return ModelConfig(
        name=spec.id, num_layers=spec.num_layers, n_head=spec.num_attention_heads,
        hidden_dim=spec.hidden_size, vocab_size=spec.vocab_size,
        max_seq_len=max(spec.max_context or 0, 131072),
        num_key_value_heads=spec.num_kv_heads or spec.num_attention_heads,
        ffn_embed_dim=ffn, expansion_ratio=ffn / spec.hidden_size,
        model_type=spec.architecture,
        moe_num_experts=spec.moe.num_experts if spec.moe else 1,
        moe_top_k=spec.moe.experts_per_token if spec.moe else 1)


def predict(row, flops_eff: float | None, hbm_eff: float | None) -> float | None:
    from llm_analysis.analysis import ActivationRecomputation, LLMAnalysis
    from llm_analysis.config import (
        ParallelismConfig,
        get_dtype_config_by_name,
        get_gpu_config_by_name,
    )

    from whichgpu.estimate.validation.rows import workload_of
    from whichgpu.estimate.validation.speed import speed_settings

    metric = row["metric"]
    if row["gpu"] not in GPU_MAP or row["category"] not in ("decode", "prefill", "training"):
        return None
    # the row's speed-only settings (framework, compile, a stated hardware difference) are
    # whichgpu's; llm-analysis gets the plain workload and its own GPU entry
    w = workload_of(speed_settings(row)[0], global_batch=True)
    if w.model.is_moe or w.model.mla is not None:
        return None
    tp = w.tp_degree
    analysis = LLMAnalysis(
        _model_config(w.model), get_gpu_config_by_name(GPU_MAP[row["gpu"]]),
        get_dtype_config_by_name(DTYPE[_bits(w.quant_name)] if not w.is_training
                                 else "w16a16e16"),
        ParallelismConfig(tp_size=tp, dp_size=max(1, w.gpus // tp)),
        flops_efficiency=flops_eff, hbm_memory_efficiency=hbm_eff)
    if w.is_training:
        seq = w.seq_len
        out = analysis.training(
            batch_size_per_gpu=w.batch, seq_len=seq,
            global_batch_size=w.batch * max(1, w.gpus // tp), total_num_tokens=1e9,
            activation_recomputation=ActivationRecomputation.FULL
            if w.uses_checkpointing else ActivationRecomputation.NONE,
            mlp_gated_linear_units=w.model.gated_mlp)
        tokens_per_s = w.batch * max(1, w.gpus // tp) * seq / out["latency_per_iter"]
        if metric == "train_tokens_per_s_per_gpu":
            return tokens_per_s / w.gpus
        if metric == "train_tokens_per_s":
            return tokens_per_s
        return None
    prompt = w.prompt_tokens or 512
    out = analysis.inference(batch_size_per_gpu=w.batch, seq_len=prompt,
                             num_tokens_to_generate=w.output_tokens or 128)
    if metric == "decode_tokens_per_s":
        return out["decode_tokens_per_sec"]
    if metric == "prefill_tokens_per_s":
        return out["prefill_tokens_per_sec"]
    if metric == "ttft_s":
        return out["prefill_latency"]
    return None


def main() -> int:
    logging.disable(logging.CRITICAL)
    try:
        import llm_analysis  # noqa: F401
    except ImportError:
        print("llm-analysis is not installed: run 'make baseline' (it installs it first)")
        return 2
    from whichgpu.estimate.validation import default_path, read_rows, split_of
    from whichgpu.estimate.validation.speed import predict as ours

    rows = read_rows(default_path("speed"))
    table: dict[str, dict[str, list[float]]] = {}
    skipped = 0
    print(f"{'row':44s} {'measured':>10s} {'whichgpu':>9s} {'llm-a 1.0':>9s} {'llm-a 0.5':>9s}")
    for row in rows:
        try:
            base_default = predict(row, None, None)
            base_tuned = predict(row, 0.5, 0.8)
        except Exception:  # llm-analysis asserts on configurations it does not support
            base_default = base_tuned = None
        if base_default is None:
            skipped += 1
            continue
        try:
            mine = ours(row)[0]
        except Exception:
            mine = None
        measured = float(row["value"])
        cells = {"whichgpu": mine, "llm-analysis defaults": base_default,
                 "llm-analysis 0.5/0.8": base_tuned}
        for split in (split_of(row["id"]), "all"):
            for name, value in cells.items():
                if value:
                    table.setdefault(f"{row['category']} / {split}", {}).setdefault(
                        name, []).append(abs(math.log(value / measured)))
        print(f"{row['id'][:44]:44s} {measured:10.4g} "
              + " ".join(f"{v:9.4g}" if v else f"{'-':>9s}" for v in cells.values()))
    print(f"\n{skipped} rows outside llm-analysis's scope (GPU, diffusion, MoE, serving).")
    print(f"\n{'category / split':28s} {'n':>3s} {'whichgpu':>9s} {'llm-a 1.0':>10s} "
          f"{'llm-a 0.5':>10s}   (median |error|, as exp(median|log ratio|)-1)")
    for key in sorted(table):
        cols = table[key]
        n = len(cols.get("llm-analysis defaults", []))

        def med(name, cols=cols):
            values = cols.get(name)
            return f"{math.exp(statistics.median(values)) - 1:9.1%}" if values else "        -"

        print(f"{key:28s} {n:3d} {med('whichgpu')} {med('llm-analysis defaults'):>10s} "
              f"{med('llm-analysis 0.5/0.8'):>10s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
