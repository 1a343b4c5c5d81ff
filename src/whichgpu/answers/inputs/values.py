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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from whichgpu.messages import Field
from whichgpu.units import EngineVersion

if TYPE_CHECKING:
    from whichgpu.estimate.host import MemorySpec
    from whichgpu.estimate.speculative import SpecMethod
    from whichgpu.estimate.speed.traffic import LengthRule, Lengths
    from whichgpu.units import Money

LONGEST = 40  # characters: 8k, 1200/min, 60ms@p99 (the web's bound on a typed value)
_NUMBER_OR_TEXT: JsonSchemaValue = {"anyOf": [{"type": "number"}, {"type": "string"}]}
_TEXT: JsonSchemaValue = {"type": "string"}
_SHORT_TEXT: JsonSchemaValue = {"maxLength": LONGEST, "type": "string"}


def _as_text(value: Any, longest: int = LONGEST) -> str:
    """The text a value is read from: a JSON number as the command line would write it
    (8192.0 as '8192'); anything but a text or a number is pydantic's string error."""
    if isinstance(value, str):
        if len(value) > longest:
            raise PydanticCustomError("string_too_long", "String should have at most "
                                      "{max_length} characters", {"max_length": longest})
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return str(value)
    raise PydanticCustomError("string_type", "Input should be a valid string")


def said(value: Any) -> Any:
    """A request value as it was written (``8k`` for a TokenCount of 8,192; a list item by
    item: ``-ot exps=CPU``); any other value as it is."""
    if isinstance(value, list):
        return [said(v) for v in value]
    return value.text if isinstance(value, _Read) else value


class _Read:
    """A request value read by ``read(text, field name)``; None or blank text is None."""

    text: str
    #: the REST schema of the field (what a client may send)
    SCHEMA: ClassVar[JsonSchemaValue] = _TEXT
    #: the longest text read (a draft model's Hub id may be longer than a count)
    LONGEST: ClassVar[int] = LONGEST

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        raise NotImplementedError

    @classmethod
    def of(cls, value: Any, name: str) -> Self | None:
        """``value`` (a text, a number, or already read) read for the field ``name``."""
        if value is None or isinstance(value, cls):
            return value
        text = _as_text(value, cls.LONGEST)
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
    def words(cls, name: str) -> str:
        """What the field is called in the reader's sentences ('token count')."""
        from whichgpu.answers.inputs.work_words import work_words

        return work_words(name)

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.request import MAX_WORK, field_named
        from whichgpu.errors import InputError
        from whichgpu.messages import msg
        from whichgpu.units import parse_count

        n = parse_count(text, what=cls.words(name))
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


# ------------------------------------------------------------------ issue 35: the rest of
# the request's quantities, read as they validate (the engine takes the values, never text)

class _Number(_Read, float):
    """A float read from text, keeping the text (pickled with it)."""

    def __new__(cls, value: float, text: str | None = None) -> Self:
        self = float.__new__(cls, value)
        self.text = cls._written(value) if text is None else text
        return self

    @classmethod
    def _written(cls, value: float) -> str:
        return f"{value:g}"

    def __getnewargs__(self) -> tuple[float, str]:  # type: ignore[override]
        return float(self), self.text


class ParamCount(_Number):
    """A generic model's parameter count (``70B``, ``70e9``)."""

    SCHEMA = _NUMBER_OR_TEXT

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.workload import PARAMS_WORDS
        from whichgpu.units import parse_count

        return cls(float(parse_count(text, what=PARAMS_WORDS)), text)


class Deadline(_Number):
    """A deadline in seconds (``2h``, ``3d``, ``1h30m``), at most 100 years."""

    @classmethod
    def _written(cls, value: float) -> str:
        return f"{value:g}s"

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.request import MAX_DURATION_S, field_named
        from whichgpu.errors import InputError
        from whichgpu.messages import msg
        from whichgpu.units import parse_duration

        try:  # the bound first, as the request said it before it read the text
            longest = max(parse_duration(part) for part in text.split(".."))
        except (InputError, ValueError, OverflowError):
            longest = 0.0
        if longest > MAX_DURATION_S:
            raise InputError(msg("bound.duration", "{field} must be at most 100 years, got "
                                 "{v!r}", field=field_named(None, name), v=text))
        return cls(parse_duration(text), text)


