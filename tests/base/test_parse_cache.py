"""The parse cache of data files (parse_cache.py): a second read comes from the cache
and equals a parse; a changed data file or parser, a damaged cache file, or the switch off
all parse again."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from whichgpu import parse_cache
from whichgpu.catalog.gpus import Catalog, default_catalog, load_catalog
from whichgpu.parse_cache import DISABLE_ENV, cache_file, cached_parse


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("WHICHGPU_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    return tmp_path


def _files(tmp_path: Path) -> tuple[Path, Path]:
    data, parser = tmp_path / "data.txt", tmp_path / "parser.py"
    data.write_text("a,b,c")
    parser.write_text("# parser v1")
    return data, parser


def _counting(data: Path):
    calls = []

    def parse() -> list[str]:
        calls.append(1)
        return data.read_text().split(",")

    return parse, calls


def test_second_read_is_cached_and_a_changed_file_is_parsed_again(tmp_path):
    data, parser = _files(tmp_path)
    parse, calls = _counting(data)
    assert cached_parse("t", data, parser, parse, list) == ["a", "b", "c"]
    assert cached_parse("t", data, parser, parse, list) == ["a", "b", "c"]
    assert len(calls) == 1
    data.write_text("a,b,c,d")  # a different size
    assert cached_parse("t", data, parser, parse, list) == ["a", "b", "c", "d"]
    assert len(calls) == 2
    data.write_text("x,y,z,w")  # the same size, a later modification time
    st = data.stat()
    os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert cached_parse("t", data, parser, parse, list) == ["x", "y", "z", "w"]
    assert len(calls) == 3


def test_a_changed_parser_is_a_new_key(tmp_path):
    data, parser = _files(tmp_path)
    before = cache_file("t", data, parser)
    parser.write_text("# parser v2, longer")
    assert cache_file("t", data, parser) != before


def test_damaged_or_foreign_cache_files_parse_again(tmp_path):
    data, parser = _files(tmp_path)
    parse, calls = _counting(data)
    where = cache_file("t", data, parser)
    where.parent.mkdir(parents=True)
    where.write_bytes(b"\x80\x05truncated")
    assert cached_parse("t", data, parser, parse, list) == ["a", "b", "c"]
    where.write_bytes(pickle.dumps({"not": "a list"}))
    assert cached_parse("t", data, parser, parse, list) == ["a", "b", "c"]
    assert len(calls) == 2
    assert pickle.loads(where.read_bytes()) == ["a", "b", "c"]  # rewritten whole


def test_switched_off_parses_each_time(tmp_path, monkeypatch):
    data, parser = _files(tmp_path)
    parse, calls = _counting(data)
    monkeypatch.setenv(DISABLE_ENV, "1")
    cached_parse("t", data, parser, parse, list)
    cached_parse("t", data, parser, parse, list)
    assert len(calls) == 2
    assert not cache_file("t", data, parser).exists()


def test_an_unwritable_cache_folder_still_answers(tmp_path, monkeypatch):
    data, parser = _files(tmp_path)
    (tmp_path / "blocked").write_text("a file where the folder would be")
    monkeypatch.setenv("WHICHGPU_HOME", str(tmp_path / "blocked"))
    parse, calls = _counting(data)
    assert cached_parse("t", data, parser, parse, list) == ["a", "b", "c"]
    assert cached_parse("t", data, parser, parse, list) == ["a", "b", "c"]
    assert len(calls) == 2  # nothing could be kept: parsed each time


def test_the_shipped_catalog_from_the_cache_equals_a_parse(monkeypatch):
    default_catalog.cache_clear()
    try:
        first = default_catalog()  # parsed, then written
        default_catalog.cache_clear()
        parsed = []
        monkeypatch.setattr(parse_cache, "pickle", _Spy(parsed))
        second = default_catalog()  # read back
    finally:
        default_catalog.cache_clear()
    assert parsed == ["load"]
    assert isinstance(second, Catalog) and second == first == load_catalog()
    assert second.get("h100-sxm").memory_bytes == load_catalog().get("h100-sxm").memory_bytes


class _Spy:
    """pickle, noting each load (the proof the second read came from the cache)."""

    HIGHEST_PROTOCOL = pickle.HIGHEST_PROTOCOL
    PicklingError = pickle.PicklingError

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def load(self, f):
        self.seen.append("load")
        return pickle.load(f)

    def dumps(self, value, protocol=None):
        return pickle.dumps(value, protocol=protocol)


def test_the_preset_index_from_the_cache_equals_a_parse():
    import tomllib

    from whichgpu.models import preset_index

    preset_index._index_data.cache_clear()
    try:
        first = preset_index._index_data()  # parsed, then written
        preset_index._index_data.cache_clear()
        second = preset_index._index_data()  # read back
    finally:
        preset_index._index_data.cache_clear()
    text = preset_index._root().joinpath("index.toml").read_text("utf-8")
    assert first == second == tomllib.loads(text)
    assert any(p.name.startswith("presets-index-")
               for p in (Path(os.environ["WHICHGPU_HOME"]) / "cache" / "parsed").iterdir())


def test_a_cache_file_others_may_write_is_not_read(tmp_path):
    """A pickle runs code when loaded: one that another user could have written is ignored
    (parsed again, and rewritten as the user's own)."""
    data, parser = _files(tmp_path)
    parse, calls = _counting(data)
    cached_parse("t", data, parser, parse, list)
    where = cache_file("t", data, parser)
    where.write_bytes(pickle.dumps(["planted"]))
    where.chmod(0o666)
    assert cached_parse("t", data, parser, parse, list) == ["a", "b", "c"]
    assert len(calls) == 2
    assert where.stat().st_mode & 0o777 == 0o600  # rewritten as the user's alone
