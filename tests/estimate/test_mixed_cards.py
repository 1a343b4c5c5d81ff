"""Issue 33, item 4: different cards in one machine (``--gpu rtx-5090,rtx-3090``): the list's
spelling, llama.cpp's split and each card's memory, the speed of the mix bound by the slow
card, vLLM's equal shards and its refusals, on every surface."""

from __future__ import annotations

import json

import pytest

from whichgpu.answers.inputs.workload import build_workload
from whichgpu.catalog.gpu_list import is_gpu_list, parse_gpu_list
from whichgpu.catalog.gpus import UnknownGPU, get_gpu
from whichgpu.errors import InputError
from whichgpu.estimate.mixed_cards import layer_counts, mixed_cards
from whichgpu.estimate.speed import estimate_speed
from whichgpu.models.resolve import resolve_model
from whichgpu.vocabulary import SplitMode


def _w(model: str, quant: str, engine: str, **kw):
    return build_workload(resolve_model(model), quant=quant, engine=engine, **kw)


# ------------------------------------------------------------------ the list's spelling

def test_a_count_and_repeated_names_spell_the_same_machine():
    a = [g.id for g in parse_gpu_list("2xrtx-3090,rtx-4090")]
    b = [g.id for g in parse_gpu_list("rtx-3090, rtx-3090 ,rtx-4090")]
    c = [g.id for g in parse_gpu_list("2 x rtx-3090,rtx-4090")]
    assert a == b == c == ["rtx-3090", "rtx-3090", "rtx-4090"]


def test_one_card_is_not_a_list():
    assert not is_gpu_list("rtx-4090") and not is_gpu_list("24GB") and not is_gpu_list(None)
    assert is_gpu_list("rtx-5090,rtx-3090") and is_gpu_list("2xrtx-3090")


def test_an_unknown_card_in_the_list_is_named_with_the_closest_ids():
    with pytest.raises(UnknownGPU) as exc:
        parse_gpu_list("rtx-5090,rtx-3909")
    assert exc.value.name == "rtx-3909" and "rtx-3090" in exc.value.suggestions


@pytest.mark.parametrize("text", ["rtx-5090,,rtx-3090", "rtx-5090,", "0xrtx-3090,rtx-4090",
                                  "17xrtx-3090", "9xrtx-3090,9xrtx-4090"])
def test_a_malformed_list_is_an_input_error(text):
    with pytest.raises(InputError):
        parse_gpu_list(text)


# ------------------------------------------------------------------ llama.cpp's split

@pytest.mark.parametrize(("fractions", "slots", "counts"), [
    ([1, 1], 4, (2, 2)), ([3, 1], 8, (6, 2)), ([1, 1, 2], 8, (2, 2, 4)), ([1, 0], 5, (5, 0))])
def test_layer_counts_follow_llamacpps_upper_bound_rule(fractions, slots, counts):
    """Slot il goes to the first device whose cumulative share exceeds il / slots."""
    assert layer_counts(fractions, slots) == counts


def test_each_cards_memory_adds_up_to_the_one_gpu_estimate():
    from whichgpu.estimate.memory import estimate_memory

    w = _w("llama-3.3-70b", "q4_k_m", "llamacpp", context=8192)
    m = mixed_cards(w, parse_gpu_list("rtx-5090,rtx-3090"), speed=False)
    one = {t.name: t.bytes for t in estimate_memory(w).terms}
    cards = m.plan.cards
    assert sum(c.weight_bytes for c in cards) == one["weights"]
    assert abs(sum(c.kv_bytes for c in cards) - one["kv_cache"]) < len(cards) * 81
    assert sum(c.layers for c in cards) == w.model.num_layers + 1  # the output head's slot
    assert all(c.other_bytes > 0 for c in cards)  # each card has its own buffers and runtime


def test_the_default_split_gives_the_larger_card_more_layers():
    w = _w("llama-3.3-70b", "q4_k_m", "llamacpp")
    m = mixed_cards(w, parse_gpu_list("rtx-5090,rtx-3090"), speed=False)
    big, small = m.plan.cards
    assert m.plan.split == "default" and m.plan.fits
    assert big.layers > small.layers
    assert "--split-mode layer" in m.plan.launch and "--tensor-split" not in m.plan.launch


def test_a_given_tensor_split_is_the_launch_lines_and_can_overflow_a_card():
    w = _w("llama-3.3-70b", "q4_k_m", "llamacpp")
    m = mixed_cards(w, parse_gpu_list("rtx-5090,rtx-3090"), tensor_split=(1.0, 9.0),
                    speed=False)
    assert "--tensor-split 1,9" in m.plan.launch
    assert not m.plan.fits and not m.plan.cards[1].fits and m.plan.cards[0].fits


