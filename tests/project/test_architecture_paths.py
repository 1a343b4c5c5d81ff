"""ARCHITECTURE.md is the map for the next engineer: every file and folder it names exists.

A path is any name in backticks, or in the flow diagram, that holds a "/" or ends in a file
extension: ``cli/bind.py``, ``estimate/data/speed_constants.toml``,
``tests/estimate/memory/test_memory_*.py``. It is looked up from the repository root, ``src/``
and ``src/whichgpu/``. A ``*`` must match at least one file, ``<lang>`` stands for any folder,
``{a,b}`` for each of a and b, and ``module.Name`` (``answers/advice.RecommendAnswer``) for a
module that defines ``Name``; a bare file name (``tools.py`` in the agents row) must exist
somewhere under ``src/``; a route (``/mcp``) is not a path.
"""

from __future__ import annotations

import re

from paths import ROOT

BASES = (ROOT, ROOT / "src", ROOT / "src" / "whichgpu")
DOC = ROOT / "ARCHITECTURE.md"
EXTENSIONS = ("py", "toml", "csv", "po", "md", "json", "yaml", "yml", "txt", "sh", "html")
# In the diagram: a run of path characters holding a "/", not a URL path ("/api/v1/...").
_DIAGRAM_PATH = re.compile(r"(?<![\w/.?=-])([A-Za-z_][\w*.-]*(?:/[\w*.<>{},-]*)+)")
NOT_PATHS = {"low/typical/high"}  # words of the diagram, not a path
_FILE = re.compile(r"^[\w*.<>{},/-]+\.(?:" + "|".join(EXTENSIONS) + r")$")


def _names() -> set[str]:
    text = DOC.read_text("utf-8")
    names: set[str] = set()
    for block in re.findall(r"```.*?```", text, flags=re.S):
        names.update(m.group(1) for m in _DIAGRAM_PATH.finditer(block))
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for token in re.findall(r"`([^`\s]+)`", prose):
        if ("/" in token or _FILE.match(token)) and not token.startswith("/"):  # not a route
            names.add(token)
    return {n.rstrip(".,:;") for n in names} - NOT_PATHS


def _expand(name: str) -> list[str]:
    """``{a,b}`` → both; ``<word>`` → ``*``."""
    m = re.search(r"\{([^{}]*)\}", name)
    if m:
        return [x for part in m.group(1).split(",")
                for x in _expand(name[:m.start()] + part + name[m.end():])]
    return [re.sub(r"<[^<>/]*>", "*", name)]


def _exists(pattern: str) -> bool:
    if "/" not in pattern and _FILE.match(pattern):  # a file named in its package's row
        return any(any(base.rglob(pattern)) for base in BASES[1:])
    for base in BASES:
        if "*" in pattern:
            if any(base.glob(pattern.rstrip("/"))):
                return True
        elif (base / pattern).exists():
            return True
    # module.Name: the module defines Name
    head, _, attr = pattern.rpartition(".")
    if head and attr.isidentifier() and attr not in EXTENSIONS:
        for base in BASES:
            module = base / f"{head}.py"
            if module.exists() and re.search(rf"\b(class|def)\s+{attr}\b|^{attr}\s*[:=]",
                                             module.read_text("utf-8"), flags=re.M):
                return True
    return False


def test_the_map_names_paths():
    """The extraction finds the map's paths (so the test below checks something)."""
    names = _names()
    assert {"cli/bind.py", "answers/requests.py", "tests/project/test_layers.py"} <= names
    assert len(names) > 40


def test_every_path_architecture_md_names_exists():
    missing = sorted(name for name in _names()
                     if not all(_exists(p) for p in _expand(name)))
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"
