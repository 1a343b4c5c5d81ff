"""What the engine says, in the page's language: structured messages rendered from catalogs.

A :class:`~whichgpu.messages.Message` carries an id, its English template and typed
parameters. Its French is the ``engine`` catalog's entry for that id
(``locales/<lang>/LC_MESSAGES/engine.po``: ``msgctxt`` the id, ``msgid`` the English
template, ``msgstr`` the translation, with the same placeholders); each parameter is said
the page's way: numbers and money in the locale's format, durations in its units, a request
field by the web's own words for it (never a CLI flag), words of the vocabularies from the
catalog, nested messages in turn. A string from a data file (a catalog note, a source's
description) is looked up whole under the ``data`` context. Nothing here reads English text
to translate it: a message without a translation, or a data string without one, is shown in
English and marked ``lang="en"``. The English catalog is empty but for the few data notes
that tell the command line's user which flag to give (``--gpu-spec``, ``--fused-loss``): its
``msgstr`` is what the English pages say instead, naming the page's control.
"""

from __future__ import annotations

import functools
import io
import math
import string
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations
from markupsafe import Markup, escape

from whichgpu.answers import requests as r
from whichgpu.answers.fields import N_
from whichgpu.answers.fields import label as field_label
from whichgpu.engines import label as engine_label
from whichgpu.messages import DataText, Field, Join, Message, Some
from whichgpu.units import Age, Duration, Money
from whichgpu.vocabulary import Engine, Placement
from whichgpu.web.i18n import Locale

DATA = "data"  # the context of whole strings from data files


@cache
def engine_catalog(lang: str) -> Translations:
    """The engine's messages in ``lang`` (read from its .po file once per process)."""
    po = resources.files("whichgpu.web").joinpath(f"locales/{lang}/LC_MESSAGES/engine.po")
    if not po.is_file():
        return Translations()
    with po.open("rb") as f:
        catalog = read_po(f, locale=lang)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return Translations(fp=buf)


def translated(L: Locale, context: str, text: str) -> str | None:
    """``text`` under ``context`` in the page's language, or None without a translation
    (English is its own translation)."""
    if L.lang == "en":  # a data file's note may name a CLI flag: the web's English for it
        return str(engine_catalog("en").pgettext(context, text)) if context == DATA else text
    out = str(engine_catalog(L.lang).pgettext(context, text))
    return out if out != text or _same_in(L.lang, context, text) else None


@cache
def _same_words(lang: str) -> frozenset[tuple[str, str]]:
    """Entries translated as themselves (an identifier, a product name): msgstr == msgid."""
    po = resources.files("whichgpu.web").joinpath(f"locales/{lang}/LC_MESSAGES/engine.po")
    if not po.is_file():
        return frozenset()
    with po.open("rb") as f:
        catalog = read_po(f, locale=lang)
    return frozenset((m.context or "", m.id) for m in catalog if m.id and m.string == m.id
                     and isinstance(m.id, str))


def _same_in(lang: str, context: str, text: str) -> bool:
    return (context, text) in _same_words(lang)


# ------------------------------------------------------------------ the request fields' words

@cache
def _labels() -> dict[str, str]:
    """The web's words for each request field (the first request model that labels it)."""
    out: dict[str, str] = {}
    for model in r.COMMANDS:
        for name in model.model_fields:
            out.setdefault(name, field_label(model, name))
    return out


def field_words(L: Locale, name: str) -> str:
    """A request field as the page names it: 'Weight format' / 'Format des poids'."""
    return L.gettext(_labels().get(name, name.replace("_", " ")))


# ------------------------------------------------------------------ rendering

@dataclass
class Said:
    """A rendering and whether every part of it is in the page's language."""

    text: str
    complete: bool = True