class CheckpointEvery(_Number):
    """Training on spot: the checkpoint interval in seconds (``30m``, ``2h``); 0 for none
    (``none``, ``no``, ``never``, ``off``, ``0``, ``0s``)."""

    SCHEMA = _SHORT_TEXT
    NONE = ("none", "no", "never", "0", "off")

    @classmethod
    def _written(cls, value: float) -> str:
        return f"{value:g}s" if value else "none"

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.errors import InputError
        from whichgpu.messages import msg
        from whichgpu.units import parse_duration

        t = text.strip().lower()
        if t in cls.NONE:
            return cls(0.0, text)
        seconds = parse_duration(t)
        if seconds < 0:
            raise InputError(msg("job.checkpoint_every", "{flag} must be a positive duration "
                                 "(e.g. 30m) or none", flag=Field("checkpoint_every")))
        return cls(seconds, text)


@dataclass(frozen=True)
class _WrittenMoney(_Read):
    """An amount and the currency written with it, if any; said back as written."""

    amount: float
    currency: str | None = None
    text: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.text:
            object.__setattr__(self, "text", f"{self.amount:g}{self.currency or ''}")


@dataclass(frozen=True)
class MoneyAmount(_WrittenMoney):
    """An amount of money as written: ``2EUR`` (its currency), or ``2`` (``currency`` None:
    the request's currency applies, and without one it is an error, said where the job is
    read). At most :data:`whichgpu.answers.request.MAX_MONEY` in any currency."""

    def money(self, default_currency: str | None) -> Money:
        """The amount in its own currency, else ``default_currency``; with neither, the
        reader's sentence (``amount '5' needs a currency``)."""
        from whichgpu.units import Money, parse_money

        if self.currency is not None:
            return Money(self.amount, self.currency)
        if default_currency is None:
            parse_money(self.text)  # raises money.currency with the words as written
        return Money(self.amount, default_currency or "USD")

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.request import MAX_MONEY, field_named
        from whichgpu.errors import InputError
        from whichgpu.messages import msg
        from whichgpu.units import parse_money

        money = parse_money(text, default_currency="USD")  # unreadable: the reader's sentence
        if abs(money.amount) > MAX_MONEY:
            raise InputError(msg("bound.money", "{field} must be at most 10^12 "
                                 "(1,000,000,000,000) in any currency, got {v!r}",
                                 field=field_named(None, name), v=text))
        try:
            written: str | None = parse_money(text).currency
        except InputError:  # no currency in the text
            written = None
        return cls(money.amount, written, text)


@dataclass(frozen=True)
class ImageSize(_Read):
    """An image's width and height in pixels (``1024x1024``, ``768*1344``); iterates as
    (width, height). (Not a tuple: the REST API would read a tuple as a repeated query key.)"""

    width: int
    height: int
    text: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.text:
            object.__setattr__(self, "text", f"{self.width}x{self.height}")

    def __iter__(self) -> Iterator[int]:
        return iter((self.width, self.height))

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.workload import parse_resolution

        size = parse_resolution(text)
        assert size is not None  # the text is not blank
        return cls(size[0], size[1], text)


@dataclass(frozen=True)
class ModuleNames(_Read):
    """Module names, comma-separated (LoRA targets: ``q_proj,v_proj``, ``all-linear``);
    iterates over the names. (Not a tuple: the REST API would read a tuple as a repeated query
    key.)"""

    names: tuple[str, ...]
    text: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.text:
            object.__setattr__(self, "text", ",".join(self.names))

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.workload import parse_lora_targets

        return cls(parse_lora_targets(text) or (), text)


class TensorOverrides(_Read, tuple[tuple[str, str], ...]):
    """llama.cpp's ``-ot``: ``PATTERN=DEVICE``, several separated by commas, each split at
    the first '=' (common/arg.cpp reads them so): (pattern, device) pairs."""

    LONGEST = 200

    def __new__(cls, value: tuple[tuple[str, str], ...], text: str | None = None) -> Self:
        self = tuple.__new__(cls, tuple(value))
        self.text = ",".join(f"{p}={d}" for p, d in self) if text is None else text
        return self

    def __getnewargs__(self) -> tuple[tuple[tuple[str, str], ...], str]:
        return tuple(self), self.text

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.workload import parse_overrides

        return cls(parse_overrides(text), text)


@dataclass(frozen=True)
class HostMemoryType(_Read):
    """The host's memory type (``ddr5``, ``ddr5-6000``, ``ddr4-3200x8``: MT/s x 64-bit
    channels; what is not written takes the type's defaults, data/host_memory.toml)."""

    spec: MemorySpec
    text: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.text:
            s = self.spec
            object.__setattr__(self, "text", s.standard + (f"-{s.mt_s}" if s.mt_s else "")
                               + (f"x{s.channels}" if s.channels else ""))

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.estimate.host import MemorySpec
        from whichgpu.units import parse_memory_type

        return cls(MemorySpec(*parse_memory_type(text)), text)


