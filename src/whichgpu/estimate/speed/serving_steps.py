"""Step times of one serving replica, from the speed model's own decode step and prefill, and
the fixed-point solver the serving model settles a load with.

A step with ``d`` decodes and ``p`` prompt tokens takes
``KV read(d) + max(weights read(d + p), matmuls(d) + p x prefill FLOPs per token)
+ all-reduce(d + p) + fixed`` (attention's KV read runs in its own kernels, after the GEMMs it
cannot overlap), plus a fitted CPU cost per running sequence
(``serving_step_per_sequence_us``) and, for MoE families, a fitted time per prompt token
(``serving_prefill_token_us``); the decode terms are evaluated on a geometric grid of batch
sizes and interpolated.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from whichgpu.estimate.speed.serving_engine import serving_value
from whichgpu.estimate.workload import Workload

_GRID_STEP = 1.25  # geometric grid of decode batch sizes (interpolated in between)

class StepModel:
    """Step times of one replica at fixed prompt and output lengths, built from the speed
    model's decode step and prefill (evaluated on a grid of batch sizes, interpolated)."""

    # which model answered the step times (issue 28; kernel_db.KernelSteps says "measured"),
    # and why the measured-kernel path did not when it was asked for
    path = "model"
    label = "whichgpu's model"
    why = ""

    def __init__(self, w: Workload, hw, prompt: int, output: int) -> None:
        from whichgpu.estimate.speed.llm import decode_step, prefill_time

        self.w, self.hw, self.prompt, self.output = w, hw, prompt, output
        self.context = prompt + output // 2  # average KV length a decoding sequence reads
        self._decode_step = decode_step
        self._grid: dict[int, tuple[float, float, float, float, float]] = {}
        self._weights: dict[int, float] = {}
        pre = prefill_time(w, hw, 1, prompt)
        self.prefill_compute_per_token = pre.parts["compute"] / prompt
        # what a request waits beyond the GPU's steps (API server, tokenizer, scheduler,
        # detokenizer): paid once by each request's TTFT
        self.request_dispatch_s = _per_key("serving_ttft_overhead_ms", w.engine_name) * 1e-3
        per_layer = serving_value("serving_ttft_overhead_per_layer_ms").get(w.engine_name)
        if per_layer is not None:  # issue 28: Python dispatch per layer (aiconfigurator)
            self.request_dispatch_s = w.model.num_layers * float(per_layer) * 1e-3
        self.prefill_alone_s = pre.seconds
        self.prefill_step_fixed_s = self._prefill_fixed(w, hw, prompt, pre.parts["compute"])
        self.prefill_compute_per_token -= self.prefill_step_fixed_s / prompt
        ranks = w.dp_degree if w.expert_parallel and w.dp_degree > 1 else 1  # issue 30: EP
        if ranks > 1:  # each data-parallel rank prefills its own prompts, schedules its own
            self.prefill_compute_per_token = (prefill_time(w, hw, ranks, prompt)
                                              .parts["compute"] / (prompt * ranks))
        if w.tp_degree > 1 or ranks > 1:  # all-reduces; EP: the all-to-all per MoE layer
            c1 = decode_step(w, hw, 1, 1).parts["interconnect"]
            c2 = decode_step(w, hw, 1025, 1).parts["interconnect"]
            self.comm_per_token = (c2 - c1) / 1024
            self.comm_fixed = c1 - self.comm_per_token
        else:
            self.comm_per_token = self.comm_fixed = 0.0
        from whichgpu.estimate.speed.result import speed_family

        family = speed_family(w.model)
        self.per_sequence_s = _per_key("serving_step_per_sequence_us", w.engine_name,
                                       f"{w.engine_name}/{family}") * 1e-6 / ranks
        # issue 28: the serving engines' MoE / MLA-MoE prefill beyond the speed model's
        # (serving_prefill_token_us, fitted on calibration TTFT rows), per prompt token
        self.prefill_token_s = _per_key("serving_prefill_token_us", family,
                                        f"{w.engine_name}/{family}") * 1e-6 / ranks
        self.prefill_alone_s += prompt * self.prefill_token_s
        # the hot path's constants (mixed() runs ~10 times per fixed-point solve)
        self._fixed_alone: float | None = None
        self._decode_one: float | None = None
        self._dense_weights = self._weights_read(1) if w.model.moe is None else None
        # a replica run without CUDA graphs (eager): no step is shorter than the host's
        # dispatch of every layer's kernels (set by the serving model, see eager_floor)
        self.eager_floor_s = 0.0

    @staticmethod
    def _prefill_fixed(w: Workload, hw, prompt: int, one: float) -> float:
        """Seconds of a prefill's compute that a forward pass pays once, however many prompts
        it carries (issue 28): a MoE's routed-expert GEMMs run at n / (n + n_half) of a dense
        GEMM's rate with n tokens per expert, i.e. their time is the tokens' own plus a fixed
        n_half x experts / k tokens' worth per pass. Read from the speed model's prefill of one
        and of two prompts (their difference is the per-token part); 0 for dense models, for
        expert-parallel layouts and where two prompts exceed one batched-token budget."""
        from whichgpu.estimate.speed.llm import prefill_chunk_tokens, prefill_time

        if (w.model.moe is None or (w.expert_parallel and w.dp_degree > 1)
                or 2 * prompt > prefill_chunk_tokens(w)):
            return 0.0
        two = prefill_time(w, hw, 2, prompt).parts["compute"]
        return max(2.0 * one - two, 0.0)

    # -------------------------------------------------------------- the speed model's terms

    def _parts(self, batch: int) -> tuple[float, float, float, float, float]:
        """(KV read, matmuls, fixed, other additive terms, weights read) at ``batch``."""
        hit = self._grid.get(batch)
        if hit is None:
            st = self._decode_step(self.w, self.hw, batch, self.context)
            p = st.parts
            mem, comp = p["memory-bandwidth"], p["compute"]
            comm, fix = p.get("interconnect", 0.0), p.get("fixed-overhead", 0.0)
            other = st.seconds - max(mem, comp) - comm - fix
            weights = self._weights_read(batch)
            hit = (max(mem - weights, 0.0), comp, fix, max(other, 0.0), weights)
            self._grid[batch] = hit
        return hit

    def _weights_read(self, tokens: int) -> float:
        """Seconds to stream the weights a forward pass over ``tokens`` tokens touches (the
        experts it routes to for MoE), from a decode step with a one-token context."""
        tokens = max(int(tokens), 1)
        if self.w.model.moe is None:
            tokens = 1  # dense: the same bytes whatever the batch
        else:
            tokens = _grid_point(tokens)
        hit = self._weights.get(tokens)
        if hit is None:
            hit = self._decode_step(self.w, self.hw, tokens, 1).parts["memory-bandwidth"]
            self._weights[tokens] = hit
        return hit

    def decode_terms(self, batch: float) -> tuple[float, float, float, float]:
        """(KV read, matmuls, fixed, other) at a fractional batch, interpolated on the grid."""
        b = batch if batch > 1.0 else 1.0
        i = bisect.bisect_right(_GRID, b) - 1  # the grid point at or below ``b``
        lo = _GRID[i]
        a = self._grid.get(lo) or self._parts(lo)
        if lo == b or i == _LAST:  # on a grid point (or past the grid's end)
            return a[0], a[1], a[2], a[3]
        hi = _GRID[i + 1]
        z = self._grid.get(hi) or self._parts(hi)
        t = (b - lo) / (hi - lo)
        return (a[0] + (z[0] - a[0]) * t, a[1] + (z[1] - a[1]) * t,
                a[2] + (z[2] - a[2]) * t, a[3] + (z[3] - a[3]) * t)

    # -------------------------------------------------------------- steps

    def mixed(self, decodes: float, prompt_tokens: float) -> float:
        """Seconds of one step decoding ``decodes`` sequences and carrying ``prompt_tokens``."""
        return self.mixed_many(decodes, (prompt_tokens,))[0]

    def mixed_many(self, decodes: float, prompts: Sequence[float]) -> list[float]:
        """``mixed(decodes, p)`` for each ``p`` of ``prompts``: the decode terms interpolated
        once (arriving_mixed weighs up to 13 prompt counts beside the same decodes)."""
        if decodes > 0:  # decode_terms(decodes), inlined (the solvers' innermost call)
            bt = decodes if decodes > 1.0 else 1.0
            i = bisect.bisect_right(_GRID, bt) - 1
            lo = _GRID[i]
            a = self._grid.get(lo) or self._parts(lo)
            if lo == bt or i == _LAST:
                kv, comp, fix, other = a[0], a[1], a[2], a[3]
            else:
                hi = _GRID[i + 1]
                z = self._grid.get(hi) or self._parts(hi)
                t = (bt - lo) / (hi - lo)
                kv, comp = a[0] + (z[0] - a[0]) * t, a[1] + (z[1] - a[1]) * t
                fix, other = a[2] + (z[2] - a[2]) * t, a[3] + (z[3] - a[3]) * t
            running: float = decodes
        else:
            kv = comp = other = 0.0
            alone = self._fixed_alone
            if alone is None:
                alone = self._fixed_alone = self.decode_terms(1)[2]
            fix = alone
            running = 0
        dense = self._dense_weights  # dense: the same bytes whatever the tokens
        per_token, step_fixed = self.prefill_compute_per_token, self.prefill_step_fixed_s
        comm_fixed, comm_per_token = self.comm_fixed, self.comm_per_token
        sequences = self.per_sequence_s * running
        floor, prefill_token_s = self.eager_floor_s, self.prefill_token_s
        out = []
        for prompt_tokens in prompts:
            weights = (dense if dense is not None
                       else self._weights_read(math.ceil(running + prompt_tokens)))
            compute = comp + prompt_tokens * per_token
            if prompt_tokens > 0.0 and step_fixed:  # once per forward pass
                share = prompt_tokens / self.prompt
                compute += step_fixed * (share if share < 1.0 else 1.0)
            comm = 0.0
            if comm_per_token or comm_fixed:
                comm = comm_fixed + comm_per_token * (running + prompt_tokens)
            # attention reads the KV cache in its own kernels, one after another with the
            # GEMMs of each layer: the KV read adds to the GEMMs' time (weights read or
            # matmuls, the longer), it does not hide under their compute (issue 28)
            gpu = (kv + (weights if weights >= compute else compute) + comm + fix + other
                   + sequences + prefill_token_s * prompt_tokens)
            out.append(gpu if gpu >= floor else floor)
        return out

    def decode(self, batch: float) -> float:
        if batch == 1.0:  # every solve starts from one sequence's step: computed once
            one = self._decode_one
            if one is None:
                one = self._decode_one = self.mixed(1.0, 0.0)
            return one
        return self.mixed(batch, 0.0)

    def prefill_batch(self, prompts: int, tokens_each: int | None = None) -> float:
        """GPU seconds of a prefill-only forward over ``prompts`` prompts (separate
        policy)."""
        tokens = prompts * (tokens_each or self.prompt)
        return self.mixed(0.0, tokens)


