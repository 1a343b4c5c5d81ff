"""The base of every request model, and bad input as one line.

Values are the strings a person types (``8k``, ``1M``, ``2EUR``, ``60%``), read once in the
answer layer, so the same input gives the same answer, or the same one-line reason, on every
surface; a field that holds a quantity is read as it validates (answers/inputs/values.py:
the request then holds the number and says back the text). Bounds keep one question cheap:
magnitudes no real job reaches are refused here (amounts of work up to ``MAX_WORK``, money
up to ``MAX_MONEY``, deadlines up to
``MAX_DURATION_S``, exchange rates between ``MIN_RATE`` and ``MAX_RATE``); where the engine
bounds a value itself, its bound and its sentence answer. A bound only the web server adds
(what one request may cost it) is the field's ``Web(max=...)``, applied by :func:`for_web`.
"""

from __future__ import annotations

import enum
import functools
import math
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic import Field as PydanticField

from whichgpu.answers.fields import Cli, Text, choice_of, flags, web_of
from whichgpu.errors import InputError
from whichgpu.messages import Field, Join, Message, msg
from whichgpu.parse_cache import compile_text
from whichgpu.units import parse_count, parse_duration, parse_money

MAX_WORK = 10**15  # about 70 times the 15T tokens Llama 3 was pre-trained on
MAX_MONEY = 1e12  # in whatever currency it is written
MAX_DURATION_S = 100 * 365.25 * 86400
MIN_RATE, MAX_RATE = 1e-7, 1e7

WORK_FIELDS = ("tokens", "images", "videos", "steps", "train_tokens", "tokens_per_day")
MONEY_FIELDS = ("max_price_per_hour", "budget", "budget_per_hour")
#: text fields the engine also reads as a bare number (8192 as well as 8k): a JSON body may
#: send them as numbers, and the OpenAPI schema says so (money, durations and latencies need
#: their unit, so they stay text)
NUMBER_TEXT_FIELDS = (*WORK_FIELDS, "context", "prompt_tokens", "output_tokens", "params",
                      "requests_per_s", "utilization", "hours_per_month", "horizon_months")


def _numbers_in_schema(schema: dict[str, Any], cls: type[BaseModel]) -> None:
    """Declare in the JSON schema (the REST API's OpenAPI) that a field the engine reads as a
    count takes a JSON number or a text (``8192`` or ``"8k"``, see :func:`_numbers_as_text`)."""
    props = schema.get("properties", {})
    for name in _text_fields(cls) & set(NUMBER_TEXT_FIELDS):
        prop = props.get(name)
        if prop is None:
            continue
        if "anyOf" in prop:
            branches = prop["anyOf"]
        else:  # a required or defaulted ``str``: its string constraints move into a branch
            keep = {"title", "description", "default", "examples", "deprecated"}
            branch = {k: v for k, v in prop.items() if k not in keep}
            for k in list(branch):
                del prop[k]
            branches = prop["anyOf"] = [branch]
        if not any(b.get("type") == "number" for b in branches):
            branches.insert(0, {"type": "number"})