class Bandwidth(_Number):
    """The host's memory bandwidth in bytes/s (``90GB/s``, ``200 GBps``), 1 B/s to 20 TB/s."""

    @classmethod
    def _written(cls, value: float) -> str:
        return f"{value:g}B/s"

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.host import parse_bandwidth

        return cls(parse_bandwidth(text), text)


class LinkName(_Read, str):
    """The link between servers: its id (``100gbe``) as the text reads it (``100GbE``,
    ``Thunderbolt 5``); an unknown one is refused with the list of links."""

    SCHEMA = _SHORT_TEXT

    def __new__(cls, value: str, text: str | None = None) -> Self:
        self = str.__new__(cls, value)
        self.text = value if text is None else text
        return self

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]
        return str(self), self.text

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.interconnect import parse_interconnect

        link = parse_interconnect(text)
        assert link is not None  # the text is not blank
        return cls(str(link), text)


@dataclass(frozen=True)
class Drafter(_Read):
    """Speculative decoding's drafter: ``mtp``, ``eagle`` or ``draft:MODEL`` (``model``: the
    draft model's name, resolved with the job's model)."""

    method: SpecMethod
    model: str | None = None
    text: str = field(default="", compare=False)
    LONGEST = 200  # draft:MODEL names a Hub id (the web's bound on this field)

    def __post_init__(self) -> None:
        if not self.text:
            object.__setattr__(self, "text", str(self.method) + (
                f":{self.model}" if self.model else ""))

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.speculative import read_drafter

        method, model = read_drafter(text)
        return cls(method, model, text)


class EngineBuild(_Read, EngineVersion):
    """The engine build a request names (``b4458``, ``2024-05``, ``ollama``): an
    :class:`~whichgpu.units.EngineVersion` read as the request validates (its build number
    and month), kept as written. Any text is a version: one that names no build, date or
    era is today's."""

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.units import parse_engine_version

        v = parse_engine_version(text)
        assert v is not None  # the text is not blank
        return cls(v.text, v.name, v.build, v.month)


# ------------------------------------------------------------------ counts the answers read
# (issue 35: read as the request validates, in the words their sentences always used)

class _CountIn(_Count):
    """A count read by units.parse_count in its field's own words (``WHAT``; ``BINARY``: k is
    1,024, as token lengths are written)."""

    BINARY: ClassVar[bool] = False

    @classmethod
    def what(cls) -> str:
        raise NotImplementedError

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.units import parse_count

        return cls(parse_count(text, binary=cls.BINARY, what=cls.what()), text)


class TrainingTokens(WorkCount):
    """``speed``'s training tokens (``1B``, at most 10^15): the total time of the training
    run, in its own sentences' words ('number of training tokens')."""

    @classmethod
    def words(cls, name: str) -> str:
        from whichgpu.answers.inputs.workload import TRAIN_TOKENS_WORDS

        return TRAIN_TOKENS_WORDS


class CompletionTokens(_CountIn):
    """RL: the longest completion in tokens (``512``, ``1k`` is 1,024)."""

    BINARY = True

    @classmethod
    def what(cls) -> str:
        return "completion tokens"


class ExampleCount(_CountIn):
    """Fine-tuning: the examples in the data set (``20k`` is 20,000)."""

    @classmethod
    def what(cls) -> str:
        return "examples"


class ExampleTokens(_CountIn):
    """Fine-tuning: the mean example length in tokens (``512``, ``1k`` is 1,024)."""

    BINARY = True

    @classmethod
    def what(cls) -> str:
        return "example tokens"


#: cached prompt tokens per request: beyond 10M no model's context holds them
MAX_CACHED_TOKENS = 10_000_000


class CachedTokens(_CountIn):
    """With the per-token API comparison: prompt tokens per request served from a prefix
    cache (``2k`` is 2,000), 0 to :data:`MAX_CACHED_TOKENS`."""

    @classmethod
    def what(cls) -> str:
        return "count"

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.errors import InputError
        from whichgpu.messages import msg

        n = super().read(text, name)
        if not 0 <= n <= MAX_CACHED_TOKENS:
            raise InputError(msg("vs_api.cached_tokens", "{field} must be a whole number of "
                                 "tokens from 0 to {most:,}, got {v!r}", field=Field(name),
                                 most=MAX_CACHED_TOKENS, v=text))
        return n