class _Formatter(string.Formatter):
    """``str.format`` with each parameter said for one locale."""

    def __init__(self, L: Locale) -> None:
        super().__init__()
        self.L = L
        self.complete = True

    def format_field(self, value: Any, format_spec: str) -> str:
        L = self.L
        if isinstance(value, Message):
            said = say_text(L, value)
            self.complete &= said.complete
            return said.text
        if isinstance(value, Field):
            return self.field(value)
        if isinstance(value, Placement):
            return value.gpu if value.count == 1 else L.gettext(
                "%(n)s × %(gpu)s", n=value.count, gpu=value.gpu)
        if isinstance(value, Some):
            shown = [self.format_field(i, format_spec) for i in value.shown]
            head = value.sep.join(shown)
            return L.gettext("%(items)s and %(n)s more", items=head, n=value.more) \
                if value.more else head
        if isinstance(value, Join):
            parts = [self.format_field(i, format_spec) for i in value.items]
            if value.last is not None and len(parts) > 1:
                last = L.gettext(value.last.strip()) if value.last.strip() else value.last
                return value.sep.join(parts[:-1]) + f" {last} " + parts[-1]
            sep = value.sep
            if sep.strip() in ("and", "or"):  # a joining word, said in the page's language
                sep = f" {L.gettext(sep.strip())} "
            return sep.join(parts)
        if isinstance(value, Money):
            return L.money(value, int(format_spec) if format_spec else None)
        if isinstance(value, Duration):
            return L.duration(float(value))
        if isinstance(value, Age):
            return L.age(float(value))
        if isinstance(value, Engine) and L.lang == "en":  # 'vLLM', as the French page says
            return engine_label(value.value)
        if isinstance(value, StrEnum):
            words = translated(L, f"vocabulary.{type(value).__name__}", value.value)
            if words is None:
                self.complete = False
                return value.value
            return words
        if isinstance(value, DataText):
            words = translated(L, DATA, str(value))
            if words is None:
                self.complete = False
                return str(value)
            return words
        if isinstance(value, bool) or value is None:
            return str(value)
        if isinstance(value, str) and value in INTERNAL_WORDS:
            return L.gettext(INTERNAL_WORDS[value])
        if isinstance(value, int | float):
            return number(L, value, format_spec)
        return format(value, format_spec)

    def field(self, value: Field) -> str:
        L = self.L
        words = field_words(L, value.name)
        if value.value is None or value.value is True:
            return words
        if value.value is False:
            return L.gettext("%(field)s: off", field=words)
        shown = value.value
        if isinstance(shown, StrEnum):  # a choice, said in the page's language ('temps')
            shown = self.format_field(shown, "")
        return L.gettext("%(field)s: %(value)s", field=words, value=shown)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "r" and isinstance(value, str):
            return L_QUOTES.get(self.L.lang, "'{}'").format(value)
        return super().convert_field(value, conversion)


L_QUOTES = {"en": "'{}'", "fr": "« {} »"}

#: the engine's internal names that a message may carry as a plain word (a speed's precision
#: is the peak it is measured against: "mma_sync_int8" is the int8 rate of llama.cpp's MMQ
#: kernels, estimate/speed/hardware.py), and the page's words for them
INTERNAL_WORDS = {"mma_sync_int8": N_("int8 on the tensor cores (llama.cpp’s quantized "
                                      "kernels)"),
                  # a model's family (ModelSpec.family), said in the task error
                  "decoder": N_("text (decoder)")}


_HUGE = 10**21  # from here an integer is said by its digits' count, not digit by digit
_DIGITS = {"en": "{n} digits", "fr": "{n} chiffres"}


def _huge(L: Locale, value: int) -> str:
    """An integer too long to write out: its first and last digits and how many there are
    ('999…999 (400 digits)')."""
    text = str(abs(value))
    count = _DIGITS.get(L.lang, _DIGITS["en"]).format(n=L.number(len(text)))
    return f"{'-' if value < 0 else ''}{text[:3]}…{text[-3:]} ({count})"


