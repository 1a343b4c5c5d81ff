"""What Python's JSON parser says about a broken paste, in words each page translates.

``json.JSONDecodeError.msg`` is one of a few fixed English phrases (CPython's
``json/decoder.py`` and ``_json.c``); a French page showed them in English inside its own
sentence. Each known phrase is a message here; an unknown one is said as it came.
"""

from __future__ import annotations

from whichgpu.answers.fields import Text
from whichgpu.messages import Message

_TRAILING = Text("web.json.trailing_comma", "a comma just before the closing bracket")
_WHY = {
    "Expecting value": Text("web.json.value", "a value is expected here"),
    "Expecting property name enclosed in double quotes": Text(
        "web.json.name", "a property name in double quotes is expected here"),
    "Expecting ':' delimiter": Text("web.json.colon", "a colon (:) is expected here"),
    "Expecting ',' delimiter": Text("web.json.comma", "a comma (,) is expected here"),
    "Unterminated string starting at": Text("web.json.unterminated",
                                            "a string starts here and is never closed"),
    "Invalid control character at": Text("web.json.control", "a tab or line break inside a "
                                         "string (write it as \\t or \\n)"),
    "Invalid \\escape": Text("web.json.escape", "a backslash that starts no valid escape"),
    "Invalid \\uXXXX escape": Text("web.json.unicode", "a \\u escape without four hex digits"),
    "Extra data": Text("web.json.extra", "more text after the end of the JSON object"),
    "Illegal trailing comma before end of object": _TRAILING,
    "Illegal trailing comma before end of array": _TRAILING,
}


def json_reason(why: str) -> Message | str:
    """The parser's phrase as a message the page translates (unknown phrases as they are)."""
    text = _WHY.get(why)
    return text() if text else why