class Request(BaseModel):
    """One command's question. ``COMMAND`` is its name on the command line."""

    # NaN and infinities are refused at parse time: no answer can be computed from them, and
    # strict JSON has no way to write them back
    # defer_build: a model's validator is built when first used, not at import (a command
    # uses one of the ~50 request models; building them all cost ~0.15 CPU-s per start)
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, use_enum_values=False,
                              json_schema_extra=_numbers_in_schema, defer_build=True)
    COMMAND: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Before pydantic reads the new model's fields: its annotations, text under
        ``from __future__ import annotations``, evaluated here (:func:`_evaluate_annotations`)."""
        super().__init_subclass__(**kwargs)
        _evaluate_annotations(cls)

    @model_validator(mode="before")
    @classmethod
    def _json_numbers(cls, data: Any) -> Any:
        """A number where a field takes text (8192 for '8192', as JSON bodies send it)."""
        return _numbers_as_text(cls, data)
    #: field -> (sentence below the lower bound, sentence above the upper bound); {v} is the
    #: value. Only where the engine words it differently from the generic sentences.
    BOUND_TEXT: ClassVar[dict[str, tuple[Text | None, Text | None]]] = {}
    #: surface the model validates for: "cli" (the model itself) or "web" (for_web)
    SURFACE: ClassVar[str] = "cli"

    def fields(self, *names: str) -> dict[str, Any]:
        return {n: getattr(self, n) for n in names}

    @classmethod
    def parse(cls, values: dict[str, Any]) -> Any:
        """The validated request, or InputError with the one-line reason."""
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise InputError(reason(list(exc.errors()), cls)) from None

    @field_validator(*WORK_FIELDS, check_fields=False)
    @classmethod
    def _work(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):  # steps is a number of diffusion steps in speed
            return value
        return _at_most_count(value, field_named(cls, info.field_name or ""), MAX_WORK)

    @field_validator(*MONEY_FIELDS, check_fields=False)
    @classmethod
    def _money(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):  # None, or read as it validated (a MoneyAmount)
            return value
        try:
            amount = parse_money(value, default_currency="USD").amount
        except (InputError, ValueError, OverflowError):
            return value  # not money at all: the engine's parser says why
        if abs(amount) > MAX_MONEY:
            raise InputError(msg("bound.money", "{field} must be at most 10^12 "
                                 "(1,000,000,000,000) in any currency, got {v!r}",
                                 field=field_named(cls, info.field_name or ""), v=value))
        return value

    @field_validator("deadline", check_fields=False)
    @classmethod
    def _duration(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):  # None, or read as it validated (a Deadline)
            return value
        try:
            longest = max(parse_duration(part) for part in value.split(".."))
        except (InputError, ValueError, OverflowError):
            return value
        if longest > MAX_DURATION_S:
            raise InputError(msg("bound.duration", "{field} must be at most 100 years, got "
                                 "{v!r}", field=field_named(cls, info.field_name or ""),
                                 v=value))
        return value

    @field_validator("calibration", check_fields=False)
    @classmethod
    def _calibration(cls, value: str | None) -> str | None:
        if cls.SURFACE != "web":
            return value or None  # the command line: a profile file, or 'default'
        if value is None or value.strip().lower() in ("", "none"):
            return None
        if value.strip().lower() != "default":
            raise InputError(msg("web.calibration", "calibration must be 'default' (this "
                                 "server's calibration profile) or 'none': the web server "
                                 "reads no file named in a request"))
        return "default"

    @model_validator(mode="after")
    def _no_denormals(self) -> Request:
        """A denormal float (1e-320: below the smallest normal float, 2.2e-308) passes a
        ``gt=0`` bound but means no quantity and reads as 0 in every sum: refused by name,
        on every surface (the CLI's own parsers refuse it too, cli/common.py). The values are
        read from the instance's dict (a validated model's fields, in field order), not by
        name one at a time (issue 27: 57 attribute reads per REST memory request)."""
        fields = type(self).model_fields
        for name, value in self.__dict__.items():
            if isinstance(value, float) and value != 0 and abs(value) < sys.float_info.min \
                    and name in fields:
                raise InputError(msg("bound.denormal", "{field} is too small to compute with, "
                                     "got {v!r}: give a plausible amount",
                                     field=field_named(type(self), name), v=value))
        return self

    @model_validator(mode="after")
    def _server_bounds(self) -> Request:
        if self.SURFACE == "web":
            check_web_bounds(self)
        return self

    @field_validator("rate", check_fields=False)
    @classmethod
    def _rates(cls, value: list[str] | None) -> list[str] | None:
        from whichgpu.currency import parse_rate

        for text in value or []:
            try:
                rate = parse_rate(text)[2]
            except (InputError, ValueError, OverflowError):
                continue
            if not MIN_RATE <= rate <= MAX_RATE:
                raise InputError(msg("bound.rate", "exchange rate {v!r} must be between 10^-7 "
                                     "and 10^7", v=text))
        return value


#: an annotation's text -> its compiled expression (many fields share one: ``str | None``)
_ANNOTATION_CODE: dict[str, types.CodeType] = {}
#: this module's __future__ flags, what ``compile`` here inherits (``from __future__ import
#: annotations`` binds the feature to its name)
_FLAGS = annotations.compiler_flag


def _evaluate_annotations(cls: type) -> None:
    """``cls``'s own annotations, from text to the objects they name, in the namespaces
    pydantic (and ``typing.get_type_hints``) evaluate them in a moment later: the module's,
    then the class's. Pydantic compiles each text anew through ``typing.ForwardRef``: about
    500 annotations over the ~40 request models, 15 of the ~48 ms of CPU of importing
    answers/requests.py (issue 27). A text that names something not defined yet (a forward
    reference), or fails otherwise, stays text: pydantic evaluates it, or says why."""
    # the class's own dict, edited in place (inspect.get_annotations returns a copy)
    annotations = cls.__dict__.get("__annotations__")  # noqa: RUF063
    module = sys.modules.get(cls.__module__)
    if not annotations or module is None:
        return
    namespace, class_namespace = vars(module), dict(vars(cls))
    for name, text in annotations.items():
        if not isinstance(text, str):
            continue
        code = _ANNOTATION_CODE.get(text)
        if code is None:
            try:
                # compiled as this module would (its __future__ flags), once per interpreter
                # where the whichgpu program keeps code between runs (cli/class_code.py)
                code = _ANNOTATION_CODE[text] = compile_text(text, "<annotation>", "eval",
                                                             _FLAGS)
            except SyntaxError:
                continue
        try:
            annotations[name] = eval(code, namespace, class_namespace)
        except Exception:  # pydantic evaluates it, or says why
            continue


def _words(name: str) -> str:
    return name.replace("_", " ")


def _at_most_count(value: str, field: Field, limit: int) -> str:
    try:
        n = parse_count(value, what=str(field))
    except (InputError, ValueError, OverflowError):
        return value  # unreadable: the engine's parser gives the reason
    if n > limit:
        raise InputError(msg("bound.work", "{field} must be at most 10^15, got {v!r}",
                             field=field, v=value))
    return value


# ------------------------------------------------------------------ the web's variant

_web_models: dict[tuple[type, bool], type] = {}
class PastedConfig(Request):
    """A pasted config.json (a JSON body on the web; the command line names a file)."""

    config: typing.Annotated[dict[str, Any] | None, PydanticField(description=(
        "The contents of a model's config.json (instead of model).")), Cli(skip=True)] = None

    @field_validator("config")
    @classmethod
    def _config(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        from whichgpu.errors import DataError
        from whichgpu.models.bounds import PASTED, check_config
        from whichgpu.models.local_file import MAX_JSON_DEPTH, json_depth

        if value is None:
            return value
        if json_depth(value) > MAX_JSON_DEPTH:
            raise InputError(msg("paste.depth", "the pasted config.json nests more than {n} "
                                 "levels deep; a model config nests a few", n=MAX_JSON_DEPTH))
        if not _all_finite(value):
            raise InputError(msg("paste.nan", "the pasted config.json holds NaN or Infinity, "
                                 "which are not JSON numbers"))
        try:  # dimensions no model has: refused here, before the request takes a worker
            check_config(value, PASTED)
        except DataError as exc:
            raise InputError(exc.args[0]) from None
        return value


def _all_finite(data: Any) -> bool:
    todo = [data]
    while todo:
        item = todo.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return True


R = typing.TypeVar("R", bound=Request)


def for_web(model: type[R], body: bool = False) -> type[R]:
    """``model`` as the web server takes it: the same fields, defaults and sentences, plus
    the bounds only the server applies (``Web(max=...)``: what one request may cost it), the
    fields it never takes (``Web(skip=True)``: files on its disk) refused, and a calibration
    profile only ever the server's own (``default``). ``body``: a JSON body, which may carry
    a pasted config.json (PastedConfig)."""
    hit = _web_models.get((model, body))
    if hit is not None:
        return hit
    ns: dict[str, Any] = {"SURFACE": "web", "__module__": model.__module__,
                          "__doc__": model.__doc__, "__annotations__": {}}
    for name in model.model_fields:
        if web_of(model, name).skip:
            ns["__annotations__"][name] = typing.ClassVar[Any]
            ns[name] = None
    bases: tuple[type, ...] = (model,)
    if body:
        bases = (model, PastedConfig)
    web = typing.cast("type[R]", type(model.__name__ + ("Body" if body else ""), bases, ns))
    web.model_rebuild()
    _web_models[(model, body)] = web
    return web


def _is_text(annotation: Any) -> bool:
    """``str`` or ``str | None`` (a value the engine parses: 8k, 1M, 2EUR), not a vocabulary."""
    args = typing.get_args(annotation) if typing.get_origin(annotation) in (
        typing.Union, types.UnionType) else (annotation,)
    return str in args


def _as_text(v: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return v
    return str(int(v)) if isinstance(v, float) and v.is_integer() and abs(v) < 1e15 else str(v)


def _numbers_as_text(cls: type[BaseModel], data: Any) -> Any:
    """A JSON number where the command line takes text (``"context": 8192`` as ``8192``,
    ``"tokens": 1e6`` as ``1000000``): the same value, read by the same parser."""
    if not isinstance(data, dict):
        return data
    text = _text_fields(cls)
    return {k: _as_text(v) if k in text else v for k, v in data.items()}


@functools.cache
def _text_fields(cls: type[BaseModel]) -> frozenset[str]:
    return frozenset(n for n, f in cls.model_fields.items() if _is_text(f.annotation))


DEFAULT_WEB_LENGTH = 40  # a value typed in a form: 8k, 1M, 2EUR, q4_k_m, ddr5-6000x2
_TOO_MANY = Text("web.too_many", "{field} takes at most {n} values")
_SERVER_WHOLE = Text("web.max.whole", "{field} must be a whole number <= {limit} (the web "
                     "server's limit), got {v}")
_SERVER_MAX = Text("web.max", "{field} must be at most {limit} (the web server's limit), got "
                   "{v}")


@functools.cache
def _web_limits(cls: type[BaseModel]) -> tuple[tuple[str, float | None, int, int | None], ...]:
    """(name, max, longest text, most values) of each field of a web model, in field order:
    read from its ``Web(...)`` once per model, not once per request (issue 27: ~57 metadata
    walks per REST memory request)."""
    out = []
    for name in cls.model_fields:
        web = web_of(cls, name)
        out.append((name, web.max, web.max_length or DEFAULT_WEB_LENGTH, web.max_items))
    return tuple(out)


def check_web_bounds(request: Request) -> None:
    """The server's own bounds (``Web(max=..., max_length=..., max_items=...)``), in the
    engine's words."""
    cls = type(request)
    for name, cap, longest, max_items in _web_limits(cls):
        value = getattr(request, name)
        if value is None:  # nothing given: no bound to pass
            continue
        texts = value if isinstance(value, list) else [value]
        if isinstance(value, list) and max_items is not None and len(value) > max_items:
            raise InputError(_TOO_MANY(field=field_flag(cls, name), n=max_items))
        if any(isinstance(t, str) and len(t) > longest for t in texts):
            raise InputError(_TOO_LONG(field=field_flag(cls, name), n=longest))
        if cap is not None and isinstance(value, int | float) and not isinstance(value, bool) \
                and value > cap:
            text = cls.BOUND_TEXT.get(name, (None, None))[1]
            if text:
                raise InputError(text(v=_number_text(value), field=_bound_flag(cls, name)))
            if isinstance(value, int):
                raise InputError(_SERVER_WHOLE(field=field_named(cls, name), limit=f"{cap:g}",
                                               v=value))
            raise InputError(_SERVER_MAX(field=field_named(cls, name), limit=f"{cap:g}",
                                         v=_number_text(value)))


