"""Parse once (issue 35, item 1): request fields are read as they validate. A request holds
the typed value (a token count, a request rate, a latency target, request lengths), read by
the same reader with the same sentence on every surface, and says back the words it was
written in (the command line and the API link a page shows)."""

from __future__ import annotations

import pickle

import pytest

from whichgpu.answers.command_line import command_line
from whichgpu.answers.inputs.host import parse_ram
from whichgpu.answers.inputs.serving import parse_latency_target, parse_rate
from whichgpu.answers.inputs.traffic import parse_lengths
from whichgpu.answers.inputs.values import (
    HostRam,
    LatencyTarget,
    RequestRate,
    TokenCount,
    said,
)
from whichgpu.answers.inputs.work_words import work_words
from whichgpu.answers.inputs.workload import token_words
from whichgpu.answers.request import MAX_WORK, _at_most_count, field_named, for_web
from whichgpu.answers.requests import Memory, Recommend, Speed
from whichgpu.errors import InputError
from whichgpu.estimate.speed.traffic import LengthRule, Lengths, LengthShape, lengths_for
from whichgpu.messages import Field
from whichgpu.units import parse_count


def test_a_request_holds_the_numbers_it_was_written_as():
    q = Recommend(model="llama-3.1-8b", context="8k", prompt_tokens=1000,
                  output_tokens="0.5k", requests_per_s="1200/min", ttft="2s@p95", tpot="60ms",
                  host_ram="96GB")
    assert (q.context, q.prompt_tokens, q.output_tokens) == (8192, 1000, 512)
    work = Recommend(model="llama-3.1-8b", tokens="10M", tokens_per_day="50M", steps="2k")
    assert (work.tokens, work.tokens_per_day, work.steps) == (10**7, 5 * 10**7, 2000)
    assert work.model_dump(exclude_defaults=True)["tokens"] == "10M"
    assert q.host_ram == 96 * 10**9 and isinstance(q.host_ram, int)  # GB = 10^9 bytes
    assert all(isinstance(v, int) for v in (q.context, q.prompt_tokens, q.output_tokens))
    assert isinstance(q.requests_per_s, float) and q.requests_per_s == 20.0
    assert q.ttft == LatencyTarget(2.0, 95)
    assert q.tpot is not None and q.tpot.percentile is None
    assert q.tpot.seconds == pytest.approx(0.06)


def test_the_lengths_are_a_rule_or_a_histogram():
    assert Speed(model="x", lengths="Spread").lengths.asked is LengthRule.SPREAD  # type: ignore[union-attr]
    hist = Speed(model="x", lengths="200:100:3,2000:300:1").lengths
    assert hist is not None and isinstance(hist.asked, Lengths)
    assert hist.asked.pairs == ((200, 100), (2000, 300))
    assert hist.asked.prompt == (200 * 3 + 2000) / 4  # the weighted mean
    # a rule is applied to the job's own mean lengths where the simulation knows them
    assert lengths_for(None, 900, 100) == lengths_for(LengthRule.FIXED, 900, 100)
    assert lengths_for(LengthRule.FIXED, 900, 100).shape is LengthShape.FIXED
    assert lengths_for(hist.asked, 900, 100) is hist.asked


def test_the_request_says_back_its_own_words():
    q = Recommend(model="llama-3.1-8b", context="8k", requests_per_s="1200/min",
                  ttft="2s@p95", prompt_tokens=1000)
    dumped = q.model_dump(exclude_defaults=True)
    assert (dumped["context"], dumped["requests_per_s"], dumped["ttft"],
            dumped["prompt_tokens"]) == ("8k", "1200/min", "2s@p95", "1000")
    line = command_line(q)
    assert "--context 8k" in line and "--ttft 2s@p95" in line
    assert "--requests-per-s 1200/min" in line
    # what it says back reads as the same request
    assert Recommend.model_validate(dumped) == q


def test_python_passes_numbers_and_gets_the_same_request():
    """The Python API's types are the numbers (mypy reads ``context: int | None``): a
    program passes 8192 and 20.0, the command line and REST write 8k and 1200/min."""
    typed = Recommend(model="llama-3.1-8b", context=8192, host_ram=HostRam(96 * 10**9),
                      ttft=LatencyTarget(2.0, 95), requests_per_s=20.0)
    text = Recommend(model="llama-3.1-8b", context="8k", host_ram="96GB", ttft="2s@p95",
                     requests_per_s="1200/min")
    assert typed == text
    assert said(typed.ttft) == "2s@p95" and said(typed.context) == "8192"
    assert Recommend(model="x", context=TokenCount(8192, "8k")).context.text == "8k"  # type: ignore[union-attr]
    fields = Recommend.model_fields
    assert fields["context"].annotation == int | None
    assert said(typed.host_ram) == "96000000000B"  # says back a size the CLI reads
    assert fields["requests_per_s"].annotation == float | None
    assert isinstance(text.requests_per_s, RequestRate)


