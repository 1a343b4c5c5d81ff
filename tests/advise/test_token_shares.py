"""Issue 26: batch token jobs split over separate machines. The prompts of a batch are
independent, so N GPUs may run as N/k separate machines of k GPUs (k: the fewest that hold the
model), each with its share of the tokens; such an option takes the place of N GPUs working
together (tensor parallel in one machine) where it ranks better, is priced as those machines
(each one past the first also boots and loads the weights), and exports as that many runs."""

from __future__ import annotations

import pytest
import yaml

Q = ("recommend", "llama-3.1-8b", "--tokens", "10M")


@pytest.fixture(scope="module")
def answer():
    from whichgpu.answers import recommend
    from whichgpu.answers.requests import Recommend

    return recommend(Recommend(model="llama-3.1-8b", tokens="10M", top=0)).to_json()


def _shares(data: dict) -> list[dict]:
    return [o for o in data["options"] if o["replicas"] > 1]


def test_shares_are_separate_machines_of_the_fewest_gpus_that_hold_the_model(answer):
    shares = _shares(answer)
    assert shares
    for o in shares:
        assert o["spread"] == "separate machines" and o["machines"] == o["replicas"]
        k = o["gpus_per_replica"]
        assert o["gpus_per_machine"] == k == o["offer"]["gpu_count"]
        assert k == min(p["count"] for p in answer["options"] if p["gpu"] == o["gpu"])
        assert o["machines"] * k == o["count"]
        assert f"{o['machines']} separate machines of {k} GPU" in o["shape"]
        assert any("independent shares" in n for n in o["notes"])


def test_a_share_takes_its_part_of_the_time_and_pays_each_machines_setup(answer):
    by = {(o["gpu"], o["count"], o["replicas"]): o for o in answer["options"]}
    checked = 0
    for o in _shares(answer):
        one = by.get((o["gpu"], 1, 1))
        if one is None or one["offer"]["provider"] != o["offer"]["provider"]:
            continue
        n = o["replicas"]
        assert o["time_s"]["typical"] == pytest.approx(one["time_s"]["typical"] / n, rel=0.01)
        assert o["rate"]["typical"] == pytest.approx(one["rate"]["typical"] * n, rel=0.01)
        # n machines for 1/n of the time each, plus n - 1 setups: dearer than one machine
        assert o["cost"]["typical"]["amount"] > one["cost"]["typical"]["amount"]
        assert any("boots, sets up and loads the weights" in a for a in o["assumptions"])
        checked += 1
    assert checked


def test_a_share_option_replaces_the_tensor_parallel_one_only_where_it_ranks_better(answer):
    seen = {}
    for o in answer["options"]:
        key = (o["gpu"], o["count"], o["offer"]["spot"])
        assert key not in seen or seen[key]["replicas"] == o["replicas"] == 1 or \
            seen[key]["offer"]["provider"] != o["offer"]["provider"], key
        seen.setdefault(key, o)
    # the cheapest answer is still one card: splitting costs the extra machines' setup
    assert answer["options"][0]["replicas"] == 1


def test_when_time_matters_the_fastest_answer_is_a_split(cli):
    d = cli(*Q, "--objective", "time", "--json").json()
    best = d["options"][0]
    assert best["replicas"] > 1 and best["spread"] == "separate machines"


def test_a_share_option_exports_as_that_many_runs_not_a_service(cli, answer):
    i = next(i for i, o in enumerate(answer["options"], start=1) if o["replicas"] > 1)
    n = answer["options"][i - 1]["machines"]
    ds = cli(*Q, "--export", "dstack", "--export-option", str(i)).out
    task = yaml.safe_load(ds)
    assert task["type"] == "task" and "nodes" not in task and f"SHARD_COUNT={n}" in task["env"]
    sky = yaml.safe_load(cli(*Q, "--export", "skypilot", "--export-option", str(i)).out)
    assert "service" not in sky
    assert sky.get("num_nodes") == n or str(sky["envs"]["SHARD_COUNT"]) == str(n)


def test_shares_on_spot_are_interrupted_one_machine_at_a_time(cli):
    d = cli(*Q, "--spot", "--json", "--top", "0").json()
    spot = [o for o in _shares(d) if o["offer"]["spot"] and o.get("spot_risk")]
    assert spot
    assert all(o["spot_risk"]["instances"] == 1 for o in spot)
