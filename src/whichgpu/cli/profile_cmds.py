"""``whichgpu profile``: save, list and remove descriptions of your own machine."""

from __future__ import annotations

import typer

from whichgpu.answers import requests as req
from whichgpu.cli.bind import bind
from whichgpu.cli.common import console, emit_json


def register(app: typer.Typer) -> None:
    profile_app = typer.Typer(help="Your machine, described once: 'whichgpu profile save home "
                              "--gpu rtx-4070 --host-ram 64GB', then '--profile home' on any "
                              "command.", no_args_is_help=True)
    bind(profile_app, req.ProfileSave, save)
    bind(profile_app, req.ProfileList, list_profiles, name="list")
    bind(profile_app, req.ProfileRemove, remove)
    app.add_typer(profile_app, name="profile")


def save(q: req.ProfileSave) -> None:
    from whichgpu.answers import profiles
    from whichgpu.cli.common import note

    values = q.model_dump(include=set(profiles.KEYS))
    if q.detect:  # this machine, where the command line says nothing
        found, said = profiles.detected()
        for line in said:
            note(line)
        values = {**found, **{k: v for k, v in values.items() if v not in (None, "")}}
        if values.get("gpu") != found.get("gpu") and q.count is None:
            values.pop("count", None)  # another card named: the count found is not its count
    kept = profiles.save(q.name, values, q.default)
    shown = ", ".join(f"{k}={v}" for k, v in kept.items())
    console.print(f"Saved profile {q.name}{' (the default)' if q.default else ''}: {shown}. "
                  f"Use it with --profile {q.name}.", markup=False)


def list_profiles(q: req.ProfileList) -> None:
    from rich.table import Table

    from whichgpu.answers import profiles

    data = profiles.load()
    if q.as_json:
        emit_json(data)
        return
    if not data["profiles"]:
        console.print("No profile saved: 'whichgpu profile save NAME --gpu ... --host-ram ...' "
                      "saves one.", markup=False)
        return
    t = Table(title=f"Profiles ({profiles.path()})", title_justify="left", pad_edge=False)
    t.add_column("Name")
    t.add_column("Default")
    for key in profiles.KEYS:
        t.add_column(key.replace("_", " "))
    for name, values in sorted(data["profiles"].items()):
        t.add_row(name, "yes" if data.get("default") == name else "",
                  *(str(values.get(k, "")) for k in profiles.KEYS))
    console.print(t)


def remove(q: req.ProfileRemove) -> None:
    from whichgpu.answers import profiles

    profiles.remove(q.name)
    console.print(f"Removed profile {q.name}.", markup=False)
