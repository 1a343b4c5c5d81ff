"""Running the CLI many times in one process (the tests, the fuzzers, anything that calls
``whichgpu.cli.main``) registers each command once: a module-level sub-app that took its
commands again on every run made each run slower than the last (``prices``: 0.7 s a call
after a few dozen calls, 2.3 s after a hundred)."""

from __future__ import annotations


def test_sub_apps_keep_one_copy_of_each_command_over_repeated_runs(cli):
    from whichgpu.cli import bench_cmds, estimate_cmds, prices_cmds

    for _ in range(3):
        assert cli("prices", "sources", "--json").code == 0
        assert cli("validate", "memory", "--help").code == 0
        assert cli("bench", "--help").code == 0
    for sub in (prices_cmds.prices_app, prices_cmds.sources_app, estimate_cmds.validate_app,
                bench_cmds.bench_app):
        names = [c.name or c.callback.__name__ for c in sub.registered_commands]
        assert names and len(names) == len(set(names)), names
    assert len(prices_cmds.prices_app.registered_groups) == 1
