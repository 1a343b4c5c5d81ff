"""The ring-attention degree over REST: the layout it names, and a degree that does not divide
the GPUs answered 422 with the engine's reason."""

from __future__ import annotations


def test_rest_speed_takes_a_ring_degree_and_refuses_one_that_does_not_divide(web) -> None:
    base = "/api/v1/speed?model=flux.1-dev&gpu=h100-sxm&count=4&engine=sglang"
    ok = web.get(base + "&ring_degree=2")
    assert ok.status_code == 200
    assert "ring=2" in ok.text
    bad = web.get(base + "&ring_degree=3")
    assert bad.status_code == 422
    assert "ring-attention degree of 3 must divide the 4 GPUs" in bad.text