def number(L: Locale, value: float, spec: str) -> str:
    """A number the way ``format(value, spec)`` writes it in English, in the page's locale:
    the same decimals, grouping, sign and percent."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _HUGE:
        return _huge(L, value)  # no float holds it (a 400-digit value someone typed)
    if not math.isfinite(value):
        return L.number(value)
    kind = spec[-1] if spec and spec[-1] in "fFeEgGd%n" else ""
    body = spec[:-1] if kind else spec
    sign = "+" if "+" in body and value >= 0 else ""
    precision = None
    if "." in body:
        digits = body.split(".", 1)[1]
        precision = int(digits) if digits.isdigit() else None
    grouped = "," in body or L.lang != "en"
    if kind == "%":
        return sign + L.percent(value, precision or 0)
    if kind in ("g", "G"):
        return sign + L.sig(value, precision or 6)
    if kind in ("e", "E"):
        return sign + L.scientific(value)
    if kind in ("f", "F") or precision is not None:
        text = L.number(value, precision or 0)
    elif isinstance(value, int):
        text = L.number(value) if grouped else str(value)
    else:
        text = L.sig(value, 6)
    return sign + text


Part = tuple[str, str | None, str | None, str | None]


@functools.lru_cache(maxsize=4096)
def _parts(template: str) -> tuple[Part, ...] | None:
    """A template's parts as ``string.Formatter.parse`` reads them, read once (a page says
    ~80 messages, most of them the same few templates); None when a field needs the whole
    Formatter (a positional, dotted or indexed name, a format spec with a field in it) or
    the template is malformed."""
    try:
        parts = tuple(_PARSER.parse(template))
    except ValueError:
        return None
    for _, name, spec, _ in parts:
        if name is not None and (not name.isidentifier() or "{" in (spec or "")):
            return None
    return parts


_PARSER = string.Formatter()


def _fill(f: _Formatter, template: str, params: dict[str, Any]) -> str:
    """``f.vformat(template, (), params)``: for a template of named fields, without
    re-reading it and without the Formatter's recursion (what vformat does for them: each
    field's value by name, converted, then said with its spec)."""
    parts = _parts(template)
    if parts is None:
        return f.vformat(template, (), params)
    out = []
    for literal, name, spec, conversion in parts:
        if literal:
            out.append(literal)
        if name is not None:
            out.append(f.format_field(f.convert_field(params[name], conversion), spec or ""))
    return "".join(out)


def say_text(L: Locale, text: str | None) -> Said:
    """Anything the engine said, in the page's language: a message from the engine catalog,
    a data string from its ``data`` entries; untranslated parts make it incomplete."""
    if not text:
        return Said("")
    if isinstance(text, Message):
        template = translated(L, text.id, text.template)
        complete = template is not None
        f = _Formatter(L)
        try:
            out = _fill(f, template or text.template, dict(text.params))
        except (KeyError, IndexError, ValueError):  # a translation that lost a placeholder
            return Said(str(text), False)
        return Said(out, complete and f.complete)
    words = translated(L, DATA, str(text))
    return Said(words if words is not None else str(text), words is not None)


def say(L: Locale, text: str | None) -> Markup:
    """:func:`say_text` as HTML: what is not in the page's language is marked ``lang="en"``
    (and the message's id is on it, ``data-msg``, for the tests that compare surfaces)."""
    said = say_text(L, text)
    mid = f' data-msg="{escape(text.id)}"' if isinstance(text, Message) else ""
    if not said.complete and L.lang != "en":  # the web's English, never the CLI's flags
        from whichgpu.web.i18n import locale

        return Markup(f'<span lang="en"{mid}>%s</span>') % say_text(locale("en"), text).text
    if mid:
        return Markup(f'<span{mid}>%s</span>') % said.text
    return Markup(escape(said.text))


def said_as(lang: str, text: str | None) -> str:
    """The plain text of a message in ``lang`` (for charts and titles)."""
    from whichgpu.web.i18n import locale

    return say_text(locale(lang), text).text
