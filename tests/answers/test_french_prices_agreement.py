"""The French of 'another {prices} may change the answer' agrees whatever word the field is
rendered as (the web's label 'Prix' is masculine; 'une autre Prix' was wrong)."""

from __future__ import annotations

import pytest

from whichgpu.messages import Field, Some, msg
from whichgpu.web.words import said_as


@pytest.mark.parametrize("message", [
    msg("change.no_offer", "Fits but has no offer in this price list: {gpus} (another "
        "{prices} may change the answer).", gpus=Some(["rtx-4090"], 8), prices=Field("prices")),
    msg("change.fits_unrented", "It fits on {gpus}, which have no offer in this price list: "
        "another {prices} may change the answer.", gpus=Some(["rtx-4090"], 8),
        prices=Field("prices")),
    msg("change.fits_unrented.spot", "It fits on {gpus}, which have no spot offer in this "
        "price list: another {prices} or on-demand (no {spot}) may change the answer.",
        gpus=Some(["rtx-4090"], 8), prices=Field("prices"), spot=Field("spot")),
])
def test_another_prices_agrees_in_french(message):
    fr = said_as("fr", message)
    assert fr != str(message)  # translated
    assert "une autre valeur de" in fr
    # the field's French label, whatever it is, sits after 'valeur de', not after 'une autre'
    assert not any(f"une autre {w}" in fr for w in ("Prix", "prix", "--prices")), fr
