"""Shipped TOML tables through the parse cache (parse_cache.cached_toml, issue 27): what the
cache gives back equals tomllib's parse of the file, the second read comes from the cache,
and a file that is not TOML fails as tomllib fails."""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from whichgpu.parse_cache import DISABLE_ENV, cached_toml

#: the tables a recommendation reads (each loader calls cached_toml)
TABLES = [("whichgpu", "data/engines.toml"), ("whichgpu", "data/engines_not_modelled.toml"),
          ("whichgpu", "data/exchange_rates.toml"), ("whichgpu.models", "data/quant_formats.toml"),
          ("whichgpu.models", "data/ggml_types.toml"), ("whichgpu.models", "data/pipelines.toml"),
          ("whichgpu.estimate", "data/engine_kernels.toml"),
          ("whichgpu.estimate", "data/host_memory.toml"), ("whichgpu.cost", "data/spot.toml"),
          ("whichgpu.cost", "data/capacity.toml")]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("WHICHGPU_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(DISABLE_ENV, raising=False)


@pytest.mark.parametrize(("package", "name"), TABLES)
def test_a_table_from_the_cache_equals_tomllibs_parse(package, name, monkeypatch):
    parsed = tomllib.loads(resources.files(package).joinpath(name).read_text("utf-8"))
    assert parsed and cached_toml(package, name) == parsed  # parsed, then kept
    monkeypatch.setattr(tomllib, "loads", _no_parse)
    assert cached_toml(package, name) == parsed  # read back, not parsed


def test_a_file_that_is_not_toml_raises_tomllibs_error(tmp_path, monkeypatch):
    bad = tmp_path / "bad.toml"
    bad.write_text("this = is = not toml")
    monkeypatch.setattr(resources, "files", lambda package: tmp_path)
    with pytest.raises(tomllib.TOMLDecodeError):
        cached_toml("whatever", "bad.toml")
    with pytest.raises(tomllib.TOMLDecodeError):  # nothing kept: it fails again
        cached_toml("whatever", "bad.toml")


def _no_parse(*args, **kwargs):
    raise AssertionError("parsed again instead of read from the cache")
