"""Traffic, not averages (issue 28, item 3): one replica's engine run step by step over a
stream of requests of varied lengths, giving throughput and TTFT, TPOT and end-to-end latency
at p50, p90, p95 and p99.

Why a simulation and not the mean model's queueing formulas with spreads: a first attempt
(not merged) gave each mean wait of serving_queue.py a distribution and added them as
independent. On the 13 published p99 TTFT rows it erred by 50 % (median), because the tails
come from what those formulas average away: requests that arrive together are prefilled in
turn (the last of a closed loop's first wave waits for every prompt before it), a long prompt
holds the token budget for several steps while the prompts behind it wait, and a burst of
Poisson arrivals queues in the scheduler, not as independent waits. Here each step is
scheduled as the engine schedules it:

- ``mixed`` policy (vLLM V1, TensorRT-LLM in-flight batching): every running sequence that has
  its prompt decodes one token; prompt tokens fill the rest of the step's token budget, the
  partly prefilled request first, then new requests in arrival order while a batch slot and
  KV room are free (chunked prefill cuts a prompt at the budget; without it a prompt goes
  whole);
- ``separate`` policy (SGLang, vLLM V0): waiting prompts run in their own prefill steps (up
  to the budget, chunked at it), which the decodes wait for; vLLM 0.6's multi-step scheduling
  admits new prompts only between groups of k decode steps.

A step with ``d`` decodes and ``p`` prompt tokens takes the serving model's own
``StepModel.mixed(d, p)``; a request's TTFT also carries the engine's dispatch time
(``serving_ttft_overhead_ms``). The first token comes at the end of the step that finishes the
prompt. Not modelled: preemption when the KV cache overflows (admission waits for KV room
instead), the KV read's dependence on each request's own context (the step model's mean
context is used), speculative decoding, and client-side timing jitter.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise
from typing import Any

from whichgpu.errors import InputError
from whichgpu.estimate.speed.traffic import Lengths, fixed

PERCENTILES = (50, 90, 95, 99)
_SEED = 20261207


class Arrival(StrEnum):
    """How requests arrive."""

    POISSON = "poisson"  # at a rate, exponential gaps
    CLOSED = "closed"  # a closed loop of users, each sending the next when one ends
    BACKLOG = "backlog"  # all sent at once


@dataclass(frozen=True)
class Traffic:
    """The requests one replica is sent."""

    lengths: Lengths
    arrival: Arrival
    value: float  # requests/s (poisson), users (closed), ignored (backlog)
    requests: int = 1000  # requests in the run
    prefix_hit: float = 0.0  # share of each prompt's tokens found in the prefix cache
    max_in_flight: int | None = None  # a client's cap on requests in flight (poisson)

    def describe(self) -> str:
        how = {Arrival.POISSON: f"Poisson arrivals at {self.value:g} requests/s",
               Arrival.CLOSED: f"{self.value:g} users in a closed loop",
               Arrival.BACKLOG: "all sent at once"}[self.arrival]
        cached = f", {self.prefix_hit:.0%} of prompt tokens from the prefix cache" \
            if self.prefix_hit else ""
        return f"{self.requests:,} requests, {how}; {self.lengths.describe()}{cached}"


@dataclass(frozen=True)
class Spread:
    """A latency's mean and percentiles (seconds)."""

    mean: float
    p50: float
    p90: float
    p95: float
    p99: float

    def at(self, pct: int) -> float:
        return float(getattr(self, f"p{pct}")) if pct in PERCENTILES else math.nan

    def to_json(self) -> dict[str, float]:
        return {"mean": self.mean, "p50": self.p50, "p90": self.p90, "p95": self.p95,
                "p99": self.p99}


