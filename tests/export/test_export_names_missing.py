"""A GPU the launcher has no name for is refused with the table's sentence, never a KeyError
(the RTX PRO 5000 Blackwell: SkyPilot lists it on RunPod, gpuhunt does not know it)."""

from __future__ import annotations

import pytest

from whichgpu.errors import InputError
from whichgpu.export.names import dstack_gpu, skypilot_accelerator


def test_a_gpu_skypilot_names_but_dstack_does_not():
    assert skypilot_accelerator("rtx-pro-5000", "runpod") == "RTXPRO5000"
    with pytest.raises(InputError, match="dstack has no name for GPU rtx-pro-5000"):
        dstack_gpu("rtx-pro-5000")
