"""Every message the web app can show, extracted from its templates and Python modules.

``python -m whichgpu.web.messages`` rewrites ``locales/messages.pot`` and adds new messages to
each language's .po file (translations to fill in, marked fuzzy). The tests use
:func:`extract` to check that every message has a French translation.
"""

from __future__ import annotations

import io
from importlib import resources
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "N_": None, "g": None}
METHODS = [("templates/**.html", "jinja2"), ("*.py", "python")]
OPTIONS = {"templates/**.html": {"extensions": "jinja2.ext.i18n", "trim_blocks": "true",
                                 "lstrip_blocks": "true"}}


def web_dir() -> Path:
    return Path(str(resources.files("whichgpu.web")))


def extract() -> Catalog:
    """The template catalog (.pot) of the web app."""
    catalog = Catalog(project="whichgpu", charset="utf-8")
    for filename, lineno, message, comments, context in extract_from_dir(
            str(web_dir()), method_map=METHODS, options_map=OPTIONS, keywords=KEYWORDS,
            strip_comment_tags=True):
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments,
                    context=context)
    return catalog


def po_path(lang: str) -> Path:
    return web_dir() / "locales" / lang / "LC_MESSAGES" / "messages.po"


def update() -> None:
    """Write messages.pot and merge it into each .po (keeping existing translations)."""
    template = extract()
    with open(web_dir() / "locales" / "messages.pot", "wb") as f:
        write_po(f, template, omit_header=False, sort_output=True, no_location=True)
    for lang in ("en", "fr"):
        with open(po_path(lang), "rb") as f:
            catalog = read_po(f, locale=lang)
        catalog.update(template, no_fuzzy_matching=True)
        buf = io.BytesIO()
        write_po(buf, catalog, sort_output=True, no_location=True, ignore_obsolete=True,
                 width=100)
        po_path(lang).write_bytes(buf.getvalue())


if __name__ == "__main__":
    update()