@dataclass(frozen=True)
class TrafficResult:
    """What a replica does with a stream of requests."""

    traffic: Traffic
    requests_per_s: float
    output_tokens_per_s: float
    input_tokens_per_s: float
    ttft: Spread
    tpot: Spread
    e2e: Spread
    itl: Spread  # the gap between two output tokens of a request
    decode_batch: float  # sequences decoding together, averaged over time
    duration_s: float
    _ttfts: tuple[float, ...] = ()
    _tpots: tuple[float, ...] = ()

    def goodput(self, ttft_s: float | None = None, tpot_s: float | None = None) -> float:
        """Requests/s that met both targets (DistServe's goodput)."""
        if not self._ttfts:
            return 0.0
        ok = sum(1 for a, b in zip(self._ttfts, self._tpots, strict=True)
                 if (ttft_s is None or a <= ttft_s) and (tpot_s is None or b <= tpot_s))
        return ok / len(self._ttfts) * self.requests_per_s

    def to_json(self) -> dict[str, Any]:
        return {"traffic": self.traffic.describe(), "requests_per_s": self.requests_per_s,
                "output_tokens_per_s": self.output_tokens_per_s,
                "input_tokens_per_s": self.input_tokens_per_s,
                "ttft_s": self.ttft.to_json(), "tpot_s": self.tpot.to_json(),
                "e2e_s": self.e2e.to_json(), "itl_s": self.itl.to_json(),
                "decode_batch": self.decode_batch,
                "duration_s": self.duration_s}


def _spread(values) -> Spread:
    import numpy as np

    a = np.asarray(values, dtype=float)
    if a.size == 0:
        return Spread(math.nan, math.nan, math.nan, math.nan, math.nan)
    q = np.quantile(a, [p / 100 for p in PERCENTILES])
    return Spread(float(a.mean()), *(float(x) for x in q))


class _Req:
    __slots__ = ("arrive", "end", "first", "kv", "last", "made", "output", "prompt", "todo")

    def __init__(self, arrive: float, prompt: int, computed: int, output: int) -> None:
        self.arrive = arrive
        self.prompt = prompt  # tokens in its KV once prefilled
        self.todo = computed  # prompt tokens still to compute (prefix-cache hits skipped)
        self.output = output
        self.made = 0  # output tokens so far
        self.first = math.nan
        self.end = math.nan
        self.kv = 0
        self.last = math.nan  # when its latest token came


# Decode-only stretches run in one go (_coast), to the same bits as step by step; False
# steps one by one (the reference the tests compare with).
COAST = True


