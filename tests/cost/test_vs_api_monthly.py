"""A daily volume against the APIs (audit 7, defect 1): the replicas kept up a month, the
month's requests at each API, the utilisation they imply and the verdict between the two."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from whichgpu.cost.api_prices import check_row
from whichgpu.cost.vs_api import DAYS_PER_MONTH, HOURS_PER_MONTH, Verdict, compare
from whichgpu.units import Money

ROW = dict(provider="p", model="m", provider_model="x", input_per_mtok="1",
           cached_input_per_mtok="", output_per_mtok="2", currency="USD", date="2026-08-01",
           url="https://example.com/pricing", source="s")


class _Steps:
    def prefill_batch(self, prompts, tokens_each=None):
        return 1.0

    def decode(self, batch):
        return 0.006


# one replica: at most 1 request/s of 1,000 prompt + 500 output tokens, $3.60 an hour; the
# API bills (1,000 x $1 + 500 x $2) / 1M = $0.002 a request: equal at 50 % utilisation
SM = SimpleNamespace(limit=2, prompt=1000, output=500, steps=_Steps(), max_requests_per_s=1.0,
                     gpu=SimpleNamespace(id="g"), gpus=1)


def _daily(tokens_per_day: float, replicas: int = 1):
    return compare(SM, Money(3.6, "USD"), 1.0, 0, [check_row(ROW, "row")],
                   lambda m, cur: m, tokens_per_day, replicas)


def test_the_month_is_every_hour_of_the_replicas_and_every_request_at_the_api():
    v = _daily(500 * 8640, replicas=2)  # 8,640 requests a day: 5 % of two replicas' day
    mo = v.monthly
    assert mo is not None and mo.requests_per_day == pytest.approx(8640)
    assert v.utilisation == pytest.approx(8640 / (86400 * 2))
    assert mo.self_per_month.amount == pytest.approx(3.6 * 2 * HOURS_PER_MONTH)
    assert HOURS_PER_MONTH == pytest.approx(24 * DAYS_PER_MONTH) and HOURS_PER_MONTH >= 720
    assert v.rows[0].per_month is not None
    assert v.rows[0].per_month.amount == pytest.approx(0.002 * 8640 * DAYS_PER_MONTH)
    # the per-token figures are the kept-up cost over the requests actually served
    assert v.self_per_request.amount == pytest.approx(3.6 * 2 * 24 / 8640)
    assert mo.busy_per_request.amount == pytest.approx(3.6 / 3600)  # the secondary figure


@pytest.mark.parametrize("share, verdict", [(0.3, Verdict.API), (0.7, Verdict.SELF_HOST)])
def test_the_verdict_turns_at_the_break_even_utilisation(share, verdict):
    v = _daily(share * 86400 * 500)
    assert v.rows[0].break_even_utilisation == pytest.approx(0.5)
    assert v.monthly is not None and v.monthly.verdict == verdict
    assert f"{share:.2%}" in str(v.monthly.said)


def test_without_a_daily_volume_nothing_monthly_is_said():
    v = compare(SM, Money(3.6, "USD"), 0.5, 0, [check_row(ROW, "row")], lambda m, cur: m)
    assert v.monthly is None and v.rows[0].per_month is None and "monthly" not in v.to_json()
