"""What a service must meet (a request rate, TTFT and TPOT targets, at the mean or a
percentile) and how a latency is said: shared by the Job (advise/job.py) and the sizing
(advise/serving.py) without either importing the other."""

from __future__ import annotations

from dataclasses import dataclass

from whichgpu.messages import Join, Message, msg


@dataclass(frozen=True)
class Targets:
    """What each request must see (mean values), and the traffic."""

    requests_per_s: float
    ttft_s: float | None = None
    tpot_s: float | None = None
    # issue 28: a target at a percentile (``2s@p95``) instead of the mean; None: the mean
    ttft_pct: int | None = None
    tpot_pct: int | None = None

    def met(self, ttft: float, tpot: float) -> bool:
        return ((self.ttft_s is None or ttft <= self.ttft_s)
                and (self.tpot_s is None or tpot <= self.tpot_s))

    @property
    def at_percentile(self) -> bool:
        return (self.ttft_s is not None and self.ttft_pct is not None) or (
            self.tpot_s is not None and self.tpot_pct is not None)

    def describe(self) -> Message:
        parts = [msg("serving.target.rate", "{rate:g} requests/s", rate=self.requests_per_s)]
        if self.ttft_s is not None:
            parts.append(msg("serving.target.ttft", "TTFT <= {ttft}", ttft=ms(self.ttft_s))
                         if self.ttft_pct is None else
                         msg("serving.target.ttft_pct", "TTFT <= {ttft} at p{pct}",
                             ttft=ms(self.ttft_s), pct=self.ttft_pct))
        if self.tpot_s is not None:
            parts.append(msg("serving.target.tpot", "TPOT <= {tpot}", tpot=ms(self.tpot_s))
                         if self.tpot_pct is None else
                         msg("serving.target.tpot_pct", "TPOT <= {tpot} at p{pct}",
                             tpot=ms(self.tpot_s), pct=self.tpot_pct))
        return msg("serving.targets", "{targets}", targets=Join(parts))


def ms(seconds: float) -> Message:
    """A latency: '141 ms' (under 10 s), '12.5 s'."""
    if seconds < 10:
        return msg("serving.ms", "{ms:,.0f} ms", ms=seconds * 1e3)
    return msg("serving.s", "{s:,.1f} s", s=seconds)
