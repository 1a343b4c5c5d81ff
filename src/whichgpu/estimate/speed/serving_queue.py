"""Queueing formulas for a serving replica: waits for a batch slot and for the prefill budget.

A continuous-batching engine admits a request at the next step as long as it has a free batch
slot (``max_num_seqs``) and room in the KV cache, so below saturation the only waits are short:
for the step under way, for the prompts ahead of it in the step's token budget, and (near
saturation) for a slot. We model

- the slots as an M/G/c queue (c = the batch limit, service = the request's time in the
  engine), with the Allen-Cunneen approximation ``Wq = C(c, a) / (c mu - lambda) x
  (1 + cs^2) / 2`` (Erlang C from the Erlang B recursion, stable for thousands of slots);
- the prefill budget as an M/D/1 queue (each prompt needs a fixed share of the per-step token
  budget): ``Wq = rho s / (2 (1 - rho))``.

A step-level simulation would follow each request; these closed forms keep ``recommend``
fast enough to try every GPU and layout, and they give the knee where latency grows without
bound as the load nears the replica's throughput, which is what a sizing needs. Tail
percentiles are not modelled (means; medians are reported as means).
"""

from __future__ import annotations

import math


def erlang_c(c: int, a: float) -> float:
    """Probability that an arrival waits in an M/M/c queue with offered load ``a`` (< c)."""
    if c <= 0:
        return 1.0
    if a <= 0:
        return 0.0
    rho = a / c
    if rho >= 1:
        return 1.0
    if rho < 0.5 and c > 8:
        return 0.0  # below 1e-6 for c > 8 at half load: not worth the recursion
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b / (1 - rho * (1 - b))


def slot_wait_s(c: int, rate: float, service_s: float, cv2: float) -> float:
    """Mean wait for one of ``c`` batch slots (Allen-Cunneen M/G/c); inf at saturation."""
    if rate <= 0 or service_s <= 0:
        return 0.0
    a = rate * service_s
    if a >= c:
        return math.inf
    mu = 1 / service_s
    return erlang_c(c, a) / (c * mu - rate) * (1 + cv2) / 2


def md1_wait_s(rate: float, service_s: float) -> float:
    """Mean wait in an M/D/1 queue (deterministic service); inf at saturation."""
    rho = rate * service_s
    if rho >= 1:
        return math.inf
    return rho * service_s / (2 * (1 - rho))


def busy_probability(rate: float, time_in_system_s: float) -> float:
    """Chance that an arrival finds the engine mid-step: at least one request in an
    M/G/infinity system with ``rate x time`` requests on average."""
    return 1 - math.exp(-max(rate * time_in_system_s, 0.0))


def backlog_wait_s(requests: int, in_flight: int, completions_per_s: float) -> float:
    """Mean wait of ``requests`` sent at once to ``in_flight`` slots served FIFO at
    ``completions_per_s``: request k > in_flight starts after k - in_flight completions."""
    if requests <= in_flight or completions_per_s <= 0:
        return 0.0
    waiting = requests - in_flight
    return waiting * waiting / (2 * requests * completions_per_s)


def overload_wait_s(requests: int, rate: float, capacity_per_s: float) -> float:
    """Mean wait over a finite open-loop run when requests arrive faster than they are served:
    the k-th arrives at k / rate and starts at about k / capacity."""
    if capacity_per_s <= 0:
        return math.inf
    if rate <= capacity_per_s:
        return 0.0
    return requests / 2 * (1 / capacity_per_s - 1 / rate)
