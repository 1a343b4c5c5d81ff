"""Every message the web app can show, extracted from the code: its templates and modules (the
``messages`` catalog) and what the engine says (the ``engine`` catalog).

``python -m whichgpu.web.messages`` (``make i18n``) rewrites ``locales/messages.pot`` and
``locales/engine.pot`` and adds new entries to each language's .po files (translations to
fill in). The engine catalog holds, with ``msgctxt`` = the message id and ``msgid`` = its
English template, every ``msg(...)`` call of the package, the words of the vocabularies
(``vocabulary.<Enum>``: the members' values) and the strings of the data files the pages show
whole (``data``). The tests use :func:`extract` and :func:`extract_engine` to check that
every message has a translation with the same placeholders.
"""

from __future__ import annotations

import io
import tomllib
from collections.abc import Iterator
from enum import StrEnum
from importlib import resources
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

from whichgpu import vocabulary

KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None, "g": None}
METHODS = [("templates/**.html", "jinja2"), ("*.py", "python")]
OPTIONS = {"templates/**.html": {"extensions": "jinja2.ext.i18n", "trim_blocks": "true",
                                 "lstrip_blocks": "true"}}
ENGINE_KEYWORDS = {"msg": ((1, "c"), 2), "say": ((1, "c"), 2), "Text": ((1, "c"), 2)}
LANGS = ("en", "fr")
#: the vocabularies whose words a message may carry as parameters
VOCABULARIES: tuple[type[StrEnum], ...] = (
    vocabulary.Task, vocabulary.Bound, vocabulary.Confidence, vocabulary.FitVerdict,
    vocabulary.Decision, vocabulary.ExclusionKind, vocabulary.Objective,
    vocabulary.OffloadMode, vocabulary.Loss, vocabulary.SuggestionKind, vocabulary.Ranking,
    vocabulary.Engine)


def web_dir() -> Path:
    return Path(str(resources.files("whichgpu.web")))


def package_dir() -> Path:
    return Path(vocabulary.__file__).parent


def extract() -> Catalog:
    """The template catalog (.pot) of the web app's own words."""
    catalog = Catalog(project="whichgpu", charset="utf-8")
    web = web_dir()
    for filename, lineno, message, comments, context in extract_from_dir(
            str(web), method_map=METHODS, options_map=OPTIONS, keywords=KEYWORDS,
            strip_comment_tags=True):
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments,
                    context=context)
    # the request models' words for their fields (labels and hints, marked N_)
    for filename, lineno, message, comments, context in extract_from_dir(
            str(package_dir() / "answers"), method_map=[("*.py", "python")],
            keywords={"N_": None}, strip_comment_tags=True):
        catalog.add(message, None, [(f"answers/{filename}", lineno)], auto_comments=comments,
                    context=context)
    return catalog


def data_strings() -> Iterator[tuple[str, str]]:
    """(where, text) for each string of the data files that a sentence says whole
    (``messages.data_text``): the platforms' names and notes, what to use instead, a card's
    engine note, the research notes beside each catalog figure (the GPU pages show them under
    the values), the precisions' meanings, the weight formats' descriptions, the memory
    constants' notes, the training frameworks' titles and why an engine is not modelled."""
    from whichgpu.catalog.gpus import PRECISIONS

    def toml(package: str, name: str) -> dict:
        return tomllib.loads(resources.files(package).joinpath(name).read_text("utf-8"))

    gpus = toml("whichgpu.catalog", "data/gpus.toml")
    for key, platform in gpus.get("platforms", {}).items():
        for field in ("name", "instead", "note"):
            if isinstance(platform.get(field), str):
                yield f"gpus.toml:platforms.{key}.{field}", platform[field]
    for i, gpu in enumerate(gpus.get("gpu", [])):
        note = (gpu.get("engines") or {}).get("note")
        if isinstance(note, str):
            yield f"gpus.toml:gpu[{i}].engines.note", note
    for i, gpu in enumerate(gpus.get("gpu", [])):
        for where, note in _figure_notes(gpu, f"gpus.toml:gpu[{i}]"):
            yield where, note
    for key, (meaning, _acc) in PRECISIONS.items():
        yield f"precision:{key}", meaning
    for row in toml("whichgpu.models", "data/quant_formats.toml").get("format", []):
        yield f"quant_formats.toml:{row['name']}", row["description"]
    for name, row in toml("whichgpu.estimate", "data/memory_constants.toml").get(
            "constant", {}).items():
        if isinstance(row.get("note"), str):
            yield f"memory_constants.toml:{name}", row["note"]
    for name, row in toml("whichgpu.estimate", "data/training_frameworks.toml").get(
            "framework", {}).items():
        if isinstance(row.get("title"), str):
            yield f"training_frameworks.toml:{name}", row["title"]
    for name, row in toml("whichgpu", "data/engines_not_modelled.toml").items():
        yield f"engines_not_modelled.toml:{name}", row["why"]


#: a card's notes that are not beside a figure: its engine note (above) and why it has no
#: purchase price (said by the command line and the JSON, not by the GPU pages)
_NOT_FIGURE_NOTES = ("engines", "no_public_price")


def _figure_notes(value: object, where: str) -> Iterator[tuple[str, str]]:
    """(where, note) for every ``note`` beside a figure of one catalog card: its specs, its
    purchase price, its interconnect and its throughput per precision."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "note" and isinstance(item, str):
                yield where, item
            elif key not in _NOT_FIGURE_NOTES:
                yield from _figure_notes(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _figure_notes(item, f"{where}[{i}]")


def extract_engine() -> Catalog:
    """The engine catalog (.pot): msg() calls, vocabulary words and data strings."""
    catalog = Catalog(project="whichgpu-engine", charset="utf-8")
    root = package_dir()
    for filename, lineno, message, comments, context in extract_from_dir(
            str(root), method_map=[("**.py", "python")], keywords=ENGINE_KEYWORDS,
            strip_comment_tags=True):
        if context is None:
            continue  # a msg() call without a literal id is not a message
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments,
                    context=context)
    for kind in VOCABULARIES:
        for member in kind:
            catalog.add(member.value, None, [(f"vocabulary.py:{kind.__name__}", 0)],
                        context=f"vocabulary.{kind.__name__}")
    for where, text in data_strings():
        catalog.add(text, None, [(where, 0)], context="data")
    return catalog


def po_path(lang: str, domain: str = "messages") -> Path:
    return web_dir() / "locales" / lang / "LC_MESSAGES" / f"{domain}.po"


def _merge(template: Catalog, domain: str) -> None:
    with open(web_dir() / "locales" / f"{domain}.pot", "wb") as f:
        write_po(f, template, omit_header=False, sort_output=True, no_location=True)
    for lang in LANGS:
        path = po_path(lang, domain)
        if path.exists():
            with open(path, "rb") as f:
                catalog = read_po(f, locale=lang)
        else:
            catalog = Catalog(locale=lang, project=template.project, charset="utf-8")
        catalog.update(template, no_fuzzy_matching=True)
        buf = io.BytesIO()
        write_po(buf, catalog, sort_output=True, no_location=True, ignore_obsolete=True,
                 width=100)
        path.write_bytes(buf.getvalue())


def update() -> None:
    """Write messages.pot and engine.pot and merge them into each .po (keeping existing
    translations)."""
    _merge(extract(), "messages")
    _merge(extract_engine(), "engine")


if __name__ == "__main__":
    update()