def test_when_llamacpps_own_split_overflows_a_split_that_fits_is_given():
    """Llama 3.3 70B q3_k_m at 32k on a 5090 with a 3060 12GB: by free memory the 3060 takes
    22 of the 81 slots and overflows (its runtime and buffers weigh more on a small card);
    moving a layer to the 5090 fits both."""
    cards = parse_gpu_list("rtx-5090,rtx-3060-12gb")
    w = _w("llama-3.3-70b", "q3_k_m", "llamacpp", context=32768)
    m = mixed_cards(w, cards, speed=False)
    assert m.plan.fits and m.plan.split == "suggested"
    assert m.other is not None and m.other.split == "default" and not m.other.fits
    assert not m.other.cards[1].fits and m.plan.cards[1].layers < m.other.cards[1].layers
    assert "--tensor-split " + ",".join(str(c.layers) for c in m.plan.cards) in m.plan.launch


# ------------------------------------------------------------------ the speed of the mix

def test_the_mix_is_bound_by_the_slow_card_between_the_two_alone():
    w = _w("llama-3.3-70b", "q4_k_m", "llamacpp")
    cards = parse_gpu_list("rtx-5090,rtx-3090")
    s = mixed_cards(w, cards).plan.speed
    assert s is not None
    alone = s.single_card
    fast, slow = alone["rtx-5090"].typical, alone["rtx-3090"].typical
    assert slow < s.decode_tokens_per_s_per_sequence.typical < fast
    assert s.bound_by == "rtx-3090"
    # the 3090 reads fewer of the bytes but takes the larger share of each token's time
    assert s.byte_share[1] < s.time_share[1]


def test_per_token_time_is_the_sum_of_each_cards_share_at_its_own_rate():
    w = _w("llama-3.3-70b", "q4_k_m", "llamacpp")
    s = mixed_cards(w, parse_gpu_list("rtx-5090,rtx-3090")).plan.speed
    assert s is not None
    alone = [s.single_card["rtx-5090"].typical, s.single_card["rtx-3090"].typical]
    step = sum(b / r for b, r in zip(s.byte_share, alone, strict=True)) + s.hop_s
    assert s.decode_tokens_per_s_per_sequence.typical == pytest.approx(1 / step, rel=1e-9)


def test_the_same_card_twice_by_layers_is_the_count_answer():
    """The mixed model of two 3090s agrees with the existing 2 x 3090 layer split."""
    w = _w("llama-3.1-8b", "q4_k_m", "llamacpp")
    g = get_gpu("rtx-3090")
    mix = mixed_cards(w, (g, g), split_mode=SplitMode.LAYER).plan.speed
    two = estimate_speed(w.with_(gpus=2), g, 2)
    assert mix is not None
    for key in ("decode_tokens_per_s_per_sequence", "prefill_tokens_per_s"):
        assert getattr(mix, key).typical == pytest.approx(two.rates[key].typical, rel=0.01)


def test_a_faster_split_moves_layers_to_the_faster_card():
    w = _w("llama-3.3-70b", "q4_k_m", "llamacpp")
    m = mixed_cards(w, parse_gpu_list("rtx-5090,rtx-3090"))
    assert m.other is not None and m.other.split == "suggested"
    assert m.other.cards[0].layers > m.plan.cards[0].layers and m.other.fits
    assert m.other.speed is not None and m.plan.speed is not None
    assert (m.other.speed.decode_tokens_per_s.typical
            > m.plan.speed.decode_tokens_per_s.typical)
    assert "--tensor-split" in m.other.launch


def test_row_split_reads_the_cards_at_once_and_keeps_the_kv_on_the_main_card():
    w = _w("llama-3.3-70b", "q4_k_m", "llamacpp")
    m = mixed_cards(w, parse_gpu_list("rtx-5090,rtx-3090"), split_mode=SplitMode.ROW)
    first, second = m.plan.cards
    assert m.plan.method == "row" and first.kv_bytes > 0 and second.kv_bytes == 0
    assert "--split-mode row" in m.plan.launch


# ------------------------------------------------------------------ vLLM and its refusals

def test_vllm_over_two_architectures_runs_at_the_slower_cards_pace():
    """A 5090 with a 3090 at TP=2 on stock vLLM decodes like a pair of 3090s (club-3090's
    mixed-architecture row): the mix is the 3090's TP rate, not the 5090's."""
    w = _w("llama-3.1-8b", "bf16", "vllm")
    cards = parse_gpu_list("rtx-5090,rtx-3090")
    m = mixed_cards(w, cards)
    assert m.plan.method == "tensor-parallel" and m.plan.speed is not None
    pair_3090 = estimate_speed(w, get_gpu("rtx-3090"), 2, check_fit=False, saturation=False)
    assert m.plan.speed.decode_tokens_per_s.typical == pytest.approx(
        pair_3090.rates["decode_tokens_per_s"].typical)
    assert m.plan.speed.bound_by == "rtx-3090"
    assert any(n.id == "mixed.tp_archs" for n in m.plan.notes)


