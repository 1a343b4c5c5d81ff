"""Every field of a page's request model gets a control on that page: the ones the page writes
by hand (its first questions, in its own words and layout) and, under "All settings", one
generated from the request model itself (its ``Web`` label and hint, its type, its bounds,
its vocabulary) for every other field.

While a page renders, each hand-written control says its field's name (``mark``, called by
the ``field`` and ``select`` macros and the page's own controls); the generated section,
rendered last in the form, draws what is left. A field added to a request model thus shows
up on its page without a template edit, and ``tests/test_web_request_walk.py`` walks the
models to check it. The few fields that do not belong in a page's form are listed here, each
with its reason (:data:`NOT_ON_PAGE`).
"""

from __future__ import annotations

import functools
import types
import typing
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Literal

from markupsafe import Markup

from whichgpu.answers import requests as r
from whichgpu.answers.fields import N_, is_bool, web_of
from whichgpu.answers.inputs.values import read_as_text
from whichgpu.answers.request import Request as Question
from whichgpu.answers.request import for_web
from whichgpu.web.input_bounds import number_attrs

#: The request model behind each page's form.
PAGE_MODEL: dict[str, type[Any]] = {"advisor": r.Recommend, "memory": r.Memory, "fits": r.Fits,
                               "rent": r.Tco, "gpus": r.Gpus}

#: Fields that are not a control of the page's form, and why (the walk test reads this).
NOT_ON_PAGE: dict[str, dict[str, str]] = {
    "advisor": {
        "export": "the 'Launch it' form under each answer asks it (GET /export)",
        "export_option": "the 'Launch it' form under each answer asks it (GET /export)",
        "calibration": "a checkbox shown only where this server has a calibration profile "
                       "(the web only ever uses the server's own)",
        "params": "the Model field takes a size such as 70B, which is the same question",
        "tokens": "'How much' with 'Of what' = tokens to generate",
        "tokens_per_day": "'How much' with 'Of what' = tokens a day",
        "users": "'How much' with 'Of what' = users reading at once",
        "images": "'How much' with 'Of what' = images",
        "videos": "'How much' with 'Of what' = videos",
        "steps": "'How much' with 'Of what' = training steps",
        "train_tokens": "'How much' with 'Of what' = training tokens",
    },
    "memory": {
        "params": "the Model field takes a size such as 70B, which is the same question",
    },
    "rent": {},
    "gpus": {},
    "fits": {},
}

_marked: ContextVar[set[str] | None] = ContextVar("marked", default=None)

#: examples for text fields whose request model gives no hint (values, not words)
PLACEHOLDERS = {"optimizer": "adamw-8bit", "lora_targets": "all-linear", "loss": "fused",
                "framework": "unsloth", "host_ram": "64GB", "host_memory": "ddr5-5600x2",
                "host_bandwidth": "90GB/s", "budget": "50EUR", "checkpoint_every": "30m",
                "kv_dtype": "fp8", "examples": "20k", "example_tokens": "512",
                "rate": "EURUSD=1.08", "override_tensor": "exps=CPU",
                "engine_version": "b4458", "gpu": "rtx-3060-12gb", "vs": "h100-sxm",
                "purchase_price": "25000USD", "prompt_tokens": "1000",
                "output_tokens": "200", "memory": "48GB", "form": "pcie"}


#: how the software names itself (the engine vocabulary's values are ids)
NAMES = {"llamacpp": "llama.cpp", "vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM",
         "transformers": "Transformers", "exllamav2": "ExLlamaV2", "mlc": "MLC", "mlx": "MLX",
         "diffusers": "Diffusers", "comfyui": "ComfyUI"}


def begin() -> Any:
    """Start a page: no field has a control yet (returns the token to :func:`end`)."""
    return _marked.set(set())


def end(token: Any) -> None:
    _marked.reset(token)


def mark(*names: str) -> str:
    """A template says it drew a control for these fields (renders as nothing)."""
    marked = _marked.get()
    if marked is not None:
        marked.update(names)
    return ""


@dataclass(frozen=True)
class Control:
    """One generated control: ``kind`` is text, number or select."""

    name: str
    label: str
    kind: Literal["text", "number", "select"]
    hint: str | None = None
    placeholder: str = ""
    attrs: Markup = field(default_factory=Markup)
    options: tuple[tuple[str, str], ...] = ()  # (value, words to translate)
    words_context: str | None = None  # the engine catalog context of option words
    maxlength: int | None = None
    default: str = ""  # the option chosen when the question leaves the field out


def _inner(annotation: Any) -> Any:
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


@functools.lru_cache(maxsize=1024)  # request models x fields: the same on every page
def control(model: type[Any], name: str) -> Control:
    """The generated control of ``model``'s field ``name`` (a frozen record, made once per
    model and field: a page with "All settings" asks for ~40 of them on every render)."""
    info = model.model_fields[name]
    web = web_of(model, name)
    kind = _inner(info.annotation)
    base = Control(name=name, label=web.label or name.replace("_", " "), kind="text",
                   hint=web.hint, placeholder=PLACEHOLDERS.get(name, ""),
                   maxlength=web.max_length or 40)
    if is_bool(model, name):
        default = info.default
        opts: tuple[tuple[str, str], ...] = (
            (("", N_("Default")), ("true", N_("Yes")), ("false", N_("No")))
            if default is None else
            (("", N_("Yes") if default else N_("No")),
             ("false" if default else "true", N_("No") if default else N_("Yes"))))
        return replace(base, kind="select", options=opts)
    if isinstance(kind, type) and issubclass(kind, Enum):
        members = tuple((str(m.value), NAMES.get(str(m.value), str(m.value))) for m in kind)
        words = f"vocabulary.{kind.__name__}"
        if info.default is None:
            return replace(base, kind="select", options=(("", N_("Default")), *members),
                           words_context=words)
        return replace(base, kind="select", options=members, words_context=words,
                       default=str(info.default.value))
    if kind in (int, float) and not read_as_text(info):  # 8k, 1200/min: a text box
        return replace(base, kind="number", attrs=number_attrs(model, name))
    return base


def missing(page: str, shown: set[str] | None = None) -> list[Control]:
    """The controls ``page`` still owes: every field of its request model (as the web takes
    it) that it drew no control for and that :data:`NOT_ON_PAGE` does not excuse."""
    model: type[Question] = for_web(PAGE_MODEL[page])
    shown = _marked.get() if shown is None else shown
    skip = NOT_ON_PAGE.get(page, {})
    return [control(model, n) for n in model.model_fields
            if n not in (shown or set()) and n not in skip]


def any_set(owed: list[Control], form: dict[str, Any]) -> bool:
    """Whether the question sets one of these fields (the section then opens)."""
    return any(form.get(c.name) for c in owed)


def option_words(L: Any, c: Control, value: str, text: str) -> str:
    """An option's words in the page's language: a vocabulary's word from the engine
    catalog, else the page catalog's."""
    from whichgpu.web.i18n import translations
    from whichgpu.web.words import translated

    if c.words_context and value:
        return text if text != value else translated(L, c.words_context, value) or value
    return translations(L.lang).gettext(text)