# ------------------------------------------------------------------ bad input in one line

_ENGINE_BOUNDS: dict[str, tuple[Text | None, Text | None]] = {
    # the engine's sentences (estimate/workload.py, cost/ownership.py, answers/inputs/, advise)
    "tp": (Text("bound.tp", "tensor parallel degree must be >= 1, got {v}"), None),
    "zero": (Text("bound.zero", "ZeRO stage must be 0, 1, 2 or 3, got {v}"),) * 2,
    "frames": (Text("bound.frames", "frames must be >= 1, got {v}"), None),
    "tdp": (Text("bound.tdp", "TDP must be more than 0 W and at most 5,000 W, got {v}"),) * 2,
    "load_factor": (Text("bound.load_factor", "load factor (share of TDP drawn while busy) "
                         "must be more than 0 and at most 1, got {v}"),) * 2,
    "pue": (Text("bound.pue", "PUE must be between 1 and 3, got {v}"),) * 2,
    "concurrency": (Text("bound.concurrency", "concurrency must be at least 1"), None),
    "steps": (Text("bound.steps", "steps must be >= 1, got {v}"), None),
    "gpu_layers": (Text("bound.gpu_layers", "{field} must be >= 0, got {v}"), None),
    "n_cpu_moe": (Text("bound.n_cpu_moe", "{field} must be >= 0, got {v}"), None),
    "tokens_per_s_each": (Text("bound.tokens_per_s_each", "tokens per s each must be "
                               "positive"), None),
    "max_age": (Text("bound.max_age", "{field} must be a positive number of days, got "
                     "{v}"), None),
    "max_gpus": (Text("bound.max_gpus", "{field} must be at least 1, got {v}"), None),
}
#: the flag a bound's sentence names (the engine's own sentences say these)
_BOUND_FLAGS = {"gpu_layers": "-ngl"}
_LABELS = {"lora_rank": "lora rank"}
_GENERIC = {
    "greater_than": Text("bound.more_than", "{field} must be more than {limit}, got {v}"),
    "greater_than_equal": Text("bound.at_least", "{field} must be at least {limit}, got {v}"),
    "less_than": Text("bound.less_than", "{field} must be less than {limit}, got {v}"),
    "less_than_equal": Text("bound.at_most", "{field} must be at most {limit}, got {v}"),
}
_WHOLE_LOW = Text("bound.whole.low", "{field} must be a whole number >= {limit}, got {v}")
_WHOLE_HIGH = Text("bound.whole.high", "{field} must be a whole number <= {limit}, got {v}")
_OPEN_CLOSED = Text("bound.open_closed", "{field} must be more than {low} and at most {high}, "
                    "got {v}")
