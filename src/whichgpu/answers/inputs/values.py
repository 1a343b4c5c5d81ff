"""Request values read as they validate (issue 35, parse once).

A request field typed with one of these holds what the engine takes, read by the same reader
and failing with the same sentence on every surface: a :class:`TokenCount` is an ``int``
(``8k`` is 8,192 tokens), a :class:`WorkCount` too (``10M`` tokens, ``2k`` steps), a
:class:`HostRam` an ``int`` of bytes (``96GB``), a :class:`RequestRate` a ``float``
(``1200/min`` is 20 requests/s), a :class:`LatencyTarget` seconds and a percentile
(``2s@p95``), :class:`RequestLengths` a length rule or a histogram (``200:100:3,2000:300:1``).
Each remembers how it was written (``text``): a request said back (``model_dump``, the
command line and the API link a page shows) is in the person's own words. A JSON number is
read as its text (8192 as ``8192``); text longer than :data:`LONGEST` characters is refused
with the web's sentence for a long value. The REST schema says what a field takes, as
before: a number or a text for counts and rates, a text for sizes, targets and lengths. A
type checker sees the number (``Annotated[int | None, TokenCount]`` is ``int | None``): a
program passes 8192 where the command line and a JSON body may write 8k.

The readers live in this package (``units.parse_count``, :mod:`.serving`, :mod:`.traffic`)
and load when a value is read, not when the request models are imported (``--help`` stays
fast).
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from whichgpu.messages import Field

if TYPE_CHECKING:
    from whichgpu.estimate.speed.traffic import LengthRule, Lengths

LONGEST = 40  # characters: 8k, 1200/min, 60ms@p99 (the web's bound on a typed value)
_NUMBER_OR_TEXT: JsonSchemaValue = {"anyOf": [{"type": "number"}, {"type": "string"}]}
_TEXT: JsonSchemaValue = {"type": "string"}


def _as_text(value: Any) -> str:
    """The text a value is read from: a JSON number as the command line would write it
    (8192.0 as '8192'); anything but a text or a number is pydantic's string error."""
    if isinstance(value, str):
        if len(value) > LONGEST:
            raise PydanticCustomError("string_too_long", "String should have at most "
                                      "{max_length} characters", {"max_length": LONGEST})
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return str(value)
    raise PydanticCustomError("string_type", "Input should be a valid string")


def said(value: Any) -> Any:
    """A request value as it was written (``8k`` for a TokenCount of 8,192); any other value
    as it is."""
    return value.text if isinstance(value, _Read) else value


class _Read:
    """A request value read by ``read(text, field name)``; None or blank text is None."""

    text: str
    #: the REST schema of the field (what a client may send)
    SCHEMA: ClassVar[JsonSchemaValue] = _TEXT

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        raise NotImplementedError

    @classmethod
    def of(cls, value: Any, name: str) -> Self | None:
        """``value`` (a text, a number, or already read) read for the field ``name``."""
        if value is None or isinstance(value, cls):
            return value
        text = _as_text(value)
        return cls.read(text, name) if text.strip() else None

    @classmethod
    def _validate(cls, value: Any, info: core_schema.ValidationInfo) -> Self | None:
        return cls.of(value, info.field_name or "")

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler
                                     ) -> core_schema.CoreSchema:
        read = core_schema.with_info_plain_validator_function(
            cls._validate, serialization=core_schema.plain_serializer_function_ser_schema(
                said, when_used="always"))
        if type(None) in typing.get_args(source):  # Annotated[int | None, TokenCount]
            return core_schema.nullable_schema(read)
        return read

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        inner: Any = schema
        while inner.get("type") in ("function-after", "function-before", "function-wrap"):
            # a request's own validator around the field (Request._work)
            inner = inner["schema"]
        if inner.get("type") != "nullable":
            return dict(cls.SCHEMA)
        branches = cls.SCHEMA.get("anyOf", [cls.SCHEMA])
        return {"anyOf": [*branches, {"type": "null"}]}


def read_as_text(field: FieldInfo) -> bool:
    """Whether a request field is typed (a number) but written as text (``8k``): a page
    draws a text box for it, not a number box."""
    return any(isinstance(m, type) and issubclass(m, _Read) for m in field.metadata)


