"""Where things are, for test files at any depth under tests/ (tests/layout.py): the
repository's root, tests/ itself and the recorded inputs under tests/data/."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DATA = TESTS / "data"