@pytest.mark.parametrize("field,text,reader", [
    ("context", "8q", lambda t: parse_count(t, binary=True, what=token_words("context"))),
    ("prompt_tokens", "lots", lambda t: parse_count(t, binary=True,
                                                    what=token_words("prompt_tokens"))),
    ("requests_per_s", "fast", parse_rate),
    ("requests_per_s", "0", parse_rate),
    ("ttft", "2s@p97", lambda t: parse_latency_target(t, Field("ttft"))),
    ("tpot", "50", lambda t: parse_latency_target(t, Field("tpot"))),
    ("tokens", "lots", lambda t: parse_count(t, what=work_words("tokens"))),
    ("images", "1000x", lambda t: parse_count(t, what=work_words("images"))),
    ("tokens", "2e15", lambda t: _at_most_count(t, field_named(Recommend, "tokens"), MAX_WORK)),
    ("host_ram", "96", parse_ram),  # a size needs its unit
    ("host_ram", "100TB", parse_ram),  # beyond the bound
])
@pytest.mark.parametrize("web", [False, True])
def test_bad_text_gets_the_readers_own_sentence(field, text, reader, web):
    with pytest.raises(InputError) as expected:
        reader(text)
    model = for_web(Recommend) if web else Recommend
    with pytest.raises(InputError) as got:
        model.parse({"model": "llama-3.1-8b", field: text})
    assert str(got.value) == str(expected.value)
    assert got.value.args[0].id == expected.value.args[0].id  # the web translates it by id


def test_the_lengths_sentence_is_the_readers():
    with pytest.raises(InputError) as expected:
        parse_lengths("200:x")
    with pytest.raises(InputError) as got:
        Speed.parse({"model": "x", "lengths": "200:x"})
    assert str(got.value) == str(expected.value)


def test_a_json_number_is_read_as_its_text():
    body = for_web(Recommend, body=True)
    q = body.parse({"model": "llama-3.1-8b", "context": 8192.0, "requests_per_s": 20})
    assert (q.context, q.requests_per_s) == (8192, 20.0)
    assert q.model_dump(exclude_defaults=True)["context"] == "8192"


def test_blank_text_is_no_value():
    q = Recommend.parse({"model": "x", "context": "", "ttft": " ", "requests_per_s": ""})
    assert (q.context, q.ttft, q.requests_per_s) == (None, None, None)


def test_a_request_crosses_processes_with_its_words():
    """The web's work lanes hand requests to other processes (pickle)."""
    q = Memory(model="llama-3.1-8b", context="8k")
    back = pickle.loads(pickle.dumps(q))
    assert back == q and back.context is not None and back.context.text == "8k"


def test_the_workload_gets_plain_numbers():
    from whichgpu.answers.inputs.from_request import workload

    w = workload(Memory(model="llama-3.1-8b", context="8k", prompt_tokens="1k",
                        host_ram="96GB"))
    assert type(w.context) is int and w.context == 8192
    assert type(w.prompt_tokens) is int and w.prompt_tokens == 1024
    assert w.host is not None and w.host.ram_bytes == 96e9


def test_the_job_gets_the_typed_targets():
    from whichgpu.answers.inputs.job import build_job
    from whichgpu.answers.inputs.workload import build_workload
    from whichgpu.models import resolve_model

    w = build_workload(resolve_model("llama-3.1-8b"), engine="vllm", prompt_tokens=1000,
                       output_tokens=200)
    q = Recommend(model="llama-3.1-8b", requests_per_s="20", ttft="2s@p95", tpot="60ms@p99")
    typed = build_job(w, requests_per_s=q.requests_per_s, ttft=q.ttft, tpot=q.tpot)
    text = build_job(w, requests_per_s="20", ttft="2s@p95", tpot="60ms@p99")  # the Python API
    for job in (typed, text):
        assert (job.requests_per_s, job.ttft_s, job.ttft_pct, job.tpot_pct) == (20.0, 2.0, 95, 99)
        assert job.tpot_s == pytest.approx(0.06)


def test_lengths_from_python_say_back_what_the_command_line_reads():
    from whichgpu.answers.inputs.values import RequestLengths
    from whichgpu.estimate.speed.traffic import histogram

    rule = Speed(model="x", lengths=RequestLengths(LengthRule.SPREAD))
    hist = Speed(model="x", lengths=RequestLengths(histogram(((200, 100), (2000, 300)),
                                                             (3.0, 1.0))))
    for q in (rule, hist):
        assert Speed.model_validate(q.model_dump()).lengths == q.lengths
    assert "--lengths 200:100:3,2000:300:1" in command_line(hist)
