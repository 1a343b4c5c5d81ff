"""Decode with a drafter (estimate/speculative.py): one verify step of the target over
``k + 1`` tokens per sequence plus ``k`` drafted tokens, divided by the tokens it yields.

The verify step reads the target's weights once for the whole step (as a decode step does)
and each sequence's KV cache once (the ``k + 1`` queries of a sequence attend together), while
its matmuls and attention grow with the ``k + 1`` tokens. At batch 1 the step stays
bandwidth-bound, so the accepted tokens come almost free; as the batch grows the step turns
compute-bound and the speed-up shrinks, down to a slow-down (EAGLE-3, arXiv 2503.01840: 1.38x
in SGLang at batch 64, against several times at batch 1). The engine's own work around a
step (vLLM: rejection sampling, metadata, one host-launched forward per drafted token) is added
where it was measured (``ENGINE_SPEC_OVERHEAD_S``).
"""

from __future__ import annotations

from dataclasses import dataclass

from whichgpu.estimate.speculative import Speculation, acceptance, drafter, tokens_per_step
from whichgpu.estimate.speed.hardware import Hardware
from whichgpu.estimate.speed.llm import StepTime, decode_step
from whichgpu.estimate.speed.result import Component
from whichgpu.estimate.workload import Workload
from whichgpu.vocabulary import Engine

# The engine's own work around a speculative step, beyond the GPU time of the verify and the
# drafter's forwards (seconds): (per verify step: rejection sampling, the step's metadata;
# per drafter forward of an EAGLE or MTP head: its inputs, attention metadata, logits and
# argmax, launched from the host one forward after the other). Set from vLLM's own sweep of
# EAGLE-3 on Llama-3.1-8B, H100, batch 1 (github.com/vllm-project/vllm/issues/20780,
# 2025-07-10: TPOT x acceptance length = one spec step of 10.20, 11.41, 12.47, 13.71, 14.53,
# 15.19 ms at K = 2..7, against a plain step of 7.07 ms): a straight line of 1.02 ms per
# drafted token and 1.28 ms per step over the plain one; less the drafter's GPU time this
# model gives there (0.45 ms a token), 0.57 ms of each drafted token is the engine's. Checked
# on runs it was not set from: vLLM MTP on an RTX PRO 6000 Max-Q and EAGLE-3 on a DGX Spark
# (validation/speculative.csv, scripts/check_speculative.py). A draft model's forward is a
# whole decode step with its own dispatch already, so only the per-step part applies to it.
# Other engines: no such measurement here, none is added.
ENGINE_SPEC_OVERHEAD_S: dict[Engine, tuple[float, float]] = {Engine.VLLM: (1.28e-3, 0.57e-3)}


@dataclass(frozen=True)
class SpeculativeStep:
    """One verify step and what it yields, at the low / typical / high acceptance."""

    plain: StepTime  # the decode step without a drafter (same batch and context)
    verify_s: float
    draft_s: float  # all k drafted tokens
    tokens: tuple[float, float, float]  # tokens per sequence per step (low, typical, high)
    alpha: tuple[float, float, float]

    @property
    def step_s(self) -> float:
        return self.verify_s + self.draft_s

    def speedup(self, which: int = 1) -> float:
        """Decode speed with the drafter over decode speed without (which: 0 low, 1 typical,
        2 high acceptance)."""
        return self.tokens[which] * self.plain.seconds / self.step_s

    def effective(self) -> StepTime:
        """The step as the rest of the speed model reads it: seconds per token per sequence
        at the typical acceptance."""
        # what bounds the step is what bounds the verify step (the drafter is its own line)
        spec_parts = {k: v / self.tokens[1] for k, v in self.plain.parts.items()}
        comps = (
            Component("verify step", self.verify_s,
                      f"the target over {self.tokens[1]:.2f} accepted of the drafted tokens "
                      "per sequence: weights and KV read once, matmuls for every drafted "
                      "token"),
            Component("drafting", self.draft_s, "the drafter's forward passes"),
        )
        return StepTime(self.step_s / self.tokens[1], spec_parts, comps)


def speculative_step(w: Workload, hw: Hardware, batch: int, context: int) -> SpeculativeStep:
    """The verify + draft step of ``w.speculative`` for ``batch`` sequences at ``context``."""
    spec = w.speculative
    assert spec is not None
    plain_w = w.with_(speculative=None)
    k = spec.draft_tokens
    plain = decode_step(plain_w, hw, batch, context)
    wide = decode_step(plain_w, hw, batch * (k + 1), context)
    weights_wide = decode_step(plain_w, hw, batch * (k + 1), 1).parts["memory-bandwidth"]
    kv = max(plain.parts["memory-bandwidth"]
             - decode_step(plain_w, hw, batch, 1).parts["memory-bandwidth"], 0.0)
    t_mem = weights_wide + kv
    per_step, per_forward = ENGINE_SPEC_OVERHEAD_S.get(w.engine_name, (0.0, 0.0))
    if spec.draft_model is not None:
        per_forward = 0.0  # a whole decode step, its dispatch already counted
    verify = (max(t_mem, wide.parts["compute"]) + wide.parts["interconnect"]
              + plain.parts["fixed-overhead"] + plain.parts["host-memory"] + per_step)
    draft = k * (_draft_token_s(spec, w, hw, batch, context) + per_forward)
    lo, typ, hi = acceptance(spec)
    tokens = (tokens_per_step(lo, k), tokens_per_step(typ, k), tokens_per_step(hi, k))
    return SpeculativeStep(plain, verify, draft, tokens, (lo, typ, hi))


def _draft_token_s(spec: Speculation, w: Workload, hw: Hardware, batch: int,
                   context: int) -> float:
    """Seconds for one drafted token of ``batch`` sequences."""
    from whichgpu.estimate.speed.llm import _decode_rates

    if spec.draft_model is not None:  # a whole model: its own decode step, same engine
        return decode_step(w.with_(model=spec.draft_model, speculative=None,
                                   gpu_layers=None, cpu_moe_layers=0, tensor_overrides=()),
                           hw, batch, context).seconds
    rates = _decode_rates(w.with_(speculative=None), hw)
    d = drafter(spec, w.model, w.quant_format.linear_bits / 8)
    kv_per_layer = _kv_bytes_per_layer(w, context) * batch
    t_mem = (d.read_bytes + kv_per_layer) / (hw.bandwidth * rates.eta_bw)
    t_comp = d.flops_per_token * batch / (rates.peak * rates.eta_c)
    per_layer = rates.t_fix / max(w.model.num_layers, 1)
    return max(t_mem, t_comp) + per_layer * (d.layers + 1)


def _kv_bytes_per_layer(w: Workload, context: int) -> float:
    from whichgpu.estimate.memory.kv import kv_read_bytes

    m = w.model
    return kv_read_bytes(m, context, w.kv_bytes, w.engine_name) / max(m.num_layers, 1)
