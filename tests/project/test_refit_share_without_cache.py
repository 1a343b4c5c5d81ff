"""Without pytest's cache (-p no:cacheprovider) the speed refits of one process still share
their memo file (tests/refit_cache.py): every shared_row_estimates block names the same file,
in a folder of the process's own outside the checkout, and the variable is put back after."""

from __future__ import annotations

import os

import refit_cache
from paths import ROOT


class _NoCache:
    pass


def test_every_block_of_the_process_names_one_file_outside_the_checkout(monkeypatch):
    monkeypatch.delenv("WHICHGPU_SPEED_ROW_MEMO", raising=False)
    named = []
    for _ in range(2):
        with refit_cache.shared_row_estimates(_NoCache()):  # type: ignore[arg-type]
            named.append(os.environ["WHICHGPU_SPEED_ROW_MEMO"])
    assert "WHICHGPU_SPEED_ROW_MEMO" not in os.environ
    assert named[0] == named[1]
    assert ROOT not in (refit_cache._process_folder(), *refit_cache._process_folder().parents)
    with refit_cache.shared_serving_loso(_NoCache()):  # type: ignore[arg-type]
        serving = os.environ["WHICHGPU_SERVING_LOSO_MEMO"]
    assert os.path.dirname(serving) == os.path.dirname(named[0]) and serving != named[0]