def arriving_mixed(steps, decodes: float, prompts: float, prompt: int, room: float) -> float:
    """Mean seconds of a step decoding ``decodes`` sequences while prompts of ``prompt`` tokens
    arrive at random, ``prompts`` of them per step on average (Poisson arrivals; issue 28).

    The engine schedules a waiting prompt whole into the next step (up to the step's prompt
    ``room``, chunked beyond it), so most steps carry no prompt and a few carry one or more:
    the mean step is the mean of those steps, which is longer than one step carrying the
    average share of a prompt (the weights read hides that share's compute; it cannot hide a
    whole prompt's). The count per step is Poisson, its mean raised so that the tokens carried
    (a step carries at most ``room``; the rest waits for the next) still average
    ``prompts x prompt`` (serving_sim.py schedules the same way)."""
    tokens = prompts * prompt
    unit = float(prompt if prompt <= room else room)  # min(), without a call
    if tokens <= 0.0 or unit <= 0.0 or tokens >= room:
        return steps.mixed(decodes, tokens)
    m = tokens / unit  # prompt units (a whole prompt, or a chunk of ``room``) per step
    enough = tokens * (1 - 1e-6)
    for _ in range(60):  # f(m) / m falls with m: the ratio steps up to the fixed point
        carried = _carried(m, unit, room)
        if carried >= enough:
            break
        m *= tokens / carried
    chances: list[float] = []  # of 0, 1, 2 ... prompt units in a step
    carries: list[float] = []  # the prompt tokens such a step carries
    mass = 0.0
    carried_so_far = 0.0
    p_k = math.exp(-m)
    for k in range(_TERMS):
        p = k * unit
        if p > room:  # min(k x unit, room)
            p = room
        chances.append(p_k)
        carries.append(p)
        mass += p_k
        carried_so_far += p_k * p
        if p >= room or 1.0 - mass < 1e-4:
            break
        p_k *= m / (k + 1)
    rest = 1.0 - mass
    if rest > 1e-12:  # the remaining counts, at their mean tokens (a step carries <= room)
        chances.append(rest)
        carries.append(min(max((tokens - carried_so_far) / rest, 0.0), room))
    mean = 0.0
    for chance, seconds in zip(chances, steps.mixed_many(decodes, carries), strict=True):
        mean += chance * seconds
    return mean


