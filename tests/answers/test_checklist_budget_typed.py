"""Parse once (issue 35): the checklist's hourly budget is an HourlyBudget read as the request
validates: an amount (its currency, or the request's for a bare number) or no limit ('none',
'no', '-', '0'), said back as written; unreadable money is refused with the money reader's
sentence before the checklist runs. The command line's prompted answers (text, set on an
already validated request) are still read by parse_answers."""

from __future__ import annotations

import pytest

from whichgpu.answers.inputs.checklist import parse_answers
from whichgpu.answers.inputs.values import HourlyBudget
from whichgpu.answers.requests import Checklist
from whichgpu.errors import InputError
from whichgpu.units import Money, parse_money


@pytest.mark.parametrize(("text", "amount", "currency"), [
    ("2EUR", 2.0, "EUR"), ("1.5", 1.5, None), ("none", None, None), ("No", None, None),
    ("-", None, None), ("0", None, None), ("0USD", 0.0, "USD"),
])
def test_the_budget_is_read_as_it_validates(text: str, amount: float | None,
                                            currency: str | None) -> None:
    q = Checklist(budget_per_hour=text)
    b = q.budget_per_hour
    assert isinstance(b, HourlyBudget) and (b.amount, b.currency) == (amount, currency)
    assert q.model_dump(exclude_defaults=True)["budget_per_hour"] == text
    # the same budget as the text the command line's prompt gives parse_answers
    typed = parse_answers("inference", "7B", b, "120", "24", currency="GBP")
    prompted = parse_answers("inference", "7B", text, "120", "24", currency="GBP")
    assert typed == prompted
    assert typed.budget_per_hour == (None if amount is None
                                     else Money(amount, currency or "GBP"))


def test_unreadable_money_is_the_readers_sentence() -> None:
    with pytest.raises(InputError) as expected:
        parse_money("abc", default_currency="USD")
    with pytest.raises(InputError) as got:
        Checklist.parse({"workload": "inference", "budget_per_hour": "abc"})
    assert str(got.value) == str(expected.value)
    with pytest.raises(InputError, match=r"at most 10\^12"):
        Checklist.parse({"budget_per_hour": "1e13USD"})


def test_a_blank_budget_is_unanswered() -> None:
    from whichgpu.answers.advice import missing_answers

    assert "budget_per_hour" in missing_answers(Checklist(budget_per_hour=" "))
    assert "budget_per_hour" not in missing_answers(Checklist(budget_per_hour="none"))