_CLOSED = Text("bound.between", "{field} must be between {low} and {high}, got {v}")
_PARSE = {
    "int_parsing": Text("parse.int", "Invalid value for '{field}': {v!r} is not a valid "
                        "integer."),
    "int_from_float": Text("parse.int", "Invalid value for '{field}': {v!r} is not a valid "
                           "integer."),
    "float_parsing": Text("parse.float", "Invalid value for '{field}': {v!r} is not a valid "
                          "float."),
    "finite_number": Text("parse.finite", "Invalid value for '{field}': {v!r} is not a finite "
                          "number."),
    "bool_parsing": Text("parse.bool", "Invalid value for '{field}': {v!r} is not a valid "
                         "boolean."),
}
_MISSING = Text("parse.missing", "Missing option '{field}'.")
_EXTRA = Text("parse.extra", "No such option: {field}")
_TOO_LONG = Text("parse.too_long", "{field} must be at most {n} characters")
_JOINED = Text("parse.joined", "{reasons}")
_INVALID = Text("parse.invalid", "invalid request")


def _label_words(model: type[BaseModel] | None, name: str) -> str:
    return _LABELS.get(name, _words(name))


def field_named(model: type[BaseModel] | None, name: str) -> Field:
    """A field said by its name in words ('lora rank'); the web says its own label."""
    return Field(name, flag=_label_words(model, name))


