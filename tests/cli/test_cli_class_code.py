"""Dataclass methods compiled once per interpreter (cli/class_code.py, issue 27): a class made
through the kept table is the class Python makes (same methods, same behaviour), what one run
compiles the next run reads back, a damaged or foreign table only costs a compile, the switch
turns it off, and ``main([...])`` in someone else's process leaves ``dataclasses`` alone."""

from __future__ import annotations

import dataclasses
import inspect
import marshal
import os

import pytest

from whichgpu.cli import class_code, main
from whichgpu.parse_cache import DISABLE_ENV

# classes of every kind whichgpu defines: frozen, slots, ordered, keyword-only, defaults and
# factories, a field outside __init__, InitVar and __post_init__, unsafe_hash
SHAPES = '''
from dataclasses import InitVar, dataclass, field

@dataclass(frozen=True)
class Frozen:
    a: int
    b: str = "x"
    c: tuple = field(default_factory=tuple)

@dataclass(order=True, slots=True)
class Ordered:
    a: float
    b: list = field(default_factory=list, compare=False, repr=False)

@dataclass(kw_only=True, unsafe_hash=True)
class KwOnly:
    a: int
    b: int = 2
    total: int = field(init=False, default=0)
    scale: InitVar[int] = 1

    def __post_init__(self, scale):
        self.total = (self.a + self.b) * scale
'''


def _make() -> dict:
    namespace: dict = {"__name__": "shapes"}
    exec(compile(SHAPES, "shapes", "exec", dont_inherit=True), namespace)
    return namespace


def _behaviour(ns: dict) -> list:
    frozen, ordered, kw = ns["Frozen"], ns["Ordered"], ns["KwOnly"]
    f = frozen(1)
    try:
        f.a = 2  # type: ignore[misc]
        refused = False
    except dataclasses.FrozenInstanceError:
        refused = True
    k = kw(a=1, b=3, scale=2)
    return [repr(f), f == frozen(1, "x", ()), hash(f) == hash(frozen(1)), refused,
            repr(ordered(1.5, [1])), ordered(1.0) < ordered(2.0), ordered(1.0, [1]) == ordered(1.0),
            repr(k), k.total, hash(k) == hash(kw(a=1, b=3, scale=2)),
            *[str(inspect.signature(c.__init__)) for c in (frozen, ordered, kw)],
            *[repr(c.__init__.__annotations__) for c in (frozen, ordered, kw)],
            *[sorted(n for n, v in vars(c).items() if callable(v)) for c in (frozen, ordered, kw)]]


@pytest.fixture
def table(tmp_path, monkeypatch):
    """class_code's state for one test, its cache folder under tmp_path, and dataclasses
    compiling through it (undone after)."""
    monkeypatch.setenv("WHICHGPU_HOME", str(tmp_path))
    monkeypatch.delenv(DISABLE_ENV, raising=False)

    def fresh() -> None:
        monkeypatch.setattr(class_code, "_codes", {})
        monkeypatch.setattr(class_code, "_used", set())
        monkeypatch.setattr(class_code, "_state", {"file": None, "new": False,
                                                   "loaded": False, "command": "memory"})

    fresh()
    monkeypatch.setattr(dataclasses, "exec", class_code._exec, raising=False)
    return fresh


def test_classes_made_through_the_table_behave_as_pythons_own(table, monkeypatch):
    monkeypatch.delattr(dataclasses, "exec")
    expected = _behaviour(_make())  # Python's own
    monkeypatch.setattr(dataclasses, "exec", class_code._exec, raising=False)
    assert _behaviour(_make()) == expected  # compiled, kept
    assert class_code._state["new"] and len(class_code._codes) >= 10
    class_code.save()
    table()  # the next run
    assert _behaviour(_make()) == expected  # read back
    assert not class_code._state["new"]  # nothing compiled


def test_the_table_holds_what_python_compiles_for_each_text(table):
    _make()
    class_code.save()
    kept = marshal.loads(class_code.cache_path("memory").read_bytes())
    assert kept.keys() == class_code._codes.keys()
    for key, code in kept.items():
        mode, filename, flags, text = key.split("\0", 3)
        assert (mode, filename, flags) == ("exec", "<string>", "0")
        assert code == compile(text, filename, mode, dont_inherit=True)


