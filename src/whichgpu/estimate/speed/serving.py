"""Continuous-batching serving (vLLM, SGLang, TensorRT-LLM): TPOT and TTFT under load, the
KV-cache capacity, and the throughput where a replica saturates.

One replica (a TP x PP group of GPUs) serves requests of ``prompt`` + ``output`` tokens. Its
engine (``serving_engine.EngineConfig``) decides how a step is made:

- ``mixed`` (vLLM V1, TensorRT-LLM in-flight batching): every step decodes one token for each
  running sequence and carries prompt tokens (chunks) within a token budget. A step with ``d``
  decodes and ``p`` prompt tokens takes::

      T(d, p) = max(KV read(d) + weights read(d + p), matmuls(d) + p x prefill FLOPs/token)
                + all-reduce(d + p) + fixed per step

  the speed model's own decode step (``llm.decode_step``) and prefill (``llm.prefill_time``)
  split into these terms, so T(d, 0) is its decode step and T(0, P) + dispatch its TTFT.
- ``separate`` (SGLang, vLLM V0): prefill batches run in their own steps and the decodes
  wait, so TPOT = decode step / (1 - share of time spent on prefill).

Under a load the replica settles where the step time and the load agree: at ``lambda``
requests/s, ``d = lambda x output x TPOT`` sequences decode and ``lambda x prompt x TPOT``
prompt tokens join each step (Little's law), a fixed point found by iteration; those tokens
come as whole prompts in a few steps, not a share in every step, under Poisson arrivals
(``at_rate``) and in a closed loop alike (``at_concurrency``, max throughput: requests end at
scattered steps), so the mean step is the mean over the number of prompts a step carries
(``serving_steps.arriving_mixed``, as the engine and ``serving_sim`` schedule). TTFT is the
request's own prefill steps (with the decodes they share) plus the waits of
``serving_queue``: for the step under way, for the prompts ahead in the budget (M/D/1), for a
batch slot near saturation (M/G/c). A closed loop of ``C`` users (a benchmark's
max-concurrency) is the rate at which ``C`` requests are in flight; a backlog of requests sent
at once waits for slots in turn. The most sequences that decode together are bounded by the
KV capacity, ``max_num_seqs`` and the token budget (``serving_engine.batch_limit``); the
replica's max throughput is the closed loop at that batch.

Not modelled (named where they matter): speculative decoding (EAGLE, MTP, n-gram: the
accepted tokens per step depend on the data), prefix-cache hits (the workload's shared
prefixes are unknown; set a shorter prompt for the cached part), preemption and recompute when
a paged cache overflows, multi-step scheduling's bursty streaming (its admission delay is
modelled: an arrival waits out a group of k steps), prefill/decode
disaggregation and attention data parallelism, tail percentiles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from whichgpu.catalog.gpus import GPU
from whichgpu.errors import InputError
from whichgpu.estimate import memo
from whichgpu.estimate.speed.lengths import inference_lengths
from whichgpu.estimate.speed.serving_engine import (
    EngineConfig,
    KVCapacity,
    Usage,
    batch_limit,
    engine_config,
    kv_capacity,
    serving_value,
)
from whichgpu.estimate.speed.serving_queue import (
    backlog_wait_s,
    busy_probability,
    md1_wait_s,
    overload_wait_s,
    slot_wait_s,
)
from whichgpu.estimate.speed.serving_steps import StepModel, arriving_mixed, fixed_point
from whichgpu.estimate.workload import Workload
from whichgpu.messages import Field, msg

LoadKind = Literal["rate", "concurrency", "backlog", "max-throughput"]
Lengths = Literal["fixed", "mean", "max", "unknown"]
__all__ = ["Load", "ServingModel", "ServingPoint", "StepModel", "fixed_point", "serving_model"]


def _fifo_share(k: int) -> float:
    """The mean prompt's share of a prefill fill that ``k`` equal prompts go through in order:
    the i-th is done at i/k of it, so (k + 1) / 2k (one prompt waits for all of its fill)."""
    return (k + 1) / (2 * max(k, 1))


# ------------------------------------------------------------------ results

@dataclass(frozen=True)
class Load:
    """What one replica is asked to serve."""

    kind: LoadKind
    value: float = 0.0  # requests/s (rate), users (concurrency), requests sent at once
    requests: int | None = None  # length of a finite run (benchmarks); None: steady state

    def describe(self) -> str:
        if self.kind == "rate":
            return f"{self.value:g} requests/s (Poisson arrivals)"
        if self.kind == "concurrency":
            return f"{self.value:g} users in a closed loop"
        if self.kind == "backlog":
            return f"{self.value:g} requests sent at once"
        return "as many requests as fit (max throughput)"


@dataclass(frozen=True)
class ServingPoint:
    """Where one replica settles under a load (typical values; seconds and per second)."""

    load: Load
    requests_per_s: float
    output_tokens_per_s: float
    ttft_s: float
    tpot_s: float
    decode_batch: float  # sequences decoding together, on average
    utilisation: float  # requests/s over the replica's max requests/s
    saturated: bool
    ttft_parts: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def e2e_s(self) -> float:
        return self.ttft_s + max(self.output_tokens_per_request - 1, 0) * self.tpot_s

    @property
    def output_tokens_per_request(self) -> float:
        return self.output_tokens_per_s / self.requests_per_s if self.requests_per_s else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"load": {"kind": self.load.kind, "value": self.load.value,
                         "requests": self.load.requests},
                "requests_per_s": self.requests_per_s,
                "output_tokens_per_s": self.output_tokens_per_s, "ttft_s": self.ttft_s,
                "tpot_s": self.tpot_s, "e2e_s": self.e2e_s, "decode_batch": self.decode_batch,
                "utilisation": None if math.isnan(self.utilisation) else self.utilisation,
                "saturated": self.saturated,
                "ttft_parts": dict(self.ttft_parts), "notes": list(self.notes)}


@dataclass
class _Open:
    """The open-loop state at one arrival rate (internal)."""

    tpot: float
    decodes: float
    own_prefill: float
    waits: dict[str, float]
    stable: bool
    why: str = ""

    @property
    def ttft(self) -> float:
        return self.own_prefill + sum(self.waits.values())


# ------------------------------------------------------------------ the model

@dataclass
class _Replica:
    """What a ServingModel is built from, none of it depending on the workload's batch (the
    load is an argument of each answer)."""

    config: EngineConfig
    hw: Any
    capacity: KVCapacity
    limit: int
    limited_by: str
    steps: StepModel
    cv2: float
    max: list[ServingPoint | None] = field(default_factory=lambda: [None])
    # at_concurrency's answers by (users, requests, utilisation): a recommendation asks each
    # replica the same closed loop again (spot and on-demand, changes tried, later answers)
    closed: dict[tuple[int, int | None, bool], ServingPoint] = field(default_factory=dict)


# A recommendation builds the same replica again and again: each batch it tries on a size
# (the users per replica, a closed loop at each concurrency) is a fresh workload copy that
# differs only in its batch. Remembered by value (every setting but the batch; the model,
# GPU, profile and hardware view by identity, held by the entry), bounded, emptied when a
# constant changes, off in the reference path (estimate/memo.py).
_REPLICAS = memo.Table(512)
_KEY_FIELDS = tuple(f.name for f in fields(Workload) if f.name not in ("model", "batch"))


def _view_gpu(hw: Any) -> Any:
    return None if hw is None else hw.gpu


def _replica_key(w: Workload, gpu: GPU, profile: Any, version: str | None, usage: Usage,
                 lengths: Lengths, hw: Any) -> tuple[Any, ...] | None:
    """The value key of one replica, or None where a setting cannot be hashed."""
    from whichgpu.estimate.speed.opt_in import opted_in

    d = w.__dict__
    view = None if hw is None else (id(hw.gpu), hw.count, hw.link, hw.fabric, hw.compute_scale,
                                    hw.bandwidth_scale, hw.calibration, hw.per_server,
                                    hw.network)
    key = (id(w.model), id(gpu), id(profile), version, usage, lengths, opted_in(), view,
           *[d[n] for n in _KEY_FIELDS])
    try:
        hash(key)
    except TypeError:
        return None
    return key


class ServingModel:
    """One replica of a workload on a GPU layout, under its engine's defaults."""

    def __init__(self, w: Workload, gpu: GPU, *, profile: Any = None,
                 config: EngineConfig | None = None, version: str | None = None,
                 usage: Usage = "server", lengths: Lengths = "fixed",
                 hardware_view: Any = None) -> None:
        if w.is_training or w.is_diffusion:
            raise InputError(msg("serving.llm_only", "the serving model is for LLM inference "
                                 "({flag})", flag=Field("task", "inference")))
        prompt, output, _ = inference_lengths(w)
        if output < 1:
            raise InputError(msg("serving.output", "serving needs at least one output token "
                                 "({flag})", flag=Field("output_tokens")))
        self.workload = w
        self.gpu = gpu
        self.prompt, self.output = prompt, output
        self.gpus = w.tp_degree * w.pp_degree
        if w.expert_parallel and w.dp_degree > 1:  # issue 30: dp ranks make one EP replica
            self.gpus = w.tp_degree * w.pp_degree * w.dp_degree
        key = None if config is not None else _replica_key(w, gpu, profile, version, usage,
                                                             lengths, hardware_view)
        held = _REPLICAS.get(key) if key is not None else None
        if held is not None and held[0] is w.model and held[1] is gpu \
                and held[2] is profile and held[3] is _view_gpu(hardware_view):
            core: _Replica = held[4]
        else:
            core = self._build(w, gpu, profile, config, version, usage, lengths,
                               hardware_view, prompt, output)
            if key is not None:
                _REPLICAS.put(key, (w.model, gpu, profile, _view_gpu(hardware_view),
                                    core))
        self.config, self.hw, self.capacity = core.config, core.hw, core.capacity
        self.limit, self.limited_by = core.limit, core.limited_by
        self.steps: StepModel = core.steps
        self.cv2 = core.cv2
        self._max = core.max  # one cell per replica: max_throughput() once for all its copies
        self._closed_points = core.closed

    def _build(self, w: Workload, gpu: GPU, profile: Any, config: EngineConfig | None,
               version: str | None, usage: Usage, lengths: Lengths, hardware_view: Any,
               prompt: int, output: int) -> _Replica:
        """What one replica is, whatever its batch: engine defaults, KV capacity, batch
        limit, step model."""
        from whichgpu.estimate.speed.hardware import hardware

        config = config or engine_config(w, gpu, version=version, usage=usage)
        if w.expert_parallel and w.dp_degree > 1:  # issue 30: dp ranks make one EP replica
            from whichgpu.estimate.speed.expert_parallel import ep_replica

            self.gpus, config = ep_replica(w, config)
        hw = hardware_view or hardware(gpu, self.gpus, profile, w.interconnect,
                                       w.gpus_per_node)
        capacity = kv_capacity(w, gpu, config, prompt, output)
        limit, limited_by = batch_limit(config, capacity, prompt, output)
        if limit < 1:
            raise InputError(msg("serving.no_sequence", "the KV cache of {n} x {gpu} holds no "
                                 "sequence of {tokens:,} tokens after the weights ({formula})",
                                 n=self.gpus, gpu=gpu.id, tokens=prompt + output,
                                 formula=capacity.formula))
        # issue 28: measured kernels (aiconfigurator-core) where opted in and covered
        from whichgpu.estimate.speed.kernel_db import step_model

        steps = step_model(w, hw, gpu.id, prompt, output)
        if not config.cuda_graphs:  # eager: the host's dispatch bounds each step from below
            from whichgpu.estimate.speed.serving_steps import eager_floor

            steps.eager_floor_s = eager_floor(w)
        cv2 = float(serving_value("service_time_cv2").get(lengths, 0.5))
        return _Replica(config, hw, capacity, limit, limited_by, steps, cv2)

    # -------------------------------------------------------------- budget and prefill

    def _budget(self, decodes: float) -> float:
        """Prompt tokens a step may carry beside ``decodes`` decodes (mixed policy)."""
        cfg = self.config
        budget: float = cfg.token_budget
        if not cfg.chunked_prefill:  # whole prompts: the engine must be built to take one
            budget = max(budget, self.prompt + decodes)
        return budget - decodes

    def _own_prefill_mixed(self, decodes: float) -> float:
        room = self._budget(decodes)
        n = max(math.ceil(self.prompt / room), 1)
        last = self.prompt - (n - 1) * room
        return (self.steps.request_dispatch_s + (n - 1) * self.steps.mixed(decodes, room)
                + self.steps.mixed(decodes, last))

    def _prefill_chunks(self) -> list[int]:
        """Prompt chunks of a request in prefill-only steps (separate policy)."""
        size = self.config.token_budget if self.config.chunked_prefill else self.prompt
        size = max(size, 1)
        n = max(math.ceil(self.prompt / size), 1)
        return [size] * (n - 1) + [self.prompt - (n - 1) * size]

    # -------------------------------------------------------------- open loop

    def _open(self, rate: float, limit: int, slots: bool = True) -> _Open:
        """The state at ``rate`` requests/s: Poisson arrivals, or a closed loop's (requests
        end at scattered steps and their users' next prompts arrive as at random); each
        prompt is scheduled whole into one step (serving_steps.arriving_mixed), not spread
        over every step."""
        if self.config.policy == "mixed":
            return self._open_mixed(rate, limit, slots)
        return self._open_separate(rate, limit, slots)

    def _open_mixed(self, rate: float, limit: int, slots: bool) -> _Open:
        s, P, n_out = self.steps, self.prompt, self.output

        def decodes(t: float) -> float:
            return max(1.0, rate * n_out * t)

        # decodes(t) and the budget inlined: the solver calls these ~30 times per solve
        rate_out, rate_in = rate * n_out, rate * P
        token_budget = self.config.token_budget
        whole = not self.config.chunked_prefill
        prompt = self.prompt

        def feasible(t: float) -> bool:
            d = max(1.0, rate_out * t)
            if d > limit:
                return False
            budget = max(token_budget, prompt + d) if whole else token_budget
            return rate_in * t < budget - d

        def edge(a: float, b: float) -> float:
            """fixed_point's bisection of the feasible region's edge, feasible() inlined."""
            for _ in range(40):  # max(x, y) written out: the same values, without a call
                m = (a + b) / 2
                d = rate_out * m
                if d <= 1.0:
                    d = 1.0
                if d > limit:
                    b = m
                    continue
                room: float = token_budget
                if whole and prompt + d > token_budget:
                    room = prompt + d
                if rate_in * m < room - d:
                    a = m
                else:
                    b = m
            return a

        def step(t: float) -> float:
            d = rate_out * t
            d = d if d > 1.0 else 1.0  # max(1.0, d), without a call
            room = max(token_budget, prompt + d) if whole else token_budget
            return arriving_mixed(s, d, rate * t, prompt, room - d)

        t, stable = fixed_point(step, s.decode(1.0), feasible, edge)
        d = decodes(t)
        if not stable:
            why = "the batch limit" if d > limit else "the step's token budget"
            return _Open(t, min(d, limit), self._own_prefill_mixed(min(d, limit)), {}, False,
                         f"the load needs more than {why} allows")
        room = self._budget(d)
        share = P / room * t  # time the prompt holds the whole prefill budget
        waits = {"prefill queue": md1_wait_s(rate, share)}
        own = self._own_prefill_mixed(d)
        in_engine = own + waits["prefill queue"] + (n_out - 1) * t
        waits["step under way"] = busy_probability(rate, in_engine) * t / 2
        if slots:
            waits["batch slot"] = slot_wait_s(limit, rate, in_engine, self.cv2)
        ok = all(math.isfinite(v) for v in waits.values())
        return _Open(t, d, own, waits, ok, "" if ok else "queues grow without bound")

    def _open_separate(self, rate: float, limit: int, slots: bool) -> _Open:
        s, P, n_out = self.steps, self.prompt, self.output
        chunks = self._prefill_chunks()
        most = max(1, self.config.token_budget // max(P, 1)) if len(chunks) == 1 else 1

        def per_prompt(t: float) -> float:
            """GPU seconds of prefill per request, prompts arriving during a step batched."""
            if len(chunks) > 1:
                return sum(s.prefill_batch(1, c) for c in chunks)
            k = int(round(min(max(1.0, 1 + rate * t), most)))
            return s.prefill_batch(k) / k

        def decodes(t: float) -> float:
            return max(1.0, rate * n_out * t)

        def feasible(t: float) -> bool:
            return rate * per_prompt(t) < 1 and decodes(t) <= limit

        def tpot(t: float) -> float:
            return s.decode(decodes(t)) / (1 - rate * per_prompt(t))

        t, stable = fixed_point(tpot, s.decode(1.0), feasible)
        d = decodes(t)
        own = s.request_dispatch_s + (sum(s.prefill_batch(1, c) for c in chunks)
                                      if len(chunks) > 1 else s.prefill_batch(1))
        if not stable:
            why = "the batch limit" if d > limit else "the prefill time"
            return _Open(t, min(d, limit), own, {}, False,
                         f"the load needs more than {why} allows")
        waits = {"prefill queue": md1_wait_s(rate, per_prompt(t))}
        in_engine = own + waits["prefill queue"] + (n_out - 1) * t
        # vLLM 0.6's multi-step scheduling (--num-scheduler-steps k) admits new requests only
        # between groups of k decode steps (vLLM PR #7000), so an arrival waits out the rest of
        # a k-step group, not of one step.
        group = s.decode(d) * max(self.config.multi_step, 1)
        waits["step under way"] = busy_probability(rate, in_engine) * group / 2
        if slots:
            waits["batch slot"] = slot_wait_s(limit, rate, in_engine, self.cv2)
        ok = all(math.isfinite(v) for v in waits.values())
        return _Open(t, d, own, waits, ok, "" if ok else "queues grow without bound")

    # -------------------------------------------------------------- closed loop

    def _closed(self, users: int) -> tuple[float, _Open]:
        """(requests/s, state) of ``users`` requests always in flight (no think time)."""
        n = max(1, min(users, self.limit))
        s = self.steps
        hi = n / (self._own_prefill_min() + (self.output - 1) * s.decode(1.0))

        def excess(rate: float) -> tuple[float, _Open]:
            """Requests in flight at ``rate`` minus ``n`` (inf where the rate is unstable)."""
            st = self._open(rate, n, slots=False)
            if not st.stable:
                return math.inf, st
            return rate * (st.ttft + (self.output - 1) * st.tpot) - n, st

        lo, g_lo = 0.0, -float(n)
        g_hi, _ = excess(hi)
        best = None
        for _ in range(60):  # safeguarded regula falsi: the excess grows with the rate
            span = hi - lo
            if math.isfinite(g_hi) and g_hi > g_lo:
                t = hi - g_hi * span / (g_hi - g_lo)
                t = min(max(t, lo + 0.05 * span), hi - 0.05 * span)
            else:
                t = lo + span / 2
            g, st = excess(t)
            if g <= 0:
                lo, g_lo, best = t, g, st
            else:
                hi, g_hi = t, g
            if hi - lo <= 1e-4 * hi or -g_lo <= 1e-4 * n:
                break
        if best is None:
            lo = hi * 1e-3
            best = self._open(lo, n, slots=False)
        return lo, best

    def _own_prefill_min(self) -> float:
        if self.config.policy == "mixed":
            return self._own_prefill_mixed(1.0)
        return self.steps.request_dispatch_s + sum(self.steps.prefill_batch(1, c)
                                                   for c in self._prefill_chunks())

    # -------------------------------------------------------------- public answers

    def max_throughput(self) -> ServingPoint:
        """Output tokens/s at the largest batch that fits (the closed loop at the limit)."""
        point = self._max[0]
        if point is None:
            rate, st = self._closed(self.limit)
            point = self._max[0] = self._point(Load("max-throughput", self.limit), rate, st,
                                               rate)
        return point

    @property
    def max_requests_per_s(self) -> float:
        return self.max_throughput().requests_per_s

    def at_rate(self, rate: float, requests: int | None = None) -> ServingPoint:
        """Poisson arrivals at ``rate`` requests/s. Past saturation: a finite run of
        ``requests`` queues up (its mean wait is given); a steady stream has no answer."""
        if rate <= 0:
            raise InputError(msg("serving.rate_positive", "the request rate must be positive, "
                                 "got {v:g}", v=rate))
        cap = self.max_requests_per_s
        load = Load("rate", rate, requests)
        st = self._open(rate, self.limit)
        if st.stable and rate < cap:
            point = self._point(load, rate, st, cap)
            return self._finite_run(point, requests) if requests else point
        full = self.max_throughput()
        if requests is None:
            return self._saturated(load, full, st.why or "the load is at or above the "
                                   "replica's max throughput")
        wait = overload_wait_s(requests, rate, cap)
        parts = {**full.ttft_parts, "backlog": wait}
        return ServingPoint(load, cap, full.output_tokens_per_s, full.ttft_s + wait,
                            full.tpot_s, full.decode_batch, 1.0, True, parts,
                            (f"{rate:g} requests/s is above the {cap:.3g} requests/s this "
                             f"replica serves: a run of {requests:,} requests queues up",))

    def at_concurrency(self, users: int, requests: int | None = None, *,
                       utilisation: bool = True) -> ServingPoint:
        """``users`` requests kept in flight (a benchmark's max-concurrency), each user sending
        the next request when one ends. With fixed lengths the users start together and stay
        in step (``wave``); with sampled lengths they spread into a steady stream."""
        if users < 1:
            raise InputError(f"concurrency must be at least 1, got {users}")
        key = (users, requests, utilisation)
        held = self._closed_points.get(key) if memo.enabled() else None
        if held is not None:
            return held
        point = self._at_concurrency(users, requests, utilisation)
        if memo.enabled() and len(self._closed_points) < 256:
            self._closed_points[key] = point
        return point

    def _at_concurrency(self, users: int, requests: int | None,
                        utilisation: bool) -> ServingPoint:
        load = Load("concurrency", users, requests)
        running = min(users, self.limit)
        notes: tuple[str, ...] = ()
        if users > self.limit:
            notes = (f"{users} users but at most {self.limit} sequences at once "
                     f"({self.limited_by}): the others wait for a slot",)
        if self.cv2 == 0:
            return self._waves(load, running, users, requests or users, notes,
                               self._cap(utilisation))
        rate, st = self._closed(users)
        point = self._point(load, rate, st, self._cap(utilisation))
        parts = dict(point.ttft_parts)
        ttft = point.ttft_s
        if users > self.limit:
            parts["batch slot"] = (users - self.limit) / rate
            ttft += parts["batch slot"]
        out_rate = rate
        if requests:  # a finite run: the first requests' prefill and the tail drain
            out_rate = self._run_rate(requests, running, rate)
            first = (self.steps.request_dispatch_s + self._fill_time(running) / 2
                     - point.ttft_parts.get("prefill", 0.0))
            parts["first requests' prefill"] = max(first, 0.0) * running / requests
            ttft += parts["first requests' prefill"]
        return ServingPoint(load, out_rate, out_rate * self.output, ttft, point.tpot_s,
                            point.decode_batch, point.utilisation, point.saturated, parts,
                            point.notes + notes)

    def backlog(self, requests: int, *, utilisation: bool = True) -> ServingPoint:
        """``requests`` sent at once (an offline run): FIFO through the batch limit. The
        throughput is over the whole run: the first batch's prefill, the steady part, and the
        tail while the last requests finish with ever fewer sequences in the batch."""
        if requests < 1:
            raise InputError(f"requests must be at least 1, got {requests}")
        load = Load("backlog", requests, requests)
        running = min(requests, self.limit)
        if self.cv2 == 0:
            return self._waves(load, running, requests, requests, (), self._cap(utilisation))
        rate, st = self._closed(running)
        run_rate = self._run_rate(requests, running, rate)
        point = self._point(load, run_rate, st, self._cap(utilisation))
        if requests <= self.limit:
            # issue 28: every request is admitted at once, so none is replaced while the run
            # lasts: the decode steps carry the one fill's prompts, then no new prompt (the
            # closed loop's steady state would add a replacement prompt per finished request
            # to every step). TTFT and TPOT are those of one wave (_wave).
            first_ttft, tpot = self._wave(running)[1], self._one_wave_tpot(running)
            return ServingPoint(load, run_rate, run_rate * self.output, first_ttft, tpot,
                                float(running), point.utilisation, point.saturated,
                                {"prefill": first_ttft}, point.notes + (
                                    f"all {requests:,} requests admitted at once: one wave, "
                                    "no request replaced while it runs",))
        first = self.steps.request_dispatch_s + self._fill_time(running) / 2
        later = requests - running
        queued = backlog_wait_s(requests, running, rate)
        prefill = (running * first + later * point.ttft_s) / requests
        parts = {"prefill": prefill, "backlog": queued}
        return ServingPoint(load, run_rate, run_rate * self.output, prefill + queued,
                            point.tpot_s, point.decode_batch, point.utilisation,
                            point.saturated, parts, point.notes)

    # -------------------------------------------------------------- finite runs

    def _wave(self, k: int) -> tuple[float, float, float]:
        """(seconds, mean TTFT, mean TPOT) of ``k`` fixed-length requests that start
        together and finish together: their prompts first (mixed: decodes join the steps as
        prompts complete; separate: decodes wait), then their outputs at batch ``k``."""
        s, P, n_out = self.steps, self.prompt, self.output
        if self.config.policy == "mixed":
            budget = self._budget(0.0)
            tokens = k * P
            n = max(math.ceil(tokens / budget), 1)
            samples = min(n, 64)
            fill = 0.0
            for i in range(samples):
                j = (i + 0.5) / samples * n
                fill += s.mixed(k * j / n, min(budget, tokens / n)) * n / samples
            rest = max(n_out - 1 - n / 2, 0.0)
            decode = s.decode(k)
            wave = fill + rest * decode
            tpot = (fill / 2 + rest * decode) / max(n_out - 1, 1)
            return wave, s.request_dispatch_s + fill * _fifo_share(k), tpot
        fill = self._fill_time(k)
        decode = s.decode(k)
        return (fill + (n_out - 1) * decode, s.request_dispatch_s + fill * _fifo_share(k),
                decode)

    def _one_wave_tpot(self, k: int) -> float:
        """The mean per-request TPOT of one wave of ``k`` requests sent at once (benchmarks
        average TPOT per request). A request admitted at a share f of the fill meets the
        (1 - f) of it still to come: in a mixed step it decodes through those steps (a short
        output spends all its tokens in them); in the separate policy its decode waits them
        out. Outputs lognormal with the replica's squared coefficient of variation
        (service_time_cv2; one length where it is 0), f uniform. With fixed outputs longer
        than the fill this is _wave's (fill / 2 + rest x decode) / (output - 1)."""
        from statistics import NormalDist

        s, n_out = self.steps, self.output
        decode = s.decode(k)
        mixed = self.config.policy == "mixed"
        if mixed:
            n = max(math.ceil(k * self.prompt / self._budget(0.0)), 1)
            fill = self._wave(k)[0] - max(n_out - 1 - n / 2, 0.0) * decode
            per_fill_step = fill / n
        else:
            fill = self._fill_time(k)
        if self.cv2 > 0:
            sigma = math.sqrt(math.log1p(self.cv2))
            mu = math.log(max(n_out, 1)) - sigma * sigma / 2
            normal = NormalDist()
            outs = [max(math.exp(mu + sigma * normal.inv_cdf((i + 0.5) / 32)) - 1, 1.0)
                    for i in range(32)]
        else:
            outs = [float(max(n_out - 1, 1))]
        shares = 16
        total = 0.0
        for m in outs:
            for j in range(shares):
                left = 1 - (j + 0.5) / shares  # share of the fill still to come
                if mixed:
                    steps_left = left * n
                    total += (min(m, steps_left) * per_fill_step
                              + max(m - steps_left, 0.0) * decode) / m
                else:
                    total += (left * fill + m * decode) / m
        return total / (len(outs) * shares)

    def _waves(self, load: Load, running: int, users: int, requests: int,
               notes: tuple[str, ...], cap: float | None) -> ServingPoint:
        """Fixed-length requests in waves of ``running``: ``users`` in a closed loop (or a
        backlog of ``requests``) wait for earlier waves."""
        wave, ttft, tpot = self._wave(running)
        waves = max(math.ceil(requests / running), 1)
        last = requests - (waves - 1) * running
        total = (waves - 1) * wave + (self._wave(last)[0] if last != running else wave)
        rate = requests / total if total > 0 else 0.0
        parts = {"prefill": ttft}
        waiting = max(users - running, 0)
        if load.kind == "backlog":
            parts["backlog"] = (waves - 1) / 2 * wave
        elif waiting:
            parts["batch slot"] = waiting / running * wave
        return ServingPoint(load, rate, rate * self.output, sum(parts.values()), tpot,
                            float(running), _share(rate, cap), False, parts,
                            notes + (f"fixed-length requests that start together run in "
                                     f"waves of {running}",))

    def _finite_run(self, point: ServingPoint, requests: int) -> ServingPoint:
        """``point`` over a finite run of ``requests`` sent at its rate: a benchmark's
        throughput is what completed over the run's duration (vLLM benchmark_serving.py,
        genai-perf: first send to last completion), so the run lasts the sending, about
        requests / rate with Poisson gaps, plus the last request's time in the system (issue
        28: 500 requests at 32/s take 15.6 s to send and ~5 s more to finish)."""
        rate = point.requests_per_s
        if rate <= 0 or not math.isfinite(point.e2e_s):
            return point
        run_rate = requests / (requests / rate + point.e2e_s)
        return replace(point, requests_per_s=run_rate,
                       output_tokens_per_s=run_rate * self.output,
                       notes=point.notes + (f"a run of {requests:,} requests: the last one's "
                                            "time in the system adds to the run",))

    def _run_rate(self, requests: int, in_flight: int, steady_rate: float) -> float:
        """Requests/s over a finite run of ``requests`` of sampled lengths with ``in_flight``
        slots: the slots fill (each first request's prefill), the run goes on at
        ``steady_rate``, and it ends with a drain in which the last ``in_flight`` requests
        finish as the batch empties (exponential outputs: the last one is about
        ln(in_flight) mean outputs long)."""
        s, n_out = self.steps, self.output
        fill = self._fill_time(in_flight)
        steady = max(requests - in_flight, 0) / steady_rate if steady_rate > 0 else 0.0
        points = 48
        span = n_out * math.log(max(in_flight, 1) + 1)
        drain = sum(s.decode(max(in_flight * math.exp(-((i + 0.5) / points * span) / n_out),
                                 1.0)) for i in range(points)) * span / points
        total = fill + steady + drain
        return requests / total if total > 0 else steady_rate

    def _fill_time(self, in_flight: int) -> float:
        """Seconds to prefill ``in_flight`` prompts sent at once."""
        s = self.steps
        if self.config.policy == "mixed":
            budget = self._budget(0.0)
            tokens = in_flight * self.prompt
            full = int(tokens // budget)
            rest = tokens - full * budget
            return full * s.mixed(0.0, budget) + (s.mixed(0.0, rest) if rest else 0.0)
        chunks = self._prefill_chunks()
        if len(chunks) > 1:
            return in_flight * sum(s.prefill_batch(1, c) for c in chunks)
        per_batch = max(1, self.config.token_budget // max(self.prompt, 1))
        batches = math.ceil(in_flight / per_batch)
        return batches * s.prefill_batch(min(per_batch, in_flight))

    # -------------------------------------------------------------- helpers

    def _cap(self, wanted: bool) -> float | None:
        """The replica's max requests/s, for a utilisation (skipped where none is wanted)."""
        return self.max_requests_per_s if wanted else None

    def _point(self, load: Load, rate: float, st: _Open, cap: float | None) -> ServingPoint:
        parts = {"prefill": st.own_prefill, **st.waits}
        return ServingPoint(load, rate, rate * self.output, st.ttft, st.tpot, st.decodes,
                            _share(rate, cap), not st.stable, parts)

    def _saturated(self, load: Load, full: ServingPoint, why: str) -> ServingPoint:
        return ServingPoint(load, full.requests_per_s, full.output_tokens_per_s, math.inf,
                            full.tpot_s, full.decode_batch, 1.0, True,
                            {**full.ttft_parts, "backlog": math.inf}, (why,))

    def step_bound(self, batch: float) -> str:
        """What dominates a decode step at ``batch``: compute or memory bandwidth (the
        matmuls against the attention's KV read and the weights read, the longest; see
        serving_steps)."""
        kv, comp, _, _ = self.steps.decode_terms(batch)
        weights = self.steps._weights_read(math.ceil(batch))
        return "compute" if comp >= weights and comp >= kv else "memory-bandwidth"

    def describe(self) -> dict[str, Any]:
        return {"engine": self.config.to_json(), "kv_capacity": self.capacity.to_json(),
                "batch_limit": self.limit, "limited_by": self.limited_by,
                "gpus_per_replica": self.gpus, "prompt_tokens": self.prompt,
                "output_tokens": self.output}


def _share(rate: float, cap: float | None) -> float:
    """``rate`` as a share of ``cap`` (NaN when no cap was asked for)."""
    if cap is None:
        return math.nan
    return min(rate / cap, 1.0) if cap > 0 else 1.0


def serving_model(w: Workload, gpu: GPU, **kwargs) -> ServingModel:
    """The serving model of ``w`` (its TP x PP layout is one replica) on ``gpu``."""
    return ServingModel(w, gpu, **kwargs)