def field_flag(model: type[BaseModel] | None, name: str) -> Field:
    """A field said by its flag ('--batch'; a positional argument: '--gpu')."""
    known = model is not None and name in model.model_fields
    named = flags(model, name) if known and model is not None else ()
    return Field(name, flag=named[0] if named else "--" + name.replace("_", "-"))


def _bound_flag(model: type[BaseModel] | None, name: str) -> Field:
    flag = _BOUND_FLAGS.get(name)
    return Field(name, flag=flag) if flag else field_flag(model, name)


def _number_text(text: Any) -> str:
    try:
        v = float(text)
    except OverflowError:
        return str(text)
    except (TypeError, ValueError):
        return repr(text)
    return str(int(v)) if v.is_integer() and abs(v) < 1e16 else f"{v:g}"


def _number_said(value: Any) -> int | float | str:
    """A value in a bound's sentence as a number (each surface writes it its own way: 0.5
    in English, 0,5 in French), or as the text it was when it is not one."""
    try:
        v = float(value)
    except OverflowError:  # an integer of 309+ digits: said by its digits, on each surface
        return value if isinstance(value, int) else repr(value)
    except (TypeError, ValueError):
        return repr(value)
    if not math.isfinite(v):
        return _number_text(value)
    return int(v) if v.is_integer() and abs(v) < 1e16 else float(f"{v:g}")