def simulate(sm, traffic: Traffic) -> TrafficResult:
    """Run ``traffic`` through the replica of ServingModel ``sm``."""
    import numpy as np

    if traffic.requests < 1:
        raise InputError("a traffic run needs at least one request")
    if not 0 <= traffic.prefix_hit < 1:
        raise InputError(f"the prefix-cache hit rate must be in [0, 1), got "
                         f"{traffic.prefix_hit:g}")
    if traffic.arrival is Arrival.POISSON and traffic.value <= 0:
        raise InputError(f"the request rate must be positive, got {traffic.value:g}")
    if traffic.arrival is Arrival.CLOSED and traffic.value < 1:
        raise InputError(f"a closed loop needs at least one user, got {traffic.value:g}")
    rng = np.random.default_rng(_SEED)
    n = traffic.requests
    pairs = traffic.lengths.sample(n, rng)
    steps, cfg = sm.steps, sm.config
    dispatch = steps.request_dispatch_s
    cap = sm.capacity
    per_token = cap.bytes_per_sequence_per_gpu / max(cap.resident_tokens, 1)
    kv_room = cap.pool_bytes_per_gpu / per_token if per_token > 0 else math.inf
    full_reserve = cfg.reservation == "full"
    limit = max(min(cfg.max_num_seqs, cap.sequences if cap.sequences > 0 else 1) if
                not full_reserve else cap.sequences, 1)
    limit = max(min(limit, cfg.max_num_seqs), 1)

    def new(i: int, at: float) -> _Req:
        p, o = pairs[i]
        computed = max(int(round(p * (1 - traffic.prefix_hit))), 1)
        return _Req(at, p, computed, o)

    # arrivals: (time the client sends it); closed loops add theirs as requests end
    sent = 0
    arrivals: deque[_Req] = deque()
    if traffic.arrival is Arrival.POISSON:
        between = rng.exponential(1 / traffic.value, n)
        at = np.cumsum(between) - between[0]
        arrivals.extend(new(i, float(at[i])) for i in range(n))
        sent = n
    else:
        first_wave = n if traffic.arrival is Arrival.BACKLOG else min(int(traffic.value), n)
        arrivals.extend(new(i, 0.0) for i in range(first_wave))
        sent = first_wave
    client_cap = traffic.max_in_flight if traffic.arrival is Arrival.POISSON else None
    held: deque[_Req] = deque()  # sent by the schedule, held by the client's cap
    in_flight = 0

    waiting: deque[_Req] = deque()
    running: list[_Req] = []
    done: list[_Req] = []
    kv_used = 0.0
    t = 0.0
    busy_decodes = 0.0  # sum of decode batch x step time
    gaps: list[float] = []  # every output token's gap after the one before (ITL)
    multi = max(cfg.multi_step, 1) if cfg.policy != "mixed" else 1
    budget = max(int(cfg.token_budget), 1)

    def admit_arrivals(now: float) -> None:
        nonlocal in_flight
        while arrivals and arrivals[0].arrive <= now + 1e-9:
            r = arrivals.popleft()
            if client_cap is not None and in_flight >= client_cap:
                held.append(r)
                continue
            in_flight += 1
            waiting.append(r)

    def finish(r: _Req, now: float) -> None:
        nonlocal kv_used, sent, in_flight
        r.end = now
        kv_used -= r.kv
        done.append(r)
        in_flight -= 1
        if held:  # the client sends a held request now; its clock starts now
            h = held.popleft()
            h.arrive = now
            in_flight += 1
            waiting.append(h)
        if traffic.arrival is Arrival.CLOSED and sent < n:
            arrivals.append(new(sent, now))
            sent += 1

    def can_start(r: _Req) -> bool:
        need = r.prompt + (r.output if full_reserve else 1)
        return len(running) < limit and (kv_used + need <= kv_room or not running)

    def start(r: _Req) -> None:
        nonlocal kv_used
        r.kv = r.prompt + (r.output if full_reserve else 1)
        kv_used += r.kv
        running.append(r)

    # step times by (decodes, prompt tokens), kept on the step model for later runs
    memo: dict[tuple[int, int], float] = steps.__dict__.setdefault("_sim_steps", {})

    def step_s(decodes: int, tokens: int) -> float:
        key = (decodes, tokens)
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = steps.mixed(float(decodes), float(tokens))
        return hit

    guard = 0
    while len(done) < n:
        guard += 1
        if guard > 50_000_000:  # pragma: no cover - a scheduling bug, never a user error
            raise RuntimeError("serving simulation did not finish")
        # requests enter the engine after the API server's dispatch time
        admit_arrivals(t - dispatch)
        if not running and not waiting:
            if not arrivals:
                break
            t = max(t, arrivals[0].arrive + dispatch)
            continue
        decoders = [r for r in running if r.todo == 0]
        if cfg.policy == "mixed":
            if COAST and not waiting and decoders and len(decoders) == len(running):
                coasted = _coast(decoders, t, step_s(len(decoders), 0), busy_decodes,
                                 arrivals[0].arrive if arrivals else math.inf, dispatch, gaps)
                if coasted is not None:
                    t, busy_decodes = coasted
                    continue
            room = max(budget - len(decoders), 0)
            chunks: list[tuple[_Req, int]] = []
            for r in running:  # a partly prefilled prompt goes on first
                if r.todo and room > 0:
                    take = min(r.todo, room) if cfg.chunked_prefill else r.todo
                    if take > room and chunks:
                        break
                    chunks.append((r, take))
                    room -= take
            while waiting and room > 0 and can_start(waiting[0]):
                r = waiting[0]
                take = min(r.todo, room) if cfg.chunked_prefill else r.todo
                if take > room and (chunks or decoders):
                    break
                waiting.popleft()
                start(r)
                chunks.append((r, take))
                room -= take
            dt = step_s(len(decoders), sum(c for _, c in chunks))
            t += dt
            busy_decodes += len(decoders) * dt
            _emit(decoders, t, finish, running, gaps)
            for r, c in chunks:
                r.todo -= c
                if r.todo == 0:
                    r.first = r.last = t
                    r.made = 1
                    r.kv += 1
                    kv_used += 1
                    if r.made >= r.output:
                        running.remove(r)
                        finish(r, t)
            continue
        # separate policy: a prefill step when prompts wait and there is room, else decodes
        partial = [r for r in running if r.todo]
        if partial or (waiting and can_start(waiting[0])):
            room = budget
            chunks = []
            for r in partial:
                take = min(r.todo, room) if cfg.chunked_prefill else r.todo
                chunks.append((r, take))
                room -= take
            while waiting and room > 0 and can_start(waiting[0]):
                r = waiting[0]
                take = min(r.todo, room) if cfg.chunked_prefill else r.todo
                if take > room and chunks:
                    break
                waiting.popleft()
                start(r)
                chunks.append((r, take))
                room -= take
            t += step_s(0, sum(c for _, c in chunks))
            for r, c in chunks:
                r.todo -= c
                if r.todo == 0:
                    r.first = r.last = t
                    r.made = 1
                    if r.made >= r.output:
                        running.remove(r)
                        finish(r, t)
            continue
        # multi-step scheduling streams a group's tokens together: one gap per group
        before = [(r, r.last) for r in decoders]
        burst: list[float] = [] if multi > 1 else gaps
        for _ in range(multi):
            if not decoders:
                break
            dt = step_s(len(decoders), 0)
            t += dt
            busy_decodes += len(decoders) * dt
            _emit(decoders, t, finish, running, burst)
            decoders = [r for r in decoders if r.made < r.output]
        if multi > 1:
            gaps.extend(r.last - last for r, last in before)
    return _result(traffic, done, t, busy_decodes, gaps)


