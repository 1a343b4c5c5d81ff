"""A dense model's decode is not said to run an MoE experts' kernel (engine_kernels.toml's
``experts_only`` paths): Qwen3 32B in NVFP4 on an RTX 5090 was said to decode through
"CUTLASS NVFP4 MoE GEMMs"; gpt-oss-120b, an MoE, still says its experts' path."""

from __future__ import annotations


def test_a_dense_models_decode_is_not_said_to_run_moe_kernels():
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.catalog.gpus import default_catalog
    from whichgpu.estimate.speed.hardware import hardware
    from whichgpu.estimate.speed.llm import kernel_notes

    gpu = default_catalog().get("rtx-5090")
    dense = build_workload("qwen3-32b", quant="nvfp4", engine="vllm")
    notes = kernel_notes(dense, hardware(gpu))[1]
    assert any(n.startswith("prefill:") for n in notes)
    assert not any("MoE" in n for n in notes)
    moe = build_workload("gpt-oss-120b", quant="nvfp4", engine="vllm")
    assert any(n.startswith("decode:") and "MoE" in n
               for n in kernel_notes(moe, hardware(gpu))[1])