_TERMS = 12  # prompt counts per step weighed one by one; the rest at their mean


def _carried(m: float, unit: float, room: float) -> float:
    """Mean tokens a step carries when Poisson(m) units of ``unit`` tokens wait, at most
    ``room``."""
    p_k, total, mass = math.exp(-m), 0.0, 0.0
    k = 0
    while k * unit < room and k < 10_000:
        total += p_k * k * unit
        mass += p_k
        k += 1
        p_k *= m / k
    return total + (1.0 - mass) * room


def eager_floor(w: Workload) -> float:
    """Seconds the host takes to dispatch one forward pass's kernels layer by layer when the
    engine runs without CUDA graphs (vLLM ``--enforce-eager``, TensorRT-LLM's early PyTorch
    flow): the GPU waits for them when its own work is shorter (serving_constants.toml
    ``serving_eager_dispatch_per_layer_ms``)."""
    per_layer = _per_key("serving_eager_dispatch_per_layer_ms", w.engine_name)
    return w.model.num_layers * per_layer * 1e-3


def _grid_points(upto: int) -> list[int]:
    pts, b = [1], 1.0
    while b < upto:
        b *= _GRID_STEP
        n = int(round(b))
        if n > pts[-1]:
            pts.append(n)
    return pts


_GRID = _grid_points(1 << 17)
_LAST = len(_GRID) - 1


