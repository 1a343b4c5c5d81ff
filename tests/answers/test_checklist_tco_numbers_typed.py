"""Parse once (issue 35): the checklist's hours a month and horizon, and tco's utilisation,
are numbers read as the request validates (answers/inputs/values.py MonthlyHours,
HorizonMonths, Utilisation), said back as written, refused with the sentences their readers
gave before (checklist.numbers; fraction.unreadable / fraction.above_1); the answers then take
the numbers and read no text (the command line's prompted checklist answers, text set on a
validated request, and a Python caller's tco text are still read by the same readers)."""

from __future__ import annotations

import pickle

import pytest

import whichgpu.answers as answers
from whichgpu.answers.inputs import ownership
from whichgpu.answers.inputs.checklist import parse_answers
from whichgpu.answers.inputs.values import HorizonMonths, MonthlyHours, Utilisation
from whichgpu.answers.requests import Checklist, Tco
from whichgpu.errors import InputError

ASKED = {"workload": "inference", "model": "7B", "budget_per_hour": "none"}


@pytest.mark.parametrize(("hours", "months", "read"), [
    ("120", "24", (120.0, 24.0)), ("120h", "24m", (120.0, 24.0)),
    (" 90 H", "24 months", (90.0, 24.0)), (120, 24.5, (120.0, 24.5))])
def test_hours_and_months_are_read_as_they_validate(hours: object, months: object,
                                                    read: tuple[float, float]) -> None:
    q = Checklist(**ASKED, hours_per_month=hours, horizon_months=months)
    assert isinstance(q.hours_per_month, MonthlyHours)
    assert isinstance(q.horizon_months, HorizonMonths)
    assert (q.hours_per_month, q.horizon_months) == read
    said = q.model_dump(exclude_defaults=True)
    assert (said["hours_per_month"], said["horizon_months"]) == (str(hours), str(months))
    assert pickle.loads(pickle.dumps(q)).hours_per_month == read[0]
    # the same answers as the text the command line's prompt hands parse_answers
    typed = parse_answers("inference", "7B", None, q.hours_per_month, q.horizon_months)
    assert typed == parse_answers("inference", "7B", None, str(hours), str(months))


@pytest.mark.parametrize(("field", "bad"), [
    ("hours_per_month", "abc"), ("hours_per_month", "1,5"), ("hours_per_month", "24m"),
    ("horizon_months", "120h"), ("horizon_months", "2y")])
def test_unreadable_numbers_are_the_checklists_sentence(field: str, bad: str) -> None:
    asked = {"hours_per_month": "120", "horizon_months": "24", field: bad}
    with pytest.raises(InputError) as expected:  # the prompted answers' reader
        parse_answers("inference", "7B", None, asked["hours_per_month"],
                      asked["horizon_months"])
    with pytest.raises(InputError) as got:
        Checklist.parse({**ASKED, **asked})
    assert str(got.value) == str(expected.value) == (
        "hours per month and horizon must be numbers (e.g. 120 and 24)")


def test_a_blank_number_is_unanswered() -> None:
    from whichgpu.answers.advice import missing_answers

    q = Checklist(**ASKED, hours_per_month=" ", horizon_months="24")
    assert missing_answers(q) == ["hours_per_month"]


def test_the_checklist_answer_reads_no_text(monkeypatch: pytest.MonkeyPatch) -> None:
    q = Checklist(**ASKED, hours_per_month="120h", horizon_months="24 months")
    before = answers.checklist(q).to_json()["answers"]

    def no_text(text: str) -> float:
        raise AssertionError(f"the answer read the text {text!r}")

    monkeypatch.setattr(MonthlyHours, "number", staticmethod(no_text))
    monkeypatch.setattr(HorizonMonths, "number", staticmethod(no_text))
    after = answers.checklist(q).to_json()["answers"]
    assert after == before
    assert (after["hours_per_month"], after["horizon_months"]) == (120.0, 24.0)


@pytest.mark.parametrize(("text", "share"), [
    ("0.6", 0.6), ("60%", 0.6), ("60,5%", 0.605), (" 0.5 ", 0.5), (1, 1.0)])
def test_utilisation_is_read_as_it_validates(text: object, share: float) -> None:
    q = Tco(gpu="h100-sxm", utilization=text)
    assert isinstance(q.utilization, Utilisation)
    assert q.utilization == pytest.approx(share)
    assert q.model_dump(exclude_defaults=True)["utilization"] == str(text)
    assert q.utilization == ownership.parse_fraction(str(text), ownership.UTILISATION)


@pytest.mark.parametrize(("bad", "said"), [
    ("abc", "cannot read 'abc' as utilisation; write 0.6 or 60%"),
    ("x%", "cannot read 'x%' as utilisation; write 0.6 or 60%"),
    ("1.5", "utilisation '1.5' is more than 1 (100 %); write a fraction such as 0.6 or a "
            "percentage such as 60%")])
def test_bad_utilisation_is_the_readers_sentence(bad: str, said: str) -> None:
    with pytest.raises(InputError) as expected:  # a Python caller's reader
        ownership.parse_fraction(bad, ownership.UTILISATION)
    with pytest.raises(InputError) as got:
        Tco.parse({"gpu": "h100-sxm", "utilization": bad})
    assert str(got.value) == str(expected.value) == said


def test_the_tco_answer_reads_no_utilisation_text(monkeypatch: pytest.MonkeyPatch) -> None:
    q = Tco(gpu="h100-sxm", purchase_price="25000USD", rent_price="3.15USD",
            utilization="45%")
    before = answers.tco(q).to_json()

    def no_text(text: object, what: object) -> float:
        raise AssertionError(f"the answer read the text {text!r}")

    monkeypatch.setattr(ownership, "parse_fraction", no_text)
    after = answers.tco(q).to_json()
    assert after == before
    assert after["inputs"]["utilization"] == pytest.approx(0.45)


@pytest.mark.parametrize(("hours", "months", "said"), [
    ("0", "12", "hours per month must be more than 0 and at most 730"),
    ("1e-320", "12", "hours per month must be more than 0 and at most 730"),
    (1e-320, "12", "hours per month must be more than 0 and at most 730"),
    ("731", "12", "hours per month must be more than 0 and at most 730"),
    ("100", "121", "the horizon must be more than 0 and at most 120 months"),
    ("100", "1e-320", "the horizon must be more than 0 and at most 120 months")])
def test_out_of_range_numbers_are_the_checklists_bound(hours: object, months: object,
                                                       said: str) -> None:
    """The checklist's own bound (advise/checklist.py), said as the request validates; a
    denormal is refused in those words, not the generic 'too small to compute with'."""
    with pytest.raises(InputError) as got:
        Checklist.parse({**ASKED, "hours_per_month": hours, "horizon_months": months})
    assert str(got.value) == said
    with pytest.raises(InputError) as prompted:  # the same words for the prompted answers
        parse_answers("inference", "7B", None, str(hours), str(months))
    assert str(prompted.value) == said
