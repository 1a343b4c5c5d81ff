"""The parse cache keyed by several files (parse_cache.py): a parse that reads two data files
(a CSV and its JSON metadata) or depends on several modules is parsed again when any one
of them changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from whichgpu.parse_cache import DISABLE_ENV, cache_file, cached_parse


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("WHICHGPU_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(DISABLE_ENV, raising=False)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_change_to_any_data_file_or_parser_module_parses_again(tmp_path):
    rows, meta = _write(tmp_path / "rows.csv", "a,b"), _write(tmp_path / "meta.json", "{}")
    one, two = _write(tmp_path / "one.py", "# v1"), _write(tmp_path / "two.py", "# v1")
    calls: list[int] = []

    def parse() -> list[str]:
        calls.append(1)
        return [rows.read_text(), meta.read_text()]

    def read() -> list[str]:
        return cached_parse("t", [rows, meta], [one, two], parse, list)

    assert read() == ["a,b", "{}"] and read() == ["a,b", "{}"]
    assert len(calls) == 1  # the second read came from the cache
    _write(meta, '{"v": 2}')  # the second data file
    assert read() == ["a,b", '{"v": 2}']
    assert len(calls) == 2
    before = cache_file("t", [rows, meta], [one, two])
    _write(two, "# v2, longer")  # the second parser module
    assert cache_file("t", [rows, meta], [one, two]) != before
    assert read() == ["a,b", '{"v": 2}']
    assert len(calls) == 3


def test_one_file_and_a_list_of_it_are_different_keys_of_the_same_parse(tmp_path):
    data, parser = _write(tmp_path / "d.txt", "x"), _write(tmp_path / "p.py", "# p")
    assert cache_file("t", data, parser) == cache_file("t", [data], [parser])
    assert cache_file("t", [data, parser], parser) != cache_file("t", data, parser)