class _Count(_Read, int):
    """A whole number read from text, keeping the text (pickled with it: the web's work
    lanes hand requests to other processes)."""

    def __new__(cls, value: int, text: str | None = None) -> Self:
        self = int.__new__(cls, value)
        self.text = cls._written(value) if text is None else text
        return self

    @classmethod
    def _written(cls, value: int) -> str:
        """The text of a value a program gave as a number."""
        return str(value)

    def __getnewargs__(self) -> tuple[int, str]:  # type: ignore[override]
        return int(self), self.text


class TokenCount(_Count):
    """A token count as model cards write it (``8k`` is 8,192; ``131072``)."""

    SCHEMA = _NUMBER_OR_TEXT

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.workload import token_words
        from whichgpu.units import parse_count

        return cls(parse_count(text, binary=True, what=token_words(name)), text)


class WorkCount(_Count):
    """An amount of work (``10M`` tokens, ``1000`` images, ``2k`` steps; k = 1,000), at most
    :data:`whichgpu.answers.request.MAX_WORK`."""

    SCHEMA = _NUMBER_OR_TEXT

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.work_words import work_words
        from whichgpu.answers.request import MAX_WORK, field_named
        from whichgpu.errors import InputError
        from whichgpu.messages import msg
        from whichgpu.units import parse_count

        n = parse_count(text, what=work_words(name))
        if n > MAX_WORK:
            raise InputError(msg("bound.work", "{field} must be at most 10^15, got {v!r}",
                                 field=field_named(None, name), v=text))
        return cls(n, text)


class HostRam(_Count):
    """The host's RAM in bytes, written with its unit (``96GB``, ``64GiB``; a bare number
    is refused, as every size is: ``96`` could mean GB or bytes). A program passes
    ``HostRam(96 * 10**9)``."""

    @classmethod
    def _written(cls, value: int) -> str:
        return f"{value}B"  # bytes, in words the command line reads back

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.host import parse_ram

        return cls(parse_ram(text), text)


class RequestRate(_Read, float):
    """Requests per second (``20``, ``20/s``, ``1200/min``, ``72000/h``)."""

    SCHEMA = _NUMBER_OR_TEXT

    def __new__(cls, value: float, text: str | None = None) -> Self:
        self = float.__new__(cls, value)
        self.text = f"{value:g}" if text is None else text
        return self

    def __getnewargs__(self) -> tuple[float, str]:  # type: ignore[override]
        return float(self), self.text

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.serving import parse_rate

        rate = parse_rate(text)
        assert rate is not None  # the text is not blank
        return cls(rate, text)


@dataclass(frozen=True)
class LatencyTarget(_Read):
    """A latency target: ``seconds`` at a ``percentile`` (50, 90, 95, 99), or the mean (None);
    written ``2s``, ``500ms``, ``2s@p95``, ``60ms@mean``."""

    seconds: float
    percentile: int | None = None
    text: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.text:
            at = f"@p{self.percentile}" if self.percentile is not None else ""
            object.__setattr__(self, "text", f"{self.seconds:g}s{at}")

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.serving import parse_latency_target

        seconds, pct = parse_latency_target(text, Field(name))
        assert seconds is not None  # the text is not blank
        return cls(seconds, pct, text)


@dataclass(frozen=True)
class RequestLengths(_Read):
    """The request lengths a simulation draws: a rule over the job's mean prompt and output
    (fixed, spread, sharegpt) or a histogram of (prompt, output) pairs."""

    asked: Lengths | LengthRule
    text: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.text:
            return
        if isinstance(self.asked, str):  # a LengthRule
            object.__setattr__(self, "text", str(self.asked))
        elif self.asked.pairs:  # a histogram, as the command line writes one
            object.__setattr__(self, "text", ",".join(
                f"{p}:{o}:{w:g}" for (p, o), w in zip(self.asked.pairs, self.asked.weights,
                                                      strict=True)))
        else:
            raise TypeError("request lengths are a LengthRule or a histogram "
                            "(estimate.speed.traffic.histogram)")

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.traffic import parse_lengths

        asked = parse_lengths(text)
        assert asked is not None  # the text is not blank
        return cls(asked, text)