def test_vllm_refuses_cuda_with_rocm():
    w = _w("llama-3.1-8b", "bf16", "vllm")
    with pytest.raises(InputError) as exc:
        mixed_cards(w, parse_gpu_list("rtx-a6000,mi300x"))
    assert exc.value.args[0].id == "mixed.tp_platform"


def test_vllms_equal_shards_are_bounded_by_the_smallest_card():
    """Qwen3 32B in bf16 over an A6000 (48 GB) and a 3090 (24 GB), both Ampere: each shard
    fits the A6000 and not the 3090, so the pair does not hold it."""
    w = _w("qwen3-32b", "bf16", "vllm")
    m = mixed_cards(w, parse_gpu_list("rtx-a6000,rtx-3090"))
    a6000, r3090 = m.plan.cards
    assert a6000.need_bytes == r3090.need_bytes
    assert a6000.fits and not r3090.fits and not m.plan.fits and m.plan.speed is None


def test_vllms_speed_over_unequal_cards_is_the_slowest_cards():
    w = _w("llama-3.1-8b", "bf16", "vllm")
    cards = parse_gpu_list("rtx-3090,rtx-a6000")
    s = mixed_cards(w, cards).plan.speed
    assert s is not None
    each = {g.id: estimate_speed(w, g, 2, check_fit=False, saturation=False)
            .rates["decode_tokens_per_s"].typical for g in cards}
    assert s.decode_tokens_per_s.typical == pytest.approx(min(each.values()))
    assert s.bound_by == min(each, key=each.get)  # the A6000: 768 GB/s against 936


def test_training_over_mixed_cards_is_refused():
    w = _w("llama-3.1-8b", "bf16", "transformers", task="lora")
    with pytest.raises(InputError) as exc:
        mixed_cards(w, parse_gpu_list("rtx-5090,rtx-3090"))
    assert exc.value.args[0].id == "mixed.task"


# ------------------------------------------------------------------ the surfaces

