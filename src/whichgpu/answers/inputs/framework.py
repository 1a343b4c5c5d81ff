"""A training framework as people type it (``Unsloth``, `` peft``), read once in the answer
layer (issue 35); the engine takes the profile name (estimate/frameworks.py)."""

from __future__ import annotations

from whichgpu.estimate.frameworks import Framework, framework_id


def parse_framework(text: str) -> Framework:
    """The profile name for ``text`` or one of its aliases, case and spaces aside; an unknown
    name is an input error naming the closest ones."""
    return framework_id(text.strip().lower(), said=text)