@dataclass(frozen=True)
class OptionMoney(_WrittenMoney):
    """An amount of money for one of ``tco``'s options (``25000USD``, ``0.25EUR``, or ``5000``:
    a bare number takes the request's currency where the answer applies it): its amount and
    the currency written, if any. What cannot be read is said with the option's name
    (``--purchase-price: cannot read ...``), as ownership.parse_flag_money says it."""

    def money(self, name: str, currency: str | None) -> Money:
        """The amount in its own currency, else ``currency`` (the request's); with neither,
        the reader's sentence (``amount '5' needs a currency``) after the option's name."""
        from whichgpu.currency import known_currency
        from whichgpu.units import Money, parse_money

        with _said_for(name):
            if self.currency is not None:
                return Money(self.amount, self.currency)
            if currency is None:
                parse_money(self.text)  # raises money.currency with the words as written
            return Money(self.amount, known_currency(currency or "USD"))

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.currency import known_currency
        from whichgpu.errors import InputError
        from whichgpu.units import parse_money

        with _said_for(name):
            amount = parse_money(text, default_currency="USD").amount
            try:
                written: str | None = parse_money(text).currency
            except InputError:  # no currency in the text: the request's applies
                written = None
            return cls(amount, known_currency(written) if written else None, text)


@contextmanager
def _said_for(name: str) -> Iterator[None]:
    """The reader's sentence after the option's name (``flag.reason``)."""
    from whichgpu.errors import InputError
    from whichgpu.messages import msg

    try:
        yield
    except InputError as exc:
        raise InputError(msg("flag.reason", "{flag}: {reason}", flag=Field(name),
                             reason=exc.args[0] if exc.args else str(exc))) from None


@dataclass(frozen=True)
class HourlyBudget(_Read):
    """The checklist's hourly budget: an amount (``1USD``, ``3EUR``; a bare number takes the
    request's currency, read like a :class:`MoneyAmount`) or no limit (``none``, ``no``,
    ``-``, ``0``: ``amount`` None)."""

    amount: float | None
    currency: str | None = None
    text: str = field(default="", compare=False)
    NONE: ClassVar[tuple[str, ...]] = ("none", "no", "-", "0")

    def __post_init__(self) -> None:
        if not self.text:
            object.__setattr__(self, "text", "none" if self.amount is None
                               else f"{self.amount:g}{self.currency or ''}")

    def money(self, default_currency: str) -> Money | None:
        """The budget in its own currency, else ``default_currency``; None: no limit."""
        from whichgpu.units import Money

        if self.amount is None:
            return None
        return Money(self.amount, self.currency or default_currency)

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        if text.strip().lower() in cls.NONE:
            return cls(None, None, text)
        amount = MoneyAmount.read(text, name)  # the reader's sentence, the 10^12 bound
        return cls(amount.amount, amount.currency, text)


# ------------------------------------------------------------------ issue 35: the checklist's
# hours and months, tco's utilisation (read as they validate, the same sentences)

def _checklist_number(text: str) -> float:
    """A number of the checklist's questions 4 and 5, its unit word already taken off."""
    try:
        return float(text)
    except ValueError:
        from whichgpu.errors import InputError
        from whichgpu.messages import msg

        raise InputError(msg("checklist.numbers", "hours per month and horizon must be numbers "
                             "(e.g. 120 and 24)")) from None


class MonthlyHours(_Number):
    """The checklist's hours of use a month (``120``, ``120h``), within the checklist's bound
    (advise/checklist.py check_hours: more than 0, at most 730)."""

    SCHEMA = _NUMBER_OR_TEXT

    @staticmethod
    def number(text: str) -> float:
        """The number written, not yet bounded (the checklist's prompted answers)."""
        return _checklist_number(text.strip().lower().replace("h", ""))

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.advise.checklist import check_hours

        return cls(check_hours(cls.number(text)), text)


class HorizonMonths(_Number):
    """The checklist's horizon in months (``24``, ``24m``, ``24 months``), within the
    checklist's bound (advise/checklist.py check_horizon: more than 0, at most 120)."""

    SCHEMA = _NUMBER_OR_TEXT

    @staticmethod
    def number(text: str) -> float:
        """The number written, not yet bounded (the checklist's prompted answers)."""
        return _checklist_number(text.strip().lower().replace("months", "").replace("m", ""))

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.advise.checklist import check_horizon

        return cls(check_horizon(cls.number(text)), text)


class Utilisation(_Number):
    """A share of the time a GPU works: ``0.6`` or ``60%`` (``60,5%``: a decimal comma);
    a fraction above 1 is refused as it is read, the bound (more than 0) is ownership's
    (cost/ownership.py)."""

    SCHEMA = _NUMBER_OR_TEXT

    @classmethod
    def read(cls, text: str, name: str) -> Self:
        from whichgpu.answers.inputs.ownership import UTILISATION, parse_fraction

        value = parse_fraction(text, UTILISATION)
        assert value is not None  # the text is not None
        return cls(value, text)