def _grid_point(tokens: int) -> int:
    i = bisect.bisect_left(_GRID, tokens)
    return _GRID[min(i, len(_GRID) - 1)]


def _grid_point_below(b: float) -> int:
    i = bisect.bisect_right(_GRID, b) - 1
    return _GRID[max(i, 0)]


def _grid_point_above(b: float) -> int:
    i = bisect.bisect_left(_GRID, b)
    return _GRID[min(i, len(_GRID) - 1)]


def _per_key(name: str, *keys: str) -> float:
    """``value[key]`` for the most specific key present (last first), else the default."""
    table = serving_value(name)
    for key in reversed(keys):
        if key in table:
            return float(table[key])
    return float(table.get("default", 0.0))


def fixed_point(f, start: float, feasible, edge=None) -> tuple[float, bool]:
    """The smallest ``t >= start`` with ``f(t) = t`` for an increasing ``f`` (a step time
    that grows with the load it carries), and whether it exists within ``feasible``.

    Doubling brackets the first crossing of ``f(t) - t``; regula falsi (Illinois) refines it.
    No crossing before ``feasible`` fails means the load has no steady state. ``edge(a, b)``,
    when given, is the caller's own copy of the bisection for the feasible region's edge in
    ``(a, b]`` (the same 40 halvings and tests, without a call per test).
    """
    lo = start
    f_lo = f(lo)  # each value of f computed once (a step time: ~2 us of Python each)
    g_lo = f_lo - lo
    if g_lo <= 0:
        return f_lo, feasible(lo)
    hi = lo
    g_hi = g_lo
    for _ in range(64):
        nxt = hi * 2
        if not feasible(nxt):
            if edge is not None:
                end = edge(hi, nxt)
            else:
                a, b = hi, nxt  # the edge of the feasible region lies in (a, b]
                for _ in range(40):
                    m = (a + b) / 2
                    a, b = (m, b) if feasible(m) else (a, m)
                end = a
            g_end = f(end) - end
            if g_end >= 0:
                return end, False
            hi, g_hi = end, g_end
            break
        hi = nxt
        g_hi = f(hi) - hi
        if g_hi < 0:
            break
        lo, g_lo = hi, g_hi
    else:
        return hi, False
    side = 0
    t = hi
    for _ in range(80):
        t = hi - g_hi * (hi - lo) / (g_hi - g_lo)
        f_t = f(t)
        g_t = f_t - t
        if abs(g_t) <= 1e-9 + 1e-7 * t:
            break
        if g_t >= 0:
            lo, g_lo = t, g_t
            if side == -1:
                g_hi /= 2
            side = -1
        else:
            hi, g_hi = t, g_t
            if side == 1:
                g_lo /= 2
            side = 1
    return f_t, True