def _bounds(model: type[BaseModel] | None, name: str) -> tuple[Any, bool, Any, bool]:
    """(low, low inclusive, high, high inclusive) of a numeric field."""
    low = high = None
    low_in = high_in = True
    field = model.model_fields.get(name) if model else None
    for m in getattr(field, "metadata", ()):
        if getattr(m, "ge", None) is not None:
            low = m.ge
        if getattr(m, "gt", None) is not None:
            low, low_in = m.gt, False
        if getattr(m, "le", None) is not None:
            high = m.le
        if getattr(m, "lt", None) is not None:
            high, high_in = m.lt, False
    return low, low_in, high, high_in


def _is_int(model: type[BaseModel] | None, name: str) -> bool:
    field = model.model_fields.get(name) if model else None
    return field is not None and int in (field.annotation, *typing.get_args(field.annotation))


def _bound_sentence(model: type[BaseModel] | None, name: str, kind: str, value: Any,
                    ctx: dict[str, Any]) -> Message:
    v = _number_said(value)
    texts = {**_ENGINE_BOUNDS, **(getattr(model, "BOUND_TEXT", None) or {})}.get(
        name, (None, None))
    below = kind in ("greater_than", "greater_than_equal")
    special = texts[0] if below else texts[1]
    if special:
        return special(v=v, field=_bound_flag(model, name))
    field = field_named(model, name)
    low, low_in, high, high_in = _bounds(model, name)
    if (low if below else high) is None:
        return _GENERIC[kind](field=field, limit=next(iter(ctx.values()), "?"), v=v)
    if _is_int(model, name):
        return (_WHOLE_LOW if below else _WHOLE_HIGH)(field=field, limit=low if below else high,
                                                      v=v)
    if low is not None and high is not None and high_in:
        return (_CLOSED if low_in else _OPEN_CLOSED)(field=field, low=_number_said(low),
                                                     high=_number_said(high), v=v)
    if below:
        return _GENERIC["greater_than_equal" if low_in else "greater_than"](
            field=field, limit=_number_said(low), v=v)
    return _GENERIC["less_than_equal" if high_in else "less_than"](field=field,
                                                                   limit=_number_said(high), v=v)


