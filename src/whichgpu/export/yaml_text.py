"""YAML text for a task: PyYAML's safe dumper, multi-line commands as literal blocks."""

from __future__ import annotations

from typing import Any


def dump(data: dict[str, Any]) -> str:
    """``data`` as YAML, in the order given, shell scripts as ``|`` blocks."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False)
