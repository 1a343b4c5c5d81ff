"""Issue 26: spot risk on separate machines. Independent shares (images, batch tokens, daily
replicas) on M separate machines: an interruption stops only the machine it hits, so each
machine meets the provider's rate on its own (one instance), not M times it, and the expected
cost is M times one machine's. GPUs that work together (training) still stop together."""

from __future__ import annotations

import pytest

from whichgpu.cost.spot import spot_assumption

IMAGES = ("recommend", "flux.1-dev", "--task", "image", "--images", "1000", "--spot", "--json",
          "--top", "0")


def _separate_spot(data: dict) -> list[dict]:
    return [o for o in data["options"] if o["offer"]["spot"] and o["machines"] > 1
            and o["spread"] == "separate machines" and o.get("spot_risk")]


def test_each_separate_machine_meets_the_interruption_rate_alone(cli):
    options = _separate_spot(cli(*IMAGES).json())
    assert options
    for o in options:
        risk = o["spot_risk"]
        assert risk["instances"] == 1  # was: the machine count, each interruption stopping all
        rate = spot_assumption(o["offer"]["provider"]).interruptions_per_hour.typical
        hours = o["time_s"]["typical"] / 3600
        # a short item loses little: about one machine's rate x its time, not M times it
        assert risk["interruptions"]["typical"] == pytest.approx(rate * hours, rel=0.15)
        said = " ".join(risk["assumptions"])
        assert f"{o['machines']} separate machines run independent shares" in said
        assert "must all run" not in said


def test_the_uninterrupted_cost_is_every_machine_for_the_wall_time(cli):
    for o in _separate_spot(cli(*IMAGES).json()):
        risk = o["spot_risk"]
        assert risk["uninterrupted_cost"] == o["cost"]  # M machines for the wall time
        assert risk["uninterrupted_time_s"] == o["time_s"]  # each machine's time, not M x
        assert risk["expected_cost"]["typical"]["amount"] >= o["cost"]["typical"]["amount"]


def test_linked_training_still_stops_as_one(cli):
    data = cli("recommend", "llama-3.1-70b", "--task", "full-ft", "--train-tokens", "50M",
               "--spot", "--json", "--top", "0").json()
    linked = [o for o in data["options"] if o["offer"]["spot"] and o.get("spot_risk")
              and o["machines"] > 1]
    assert linked  # clusters of 8-GPU servers
    for o in linked:
        assert o["spread"] != "separate machines"
        assert o["spot_risk"]["instances"] == o["machines"]
