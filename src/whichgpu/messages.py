"""What the engine says, as structured messages: an id, an English template, typed parameters.

Explanations, suggestions, assumptions, exclusions and warnings are :class:`Message` values.
A message *is* its English text (a ``str``: what the CLI prints and the JSON carries, so
every key keeps its value), and it carries what made it: ``id`` (stable, dotted), the
``template`` (``str.format`` syntax, the same format specs the English text used) and
``params``. Other surfaces never read the English: the web renders ``template`` from its own
catalog (``msgctxt`` = the id, ``msgid`` = the English template) with ``params`` formatted
for the reader's language (web/words.py). Adding a language is adding a catalog.

Parameters are typed, so each surface can say them its own way:

- numbers (``int``, ``float``) with the template's format spec (``{n:,}``, ``{gb:.1f}``,
  ``{share:.0%}``);
- :class:`~whichgpu.units.Money` (spec: decimals, e.g. ``{price:0}``) and
  :class:`~whichgpu.units.Duration` (spec ``short`` for the compact form), which say
  themselves in English (``__format__``);
- :class:`Field`: a request field and (optionally) its value: the CLI says ``--quant fp8``,
  the web its own words for the field;
- nested :class:`Message` values, :class:`Join` and :class:`Some` for lists;
- ``StrEnum`` members (translated as words of their vocabulary), and ``str`` for identifiers
  (GPU ids, formats, file names) said as they are.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any


class Field(str):
    """A request field (and the value it would take), as the CLI writes it: ``--quant`` or
    ``--quant fp8``; a boolean field set to False is its ``--no-`` form.

    ``name`` is the field's name in the request models (``kv_dtype``); the CLI flag is
    derived from it (``--kv-dtype``) unless ``flag`` says otherwise.
    """

    name: str
    value: Any
    flag: str

    def __new__(cls, name: str, value: Any = None, *, flag: str | None = None) -> Field:
        flag = flag or "--" + name.replace("_", "-")
        if value is False:
            text = "--no-" + flag.removeprefix("--")
        elif value is None or value is True:
            text = flag
        else:
            text = f"{flag} {value}"
        self = super().__new__(cls, text)
        self.name, self.value, self.flag = name, value, flag
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_field, (self.name, self.value, self.flag))

    def to_json(self) -> dict[str, Any]:
        return {"field": self.name, "value": _json(self.value), "flag": str(self)}


def _field(name: str, value: Any, flag: str) -> Field:
    return Field(name, value, flag=flag)


class Join:
    """Items said one after the other with ``sep`` ('a, b, c'; with ``last``: 'a, b or c')."""

    __slots__ = ("items", "last", "sep")

    def __init__(self, items: Iterable[Any], sep: str = ", ", last: str | None = None) -> None:
        self.items, self.sep, self.last = tuple(items), sep, last

    def english(self, spec: str = "") -> str:
        texts = [format(i, spec) for i in self.items]
        if self.last is not None and len(texts) > 1:
            return self.sep.join(texts[:-1]) + self.last + texts[-1]
        return self.sep.join(texts)

    def __format__(self, spec: str) -> str:
        """A template's ``{items}`` says the items in English (``str.format`` calls this)."""
        return self.english(spec)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Join) and (self.items, self.sep, self.last) == (
            other.items, other.sep, other.last)

    def __hash__(self) -> int:
        return hash((self.items, self.sep, self.last))

    def __repr__(self) -> str:
        return f"Join({list(self.items)!r}, {self.sep!r})"


class Some(Join):
    """The first ``n`` items and how many more ('a, b, c and 5 more'): never a silent cut."""

    __slots__ = ("n",)

    def __init__(self, items: Iterable[Any], n: int = 4, sep: str = ", ") -> None:
        super().__init__(items, sep)
        self.n = n

    @property
    def shown(self) -> tuple[Any, ...]:
        return self.items[:self.n]

    @property
    def more(self) -> int:
        return max(0, len(self.items) - self.n)

    def english(self, spec: str = "") -> str:
        head = self.sep.join(format(i, spec) for i in self.shown)
        return f"{head} and {self.more} more" if self.more else head


Param = int | float | str | Field | Join | StrEnum | Sequence[Any] | None


