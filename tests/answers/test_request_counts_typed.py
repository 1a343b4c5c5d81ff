"""Parse once (issue 35): the counts the answers read — ``speed``'s training tokens, RL's
completion tokens, fine-tuning examples and their length, the cached prompt tokens of the
per-token API comparison — and the engine build are typed values read as the request
validates, said back as written, refused with the reader's own sentence (units.parse_count's,
in the words the answers always used) before any answer is computed."""

from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

from whichgpu.answers.inputs.values import (
    MAX_CACHED_TOKENS,
    CachedTokens,
    CompletionTokens,
    ExampleCount,
    ExampleTokens,
    TrainingTokens,
    read_as_text,
)
from whichgpu.answers.inputs.workload import TRAIN_TOKENS_WORDS
from whichgpu.answers.request import Request
from whichgpu.answers.requests import Recommend, Speed
from whichgpu.errors import InputError
from whichgpu.units import EngineVersion, parse_count

# (request, field, its reader, text, the number it reads, units.parse_count's arguments)
COUNTS = [
    (Speed, "train_tokens", TrainingTokens, "1.5B", 1_500_000_000, {"what": TRAIN_TOKENS_WORDS}),
    (Recommend, "completion_tokens", CompletionTokens, "1k", 1024,
     {"binary": True, "what": "completion tokens"}),
    (Speed, "completion_tokens", CompletionTokens, "512", 512,
     {"binary": True, "what": "completion tokens"}),
    (Recommend, "examples", ExampleCount, "20k", 20_000, {"what": "examples"}),
    (Recommend, "example_tokens", ExampleTokens, "1k", 1024,
     {"binary": True, "what": "example tokens"}),
    (Recommend, "cached_tokens", CachedTokens, "2k", 2000, {"what": "count"}),
]
IDS = [f"{c[0].__name__}.{c[1]}" for c in COUNTS]


@pytest.mark.parametrize(("cls", "name", "reader", "text", "n", "how"), COUNTS, ids=IDS)
def test_a_count_is_a_number_said_back_as_written(cls: type[Request], name: str, reader: type,
                                                  text: str, n: int, how: dict) -> None:
    assert read_as_text(cls.model_fields[name])  # a text box on the page, not a number box
    q = cls(model="llama-3.1-8b", **{name: text})
    value = getattr(q, name)
    assert isinstance(value, reader) and isinstance(value, int) and value == n
    assert q.model_dump(exclude_defaults=True)[name] == text
    assert getattr(pickle.loads(pickle.dumps(q)), name).text == text  # the web's work lanes
    assert getattr(cls(model="llama-3.1-8b", **{name: n}), name) == n  # a JSON number


@pytest.mark.parametrize(("cls", "name", "reader", "text", "n", "how"), COUNTS, ids=IDS)
def test_bad_text_is_refused_with_the_readers_sentence(cls: type[Request], name: str,
                                                       reader: type, text: str, n: int,
                                                       how: dict) -> None:
    for bad in ("abc", "12q"):
        with pytest.raises(InputError) as expected:
            parse_count(bad, **how)
        with pytest.raises(InputError) as got:
            cls.parse({"model": "llama-3.1-8b", name: bad})
        assert str(got.value) == str(expected.value)


def test_the_bounds_are_the_requests() -> None:
    with pytest.raises(InputError, match="from 0 to 10,000,000, got '20M'"):
        Recommend.parse({"model": "llama-3.1-8b", "cached_tokens": "20M"})
    with pytest.raises(InputError, match="from 0 to"):
        Recommend.parse({"model": "llama-3.1-8b", "cached_tokens": "-5"})
    assert Recommend(model="x", cached_tokens=MAX_CACHED_TOKENS).cached_tokens == 10**7
    with pytest.raises(InputError, match=r"train tokens must be at most 10\^15, got '1e30'"):
        Speed.parse({"model": "llama-3.1-8b", "train_tokens": "1e30"})
    with pytest.raises(ValidationError):  # the web's bound on a typed value: 40 characters
        Speed(model="x", train_tokens="1" * 41)


def test_the_answers_take_the_typed_counts() -> None:
    """Ten thousand examples of 512 tokens over two epochs are 10,240,000 training tokens:
    the examples and their length reach the answer as numbers, not text."""
    from whichgpu.answers.advice import examples_as_tokens

    q = Recommend(model="llama-3.1-8b", task="lora", examples="10k", epochs=2,
                  example_tokens="0.5k")
    said = examples_as_tokens(q, 4096)
    assert said is not None and said[0] == 10_000 * 2 * 512
    default = examples_as_tokens(Recommend(model="llama-3.1-8b", task="lora",
                                           examples="10k"), 4096)
    assert default is not None and default[0] == 10_000 * 4096  # padded to the sequence


def test_an_engine_build_is_typed_and_said_back() -> None:
    q = Speed(model="llama-3.1-8b", engine="llamacpp", engine_version="b4458")
    assert isinstance(q.engine_version, EngineVersion) and q.engine_version.build == 4458
    assert q.model_dump(exclude_defaults=True)["engine_version"] == "b4458"
    assert Speed(model="x", engine_version="  ").engine_version is None  # blank: today's
