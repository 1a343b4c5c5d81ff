"""The Python in the README and the docs runs and type-checks (issue 35, item 3): every
```python block of README.md and docs/*.md is run (in a temporary folder, offline, on a fresh
price store) and checked by mypy with the project's settings. A block that is only a
signature (``def name(...) -> Type`` with no body, as docs/prices.md documents one) is
type-checked as nothing and skipped."""

from __future__ import annotations

import re

import pytest

from paths import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)


def _blocks() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for i, code in enumerate(_BLOCK.findall(page.read_text("utf-8")), 1):
            found.append((f"{page.relative_to(ROOT).as_posix()}#{i}", code))
    return found


def _signature_only(code: str) -> bool:
    return code.lstrip().startswith("def ") and not code.rstrip().endswith(":") \
        and "\n    " not in code.split(")")[-1]


BLOCKS = [(name, code) for name, code in _blocks() if not _signature_only(code)]


def test_the_docs_have_python_to_check():
    names = [name for name, _ in BLOCKS]
    assert any(n.startswith("README.md#") for n in names), names
    assert len(names) >= 3, names


@pytest.mark.parametrize("name,code", BLOCKS, ids=[name for name, _ in BLOCKS])
def test_the_block_runs(name, code, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, name, "exec"), {"__name__": "__docs__"})


@pytest.mark.slow(reason="mypy over the docs' snippets (seconds with make test's mypy cache)")
def test_the_blocks_type_check(tmp_path):
    from mypy import api

    files = []
    for i, (_name, code) in enumerate(BLOCKS):
        path = tmp_path / f"block_{i}.py"
        path.write_text(code, encoding="utf-8")
        files.append(str(path))
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                "--cache-dir", str(ROOT / ".mypy_cache"), *files])
    named = out
    for i, (name, _) in enumerate(BLOCKS):
        named = named.replace(str(tmp_path / f"block_{i}.py"), name)
    assert status == 0, named + err