class _EnglishFormatter(string.Formatter):
    """``str.format`` with the parameter types said in English, as the CLI always has.

    :func:`_english` gives the same text with the built-in ``str.format_map`` (a ``StrEnum``
    member, a ``Message`` and a ``Field`` format as their text; a ``Join`` formats itself),
    about ten times faster; this formatter is the reference it is checked against
    (tests/test_messages_fast.py) and says what a malformed template raises.
    """

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, Join):
            return value.english(format_spec)
        if isinstance(value, StrEnum | Message | Field):
            return format(str(value), format_spec)
        return format(value, format_spec)


_ENGLISH = _EnglishFormatter()


def _english(template: str, values: dict[str, Any]) -> str:
    """``template`` filled with ``values`` in English, as :data:`_ENGLISH` fills it."""
    try:
        return template.format_map(values)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError):
        return _ENGLISH.vformat(template, (), values)  # raises as the reference does


class Message(str):
    """One thing the engine says: its English text, with its ``id``, ``template`` and
    ``params`` for the surfaces that say it another way."""

    id: str
    template: str
    params: Mapping[str, Any]

    def __new__(cls, id: str, template: str, params: Mapping[str, Any] | None = None,
                ) -> Message:
        values = dict(params or {})
        self = super().__new__(cls, _english(template, values))
        self.id, self.template, self.params = id, template, values
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Message, (self.id, self.template, dict(self.params)))

    def __repr__(self) -> str:
        return f"Message({self.id!r}, {str(self)!r})"

    def to_json(self) -> dict[str, Any]:
        """The message as data: its id, its English text and its parameters."""
        return {"id": self.id, "text": str(self), "params": params_json(self.params)}


def msg(id: str, template: str, /, **params: Any) -> Message:
    """A message: ``msg("memory.context", "context {n:,} tokens", n=8192)``.

    ``id`` names what is said (the same id always has the same template); the web's catalog
    translates the template under that id (message extraction reads these calls).
    """
    # as Message(id, template, params) without copying the fresh keyword dict or calling
    # through the class (an estimate makes a dozen messages; issue 27)
    try:  # _english, inlined
        text = template.format_map(params)
    except (KeyError, IndexError, ValueError, AttributeError, TypeError):
        text = _ENGLISH.vformat(template, (), params)  # raises as the reference does
    self = _STR_NEW(Message, text)
    self.id, self.template, self.params = id, template, params
    return self


_STR_NEW = str.__new__

#: what makes a message: :func:`msg`, or :func:`silent` where nobody reads the words
Say = Callable[..., Message]


def silent(id: str, template: str, /, **params: Any) -> Message:
    """A message nobody reads, with :func:`msg`'s signature and none of its work: the words
    of an estimate asked only for its numbers (a probe: estimate/memory's ``memory_need``)."""
    return SILENT


#: the one message :func:`silent` gives: no text (a probe's words are never shown)
SILENT = Message("silent", "")


class DataText(str):
    """A string from a data file (a catalog note, a format's description), said as a whole:
    the web translates it from its catalog's ``data`` entries, never by parts."""

    __slots__ = ()


def data_text(text: str) -> DataText:
    """Mark a string that comes from a data file (see :class:`DataText`)."""
    return DataText(text)


#: parameter types that are their own JSON value (exact types: a ``str`` subclass such as
#: Message or Field has its own form); most parameters are one of these
_PLAIN = frozenset({int, float, str, bool, type(None)})


def params_json(params: Mapping[str, Any]) -> dict[str, Any]:
    """Message parameters as JSON values."""
    plain = _PLAIN
    return {k: v if type(v) in plain else _json(v) for k, v in params.items()}


def _json(value: Any) -> Any:
    if type(value) in _PLAIN:
        return value
    if hasattr(value, "to_json"):  # Message, Field, Money, Duration, Placement
        return value.to_json()
    if isinstance(value, Join):
        return [_json(i) for i in value.items]
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, list | tuple):
        return [_json(i) for i in value]
    return value


def english(template: str, params: Mapping[str, Any]) -> str:
    """``template`` filled with ``params`` in English (what :class:`Message` does)."""
    return _english(template, dict(params))


def fields_of(template: str) -> list[tuple[str, str, str | None]]:
    """The placeholders of a template: (name, format spec, conversion), in order."""
    return [(name, spec or "", conv) for _, name, spec, conv in string.Formatter().parse(
        template) if name is not None]
