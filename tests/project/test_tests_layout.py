"""The tests are a map of the source (issue 35, item 3): every test file sits in the folder of
what it checks (tests/layout.py), never at the top of tests/, and every folder is a source
package (or module) or one of the two named folders (base: whichgpu's top-level modules;
project: rules over the whole repository)."""

from __future__ import annotations

import layout
from paths import ROOT, TESTS

SRC = ROOT / "src" / "whichgpu"
OWN = {"base", "project"}
NOT_TESTS = {"data", "__pycache__"}


def _mirrors(folder: str) -> bool:
    """A folder of its own, or one named for a source package or module (``estimate/validation``
    for the ``estimate/validation*.py`` family)."""
    path = SRC / folder
    return folder.split("/")[0] in OWN or path.is_dir() or path.with_suffix(".py").is_file()


def _folders() -> list[str]:
    return sorted(p.parent.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py")
                  if not NOT_TESTS & set(p.relative_to(TESTS).parts))


def test_no_test_file_at_the_top():
    top = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert not top, f"place these with `python tests/layout.py`: {top}"


def test_every_folder_mirrors_a_source_package():
    folders = set(_folders())
    assert len(folders) >= 10  # the files were found
    strays = {f for f in folders if not _mirrors(f)}
    assert not strays, f"test folders with no package under src/whichgpu/: {sorted(strays)}"


def test_the_rules_place_files_in_folders_that_exist():
    for prefix, folder in layout.RULES:
        assert _mirrors(folder), (prefix, folder)
    assert layout.folder_for("test_web_new_page.py") == "web"
    assert layout.folder_for("test_prices_new_source.py") == "catalog/prices"
    assert layout.folder_for("test_prices_web_cache_more.py") == "web"  # the longer prefix first
    assert layout.folder_for("test_something_new.py") is None


def test_test_file_names_are_unique():
    """Test files are imported by their bare name (no __init__.py): two files of one name in
    two folders would clash."""
    names = [p.name for p in TESTS.rglob("test_*.py") if "data" not in p.parts]
    assert len(names) == len(set(names))