def test_cli_speed_json_gives_each_card_and_the_mix(cli):
    r = cli("speed", "llama-3.3-70b", "--quant", "q4_k_m", "--gpu", "rtx-5090,rtx-3090",
            "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["mixed_cards"] and data["cards"] == ["rtx-5090", "rtx-3090"]
    assert [c["gpu"] for c in data["plan"]["cards"]] == ["rtx-5090", "rtx-3090"]
    assert data["plan"]["speed"]["decode_tokens_per_s"]["typical"] > 0


def test_cli_a_list_of_one_card_answers_as_the_count(cli):
    a = cli("speed", "llama-3.1-8b", "--quant", "q4_k_m", "--gpu", "2xrtx-3090", "--json")
    b = cli("speed", "llama-3.1-8b", "--quant", "q4_k_m", "--gpu", "rtx-3090", "--count",
            "2", "--json")
    assert a.code == b.code == 0 and a.out == b.out


@pytest.mark.parametrize(("args", "said"), [
    (("--gpu", "rtx-5090,rtx-3909"), "did you mean"),
    (("--gpu", "rtx-5090,rtx-3090", "--count", "2"), "2xrtx-3090"),
    (("--gpu", "rtx-5090", "--tensor-split", "3,1"), "several different cards"),
    (("--gpu", "rtx-5090,rtx-3090", "--tensor-split", "3"), "one per card"),
    (("--gpu", "rtx-5090,rtx-3090", "--tensor-split", "0,0"), "above 0"),
    (("--gpu", "rtx-a6000,mi300x", "--engine", "vllm"), "cuda and rocm"),
])
def test_cli_bad_input_exits_2_with_one_line(cli, args, said):
    r = cli("memory", "llama-3.1-8b", *args)
    assert r.code == 2 and said in r.err and "Traceback" not in r.err


def test_rest_answers_the_mix_and_422_with_the_reason(web):
    ok = web.get("/api/v1/memory?model=llama-3.3-70b&quant=q4_k_m&gpu=rtx-5090,rtx-3090")
    assert ok.status_code == 200 and ok.json()["plan"]["method"] == "layer"
    bad = web.get("/api/v1/speed?model=llama-3.1-8b&gpu=rtx-a6000,mi300x&engine=vllm")
    assert bad.status_code == 422 and "cuda and rocm" in bad.json()["detail"]
    typo = web.get("/api/v1/memory?model=llama-3.1-8b&gpu=rtx-5090,rtx-3909")
    assert typo.status_code == 422 and "rtx-3090" in typo.json()["detail"]


def test_the_vram_selector_shows_each_card(web):
    page = web.get("/memory?model=llama-3.3-70b&quant=q4_k_m&gpu=rtx-5090,rtx-3090").text
    assert 'data-gpu="rtx-5090"' in page and 'data-gpu="rtx-3090"' in page
    assert "--split-mode layer" in page


def test_the_mcp_speed_tool_answers_the_mix_and_says_each_card():
    import anyio

    from whichgpu.agents.local import LocalSurface
    from whichgpu.agents.tools import call

    answer, said = anyio.run(call, LocalSurface(), "speed", {
        "model": "llama-3.3-70b", "quant": "q4_k_m", "gpu": "rtx-5090,rtx-3090"})
    assert answer.data["mixed_cards"] and answer.data["plan"]["speed"] is not None
    assert "Device 0 rtx-5090" in said and "Device 1 rtx-3090" in said
    assert "the slowest card: rtx-3090" in said and "--split-mode layer" in said


# ------------------------------------------------------------------ recommend: your machine

def test_recommend_says_what_your_machine_of_different_cards_does(cli):
    r = cli("recommend", "llama-3.3-70b", "--quant", "q4_k_m", "--tokens", "1M", "--gpu",
            "rtx-5090,rtx-3090", "--top", "1", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    machine = data["own_machine"]
    assert machine["cards"] == ["rtx-5090", "rtx-3090"] and machine["plan"]["fits"]
    assert machine["plan"]["speed"]["decode_tokens_per_s_per_sequence"]["typical"] > 0
    assert any("your machine (rtx-5090 + rtx-3090)" in n for n in data["notes"])
    assert data["owned"] == []  # not ranked as a single owned card


def test_recommend_a_list_of_one_card_is_your_card_counted(cli):
    a = cli("recommend", "llama-3.1-8b", "--tokens", "1M", "--gpu", "2xrtx-3090", "--top",
            "1", "--json")
    b = cli("recommend", "llama-3.1-8b", "--tokens", "1M", "--gpu", "rtx-3090", "--count",
            "2", "--top", "1", "--json")
    assert a.code == b.code == 0
    assert json.loads(a.out)["owned"] == json.loads(b.out)["owned"] != []


def test_the_advisor_shows_your_machine(web):
    page = web.get("/?model=llama-3.3-70b&quant=q4_k_m&amount=1M&unit=tokens"
                   "&gpu=rtx-5090,rtx-3090").text
    assert 'class="own-machine" data-fits="yes"' in page
    assert 'name="gpu"' in page  # the advisor's own-cards control


# ------------------------------------------------------------------ fits: what runs on my machine

def test_fits_on_a_machine_lists_models_no_single_card_of_it_holds(cli):
    r = cli("fits", "--gpu", "rtx-5090,rtx-3090", "--models", "llama-3.3-70b,llama-3.1-405b",
            "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["cards"] == ["rtx-5090", "rtx-3090"] and data["gpu"] == "rtx-5090 + rtx-3090"
    (row,) = data["models"]
    assert row["model"] == "llama-3.3-70b" and data["not_run"] == ["llama-3.1-405b"]
    # more than the 5090 alone holds, within the two cards together
    assert get_gpu("rtx-5090").usable_memory_bytes < row["gpu_bytes"] <= data["usable_bytes"]
    assert row["decode_tokens_per_s"]["typical"] > 0


def test_fits_a_list_of_one_card_is_the_count(cli):
    a = cli("fits", "--gpu", "2xrtx-3090", "--models", "llama-3.3-70b", "--json")
    b = cli("fits", "--gpu", "rtx-3090", "--count", "2", "--models", "llama-3.3-70b", "--json")
    assert a.code == b.code == 0 and a.out == b.out


def test_with_fewer_gpu_layers_only_the_gpu_slots_are_split():
    w = _w("llama-3.3-70b", "q4_k_m", "llamacpp", gpu_layers=60, host_ram="64GB")
    m = mixed_cards(w, parse_gpu_list("rtx-3090,rtx-3060-12gb"), speed=False)
    assert sum(c.layers for c in m.plan.cards) == 60
    assert "-ngl 60" in m.plan.launch
    with pytest.raises(InputError):
        mixed_cards(_w("llama-3.3-70b", "q4_k_m", "llamacpp", gpu_layers=0),
                    parse_gpu_list("rtx-3090,rtx-3060-12gb"), speed=False)


@pytest.mark.parametrize("extra", [("--speculative", "mtp"), ("--lora-adapters", "8")])
def test_what_the_mix_does_not_estimate_is_refused_not_ignored(cli, extra):
    r = cli("speed", "qwen3.8-27b", "--quant", "q4_k_m", "--gpu", "rtx-5090,rtx-3090", *extra)
    assert r.code == 2 and "not estimated over several different cards" in r.err
