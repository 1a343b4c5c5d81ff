"""llama.cpp's lattice-codebook quants (IQ1-IQ3) decode at the longer of their read and their
grid lookups on the card's FP32 rate (estimate/speed/codebook.py, issue 28).

The constant comes from llama.cpp PR 8215's own batch-1 runs of Llama 3 8B: IQ1_M at 167.03
t/s on an RTX 3090 and 315.04 on an RTX 4090 (1.89x for 8 % more bandwidth), IQ3_XXS at 143.46
and 235.58; a K-quant moves with the bandwidth. An H100 has half the 3090's FP32 per byte, so
DeepSeek-R1's IQ1_S experts are lookup-bound there.
"""

from __future__ import annotations

from whichgpu.estimate.constants import overridden, speed_value
from whichgpu.estimate.speed.codebook import LATTICE_TYPES, lattice_of
from whichgpu.estimate.validation.speed import predict
from whichgpu.models.resolve import resolve_model

_LLAMA = dict(category="decode", model="meta-llama/Meta-Llama-3-8B", task="inference",
              engine="llamacpp", gpu_count="1", batch="1", prompt_tokens="1",
              output_tokens="512", metric="decode_tokens_per_s", id="t", value="1",
              date="", engine_version="")
_DSR1 = dict(category="decode", model="deepseek-ai/DeepSeek-R1", task="inference",
             quant="ud-iq1_s", engine="llamacpp", gpu="h100-sxm", gpu_count="2", batch="1",
             prompt_tokens="512", output_tokens="128", metric="decode_tokens_per_s", id="t",
             value="1", date="", engine_version="")


def _rate(row: dict[str, str]) -> float:
    value, _, _ = predict(row)
    assert value is not None
    return value


def _without_lookups():
    table = speed_value("decode_codebook_lookup_ops")
    return overridden("speed_constants", "decode_codebook_lookup_ops",
                      {k: 0 for k in table})


def test_an_alu_poor_card_falls_behind_on_iq_weights_only() -> None:
    """3090 / 4090 for IQ1_M well under the bandwidth ratio (measured 0.53), for Q4_K_M near
    it; without the lookup term IQ1_M would move with the bandwidth too."""
    def ratio(quant: str) -> float:
        return (_rate({**_LLAMA, "quant": quant, "gpu": "rtx-3090"})
                / _rate({**_LLAMA, "quant": quant, "gpu": "rtx-4090"}))

    assert ratio("iq1_m") < 0.75, ratio("iq1_m")
    assert ratio("q4_k_m") > 0.85, ratio("q4_k_m")
    with _without_lookups():
        assert ratio("iq1_m") > 0.85


def test_deepseek_iq1_experts_are_lookup_bound_on_an_h100() -> None:
    """Over 1.3x slower with the lookups than without, and the step's read term says so."""
    with_lookups = _rate(_DSR1)
    with _without_lookups():
        without = _rate(_DSR1)
    assert without > 1.3 * with_lookups, (with_lookups, without)


def test_only_lattice_tensors_count() -> None:
    """Unsloth's dynamic file: only its IQ experts (attention and shared experts are
    K-quants); a K-quant file has none; the token embedding is never counted."""
    m = resolve_model("deepseek-ai/DeepSeek-R1")
    model = getattr(m, "model", m)
    ud = lattice_of(model, "ud-iq1_s", None)
    assert ud.dense_weights == 0 and ud.expert_weights > 600e9
    plain = lattice_of(model, "iq1_s", None)
    assert plain.dense_weights > 0
    assert lattice_of(model, "q4_k_m", None).expert_weights == 0
    assert "IQ4_XS" not in LATTICE_TYPES and "IQ1_S" in LATTICE_TYPES


def test_other_backends_and_host_offload_take_no_lookup_term() -> None:
    """Vulkan and Metal run other kernels (no measurement: 0); with experts in host RAM the
    GPU part is not this term's (the host read sets the pace)."""
    table = speed_value("decode_codebook_lookup_ops")
    assert table["llamacpp"] > 0
    assert table["llamacpp-vulkan"] == 0 and table["llamacpp-metal"] == 0
    offload = {**_DSR1, "gpu": "rtx-3090", "gpu_count": "1",
               "settings": "ngl=8; host_ram=768GB; host_memory=ddr5-4800x12"}
    base = _rate(offload)
    with _without_lookups():
        assert _rate(offload) == base


def test_the_file_type_gate_loses_no_lattice_tensor() -> None:
    """lattice_of reads a recipe only for the IQ1-IQ3 file types: every other GGUF file type's
    recipe (Llama 3 8B, DeepSeek-R1) places no lattice tensor, and every IQ1-IQ3 one does."""
    import tomllib

    from paths import ROOT
    from whichgpu.estimate.speed.codebook import LATTICE_FTYPES, _count
    from whichgpu.models.gguf_recipe import is_gguf_ftype

    formats = tomllib.loads((ROOT / "src/whichgpu/models/data/quant_formats.toml")
                            .read_text(encoding="utf-8"))["format"]
    ftypes = [f["name"] for f in formats if is_gguf_ftype(f["name"])]
    assert len(ftypes) > 20
    for name in ("meta-llama/Meta-Llama-3-8B", "deepseek-ai/DeepSeek-R1"):
        m = resolve_model(name)
        model = getattr(m, "model", m)
        for ftype in ftypes:
            if ftype.startswith("ud-iq") and not model.is_moe:
                continue  # Unsloth's dynamic IQ files are of MoE models only (gguf_recipe)
            counts = _count(model, ftype, None)
            placed = counts.dense_weights > 0 or counts.expert_weights > 0
            gated = ftype.lower().removeprefix("ud-").startswith(LATTICE_FTYPES)
            assert placed == gated, (name, ftype)