def test_a_damaged_or_foreign_table_compiles_and_is_written_again(table):
    where = class_code.cache_path("memory")
    where.parent.mkdir(parents=True)
    where.write_bytes(b"\xe3garbage")
    _make()
    assert class_code._state["new"]
    class_code.save()
    assert len(marshal.loads(where.read_bytes())) >= 10
    table()
    os.chmod(where, 0o666)  # writable by others: not read
    assert class_code._read(where) == {}


def test_one_table_per_command(table):
    assert class_code.command_of(["--debug", "recommend", "8b"]) == "recommend"
    assert class_code.command_of(["recomend"]) == "other"  # a typo names no table of its own
    assert class_code.command_of(["--help"]) == "other"
    assert class_code.cache_path("memory") != class_code.cache_path("recommend")


def test_switched_off_or_in_someone_elses_process_dataclasses_are_untouched(monkeypatch):
    monkeypatch.delattr(dataclasses, "exec", raising=False)
    monkeypatch.setenv(DISABLE_ENV, "1")
    assert class_code.install(["memory"]) is False
    assert "exec" not in vars(dataclasses)
    monkeypatch.delenv(DISABLE_ENV)
    with pytest.raises(SystemExit):
        main(["--help"])
    import collections
    import typing

    assert "exec" not in vars(dataclasses) and "compile" not in vars(typing)
    assert "eval" not in vars(collections)


def test_forward_references_through_the_table_evaluate_as_pythons_own(table, monkeypatch):
    import typing

    texts = ["int | None", "dict[str, list[float]]", "typing.Optional[str]", "tuple[int, ...]"]
    namespace = {"typing": typing}
    expected = [typing.ForwardRef(t)._evaluate(namespace, None, frozenset()) for t in texts]
    monkeypatch.setattr(typing, "compile", class_code._compile, raising=False)
    got = [typing.ForwardRef(t)._evaluate(namespace, None, frozenset()) for t in texts]
    assert got == expected and class_code._state["new"]
    class_code.save()
    table()  # the next run
    monkeypatch.setattr(typing, "compile", class_code._compile, raising=False)
    assert [typing.ForwardRef(t)._evaluate(namespace, None, frozenset()) for t in texts] == \
        expected
    assert not class_code._state["new"]  # read back, nothing compiled
    with pytest.raises(SyntaxError):  # a text that is no expression: refused as before
        typing.ForwardRef("not an expression !")


def test_named_tuples_through_the_table_are_pythons_own(table, monkeypatch):
    import collections

    def make() -> list:
        point = collections.namedtuple("Point", ["x", "y", "z"], defaults=[0])
        p = point(1, y=2)
        return [p, repr(p), p._asdict(), point._make([3, 4, 5]), str(inspect.signature(point))]

    expected = make()
    monkeypatch.setattr(collections, "eval", class_code._eval, raising=False)
    assert make() == expected and class_code._state["new"]
    class_code.save()
    table()
    monkeypatch.setattr(collections, "eval", class_code._eval, raising=False)
    assert make() == expected and not class_code._state["new"]
    assert class_code._eval("  1 + 2") == 3  # leading blanks dropped, as eval drops them


def test_request_annotations_compile_through_the_table_as_in_their_module(table, monkeypatch):
    """answers/request.py compiles each annotation text through parse_cache.compile_text: with
    the program's table it gets the code its own ``compile`` made (its __future__ flags)."""
    from whichgpu import parse_cache
    from whichgpu.answers import request

    texts = ["str | None", "typing.Annotated[int, PydanticField(ge=1)]", "list[str]"]
    monkeypatch.setattr(parse_cache, "compiler", class_code._code_of)
    for text in texts:  # this module has the same __future__ import as answers/request.py
        own = compile(text, "<annotation>", "eval")
        assert parse_cache.compile_text(text, "<annotation>", "eval", request._FLAGS) == own
    assert class_code._state["new"]
    class_code.save()
    table()
    assert [parse_cache.compile_text(t, "<annotation>", "eval", request._FLAGS)
            for t in texts] == [compile(t, "<annotation>", "eval") for t in texts]
    assert not class_code._state["new"]  # read back


def test_an_unwritable_cache_folder_still_compiles_and_keeps_nothing(table, tmp_path,
                                                                    monkeypatch):
    (tmp_path / "blocked").write_text("a file where the home folder would be")
    monkeypatch.setenv("WHICHGPU_HOME", str(tmp_path / "blocked"))
    expected = _behaviour(_make())
    assert class_code._state["new"]
    class_code.save()  # cannot write: no error
    table()
    assert _behaviour(_make()) == expected and class_code._state["new"]  # compiled again