def _said(err: Mapping[str, Any], text: str) -> Message | str:
    """A validator's own sentence: the message it raised, when it raised one."""
    raised = (err.get("ctx") or {}).get("error")
    first = raised.args[0] if isinstance(raised, BaseException) and raised.args else None
    return first if isinstance(first, Message) else text


def reason(errors: Sequence[Mapping[str, Any]], model: type[BaseModel] | None = None
           ) -> Message:
    """Pydantic's errors as one line, in the engine's words where it has them:
    'batch must be a whole number >= 1, got 0', 'No such option: --colour'."""
    parts: list[Message | str] = []
    for err in errors[:5]:
        loc = [str(p) for p in err.get("loc", ()) if p not in ("query", "body", "path")]
        name = loc[0] if loc else ""
        known = model is not None and name in model.model_fields
        kind = err.get("type", "")
        value = err.get("input")
        text = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        single = len(loc) == 1
        if kind in _GENERIC and single:
            parts.append(_bound_sentence(model, name, kind, value, err.get("ctx") or {}))
        elif kind == "enum" and single and known and model is not None:
            parts.append(_unknown_choice(model, name, value, err.get("ctx") or {}))
        elif kind in _PARSE and single:
            parts.append(_PARSE[kind](field=field_flag(model, name), v=value))
        elif kind == "missing" and single:
            parts.append(_MISSING(field=field_flag(model, name)))
        elif kind == "extra_forbidden" and single:
            parts.append(_EXTRA(field=field_flag(model, name)))
        elif kind == "string_too_long" and single:
            limit = (err.get("ctx") or {}).get("max_length")
            parts.append(_TOO_LONG(field=field_flag(model, name), n=limit))
        elif kind == "value_error":
            parts.append(_said(err, text))  # our validators write whole sentences
        else:
            parts.append(f"{'.'.join(loc)}: {text}" if loc else text)
    if not parts:
        return _INVALID()
    return parts[0] if len(parts) == 1 and isinstance(parts[0], Message) else \
        _JOINED(reasons=Join(parts, "; "))


def _unknown_choice(model: type[BaseModel], name: str, value: Any,
                    ctx: dict[str, Any]) -> Message:
    choice = choice_of(model, name)
    annotation = model.model_fields[name].annotation
    members = [a for a in (annotation, *typing.get_args(annotation))
               if isinstance(a, type) and issubclass(a, str) and issubclass(a, enum.Enum)]
    values = [str(m) for m in members[0]] if members else \
        [v.strip(" '") for v in str(ctx.get("expected", "")).replace(" or ", ", ").split(",")]
    if name == "engine":
        from whichgpu.engines import not_modelled

        known = not_modelled(str(value))
        if known is not None:
            return engine_not_modelled(known, values)
    unknown = choice.unknown if choice is not None else Text(
        "choice.unknown", "unknown {field} {v!r}; use one of {choices}")
    return unknown(field=field_named(model, name), v=value, choices=", ".join(values))


def engine_not_modelled(known: Any, choices: list[str]) -> Message:
    """An engine whichgpu knows of but does not model: said so, never substituted."""
    from whichgpu.messages import Field, Join, data_text, msg

    if known.use:
        return msg("engine.not_modelled.use", "{engine} is not modelled: {why}; ask with "
                   "{use}", engine=known.name, why=data_text(known.why),
                   use=Join([Field(k, v) for k, v in known.use], ", "))
    return msg("engine.not_modelled", "{engine} is not modelled: {why}; whichgpu does not "
               "answer with another engine's numbers (modelled: {choices})",
               engine=known.name, why=data_text(known.why), choices=", ".join(choices))


def finite(value: float | None) -> bool:
    return value is None or math.isfinite(value)