def _coast(decoders: list[_Req], t: float, dt: float, busy: float, arrive: float,
           dispatch: float, gaps: list[float]) -> tuple[float, float] | None:
    """Run the decode-only steps before anything can change in one go: no prompt waits or
    is partly computed, so every step until the next arrival is admitted or the first
    sequence ends is the same (decodes, 0) step. The steps are summed one by one and the
    gaps kept in the step loop's order, so the result is the loop's to the last bit; the
    step that admits or ends a request is left to the loop. None when no step can coast."""
    steps = min(r.output - r.made for r in decoders) - 1
    if steps < 1:
        return None
    n = len(decoders)
    times: list[float] = []
    for _ in range(steps):
        # the loop admits arrivals at the top of a step, with its clock before the step
        if times and arrive <= t - dispatch + 1e-9:
            break
        t += dt
        busy += n * dt
        times.append(t)
    gaps.extend([times[0] - r.last for r in decoders])
    for before, now in pairwise(times):
        gaps.extend([now - before] * n)
    k = len(times)
    for r in decoders:
        r.made += k
        r.kv += k
        r.last = t
    return t, busy


def _emit(decoders: list[_Req], now: float, finish, running: list[_Req],
          gaps: list[float]) -> None:
    """Each decoding sequence makes one token (its gap since the last one kept for the
    inter-token latency); those that reach their output end."""
    ended = False
    for r in decoders:
        r.made += 1
        r.kv += 1
        gaps.append(now - r.last)
        r.last = now
        if r.made >= r.output:
            finish(r, now)
            ended = True
    if ended:
        running[:] = [r for r in running if not (r.todo == 0 and r.made >= r.output)]


def _result(traffic: Traffic, done: list[_Req], end: float, busy: float,
            gaps: list[float]) -> TrafficResult:
    start = min((r.arrive for r in done), default=0.0)
    span = max(end - start, 1e-12)
    ttfts = [r.first - r.arrive for r in done]
    tpots = [(r.end - r.first) / (r.output - 1) if r.output > 1 else 0.0 for r in done]
    e2es = [r.end - r.arrive for r in done]
    outs = sum(r.output for r in done)
    ins = sum(r.prompt for r in done)
    return TrafficResult(traffic, len(done) / span, outs / span, ins / span, _spread(ttfts),
                         _spread(tpots), _spread(e2es), _spread(gaps), busy / span, span,
                         tuple(ttfts),
                         tuple(tpots))


def traffic_for(sm, load, lengths: Lengths | None = None, *, prefix_hit: float = 0.0,
                max_in_flight: int | None = None, requests: int | None = None) -> Traffic:
    """The traffic a serving Load stands for (serving.Load): a rate is Poisson, a
    concurrency a closed loop, a backlog sent at once, max throughput a closed loop at the
    batch limit; lengths fixed at the model's own unless given."""
    lengths = lengths or fixed(sm.prompt, sm.output)
    kind = {"rate": Arrival.POISSON, "concurrency": Arrival.CLOSED,
            "backlog": Arrival.BACKLOG, "max-throughput": Arrival.CLOSED}[load.kind]
    value = float(sm.limit) if load.kind == "max-throughput" else float(load.value)
    n = requests or load.requests or (int(value) if kind is Arrival.BACKLOG else 0)
    if not n:  # benchmark tools' habit: ten prompts per user (InferenceX, vllm bench sweeps)
        n = max(200, int(value) * 10) if kind is not Arrival.POISSON else 1000
    return Traffic(lengths, kind, value, int(n), prefix_hit, max_in_flight)
