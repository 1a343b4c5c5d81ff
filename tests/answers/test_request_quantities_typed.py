"""Parse once (issue 35, item 1), the rest of the quantities: a request reads the money, the
deadline, the checkpoint interval, the parameter count, the resolution, the LoRA targets,
llama.cpp's -ot, the host's memory and bandwidth, the drafter and the link between servers as
it validates, with the reader's own sentence on every surface, and says them back as written;
the engine gets the values (the same values a Python caller's text gives)."""

from __future__ import annotations

import pickle
import re

import pytest

from whichgpu.answers.inputs.host import parse_host
from whichgpu.answers.inputs.job import build_job
from whichgpu.answers.inputs.values import Drafter, MoneyAmount, TensorOverrides
from whichgpu.answers.inputs.workload import build_workload
from whichgpu.answers.request import for_web
from whichgpu.answers.requests import Memory, Recommend, Speed
from whichgpu.errors import InputError
from whichgpu.estimate.host import MemorySpec, default_host
from whichgpu.estimate.speculative import SpecMethod
from whichgpu.units import Money

WRITTEN = {"deadline": "1h30m", "budget": "50EUR", "max_price_per_hour": "3",
           "checkpoint_every": "45m", "params": "70B", "resolution": "768*1344",
           "lora_targets": "q_proj, v_proj,", "host_memory": "DDR4-3200x4",
           "host_bandwidth": "90GB/s", "speculative": "draft:llama-3.2-1b",
           "interconnect": "Thunderbolt 5"}


def test_a_request_holds_the_values_and_says_back_the_words():
    q = Recommend(model="llama-3.1-8b", **WRITTEN)  # type: ignore[arg-type]
    assert q.deadline == 5400.0 and q.checkpoint_every == 2700.0
    assert q.budget == MoneyAmount(50.0, "EUR") and q.max_price_per_hour == MoneyAmount(3.0)
    assert q.params == 70e9 and q.resolution is not None
    assert (q.resolution.width, q.resolution.height) == (768, 1344)
    assert q.lora_targets is not None and tuple(q.lora_targets) == ("q_proj", "v_proj")
    assert q.host_memory is not None and q.host_memory.spec == MemorySpec("ddr4", 3200, 4)
    assert q.host_bandwidth == 90e9  # GB = 10^9 bytes
    assert q.speculative == Drafter(SpecMethod.DRAFT, "llama-3.2-1b")
    assert q.interconnect == "tb5"
    said = q.model_dump(exclude_defaults=True)
    assert {k: said[k] for k in WRITTEN} == WRITTEN
    assert pickle.loads(pickle.dumps(q)) == q  # the web's work lanes hand requests on


def test_no_checkpoints_is_zero_seconds_and_said_as_written():
    for text in ("none", "0", "0s", "off"):
        q = Recommend(model="x", checkpoint_every=text)  # type: ignore[arg-type]
        assert q.checkpoint_every == 0.0
        assert q.model_dump()["checkpoint_every"] == text


def test_override_tensor_items_are_pattern_device_pairs():
    q = Memory(model="x", override_tensor=["blk\\.1\\.=CPU,exps=CPU", "a=CUDA0"])  # type: ignore[list-item]
    assert [tuple(o) for o in q.override_tensor] == [
        (("blk\\.1\\.", "CPU"), ("exps", "CPU")), (("a", "CUDA0"),)]
    assert isinstance(q.override_tensor[0], TensorOverrides)


@pytest.mark.parametrize(("field", "text", "words"), [
    ("deadline", "soon", "cannot read 'soon' as a duration"),
    ("deadline", "5000000h", "must be at most 100 years"),
    ("checkpoint_every", "later", "cannot read 'later' as a duration"),
    ("budget", "lots", "cannot read 'lots' as money"),
    ("budget", "2e13USD", "must be at most 10^12"),
    ("params", "seventy", "cannot read 'seventy' as a parameter count"),
    ("resolution", "1024by", "cannot read resolution '1024by'"),
    ("host_memory", "ddr9", "cannot read host memory 'ddr9'"),
    ("host_bandwidth", "90PB/s", "size '90pb' needs a unit"),
    ("speculative", "magic", "unknown drafter 'magic'"),
    ("interconnect", "carrier-pigeon", "unknown link between servers 'carrier-pigeon'"),
])
def test_a_bad_value_gets_the_readers_sentence_on_every_surface(field, text, words):
    for cls in (Recommend, for_web(Recommend), for_web(Recommend, body=True)):
        with pytest.raises(InputError, match=re.escape(words)):
            cls.parse({"model": "llama-3.1-8b", field: text})


def test_an_ot_part_without_a_device_is_refused_as_before():
    with pytest.raises(InputError, match="'exps': write PATTERN=DEVICE"):
        Speed.parse({"model": "x", "override_tensor": ["exps"]})


def test_a_bare_amount_takes_the_requests_currency_or_asks_for_one():
    w = build_workload("llama-3.1-8b")
    q = Recommend(model="llama-3.1-8b", budget="5", currency="EUR")  # type: ignore[arg-type]
    job = build_job(w, tokens=10**6, budget=q.budget, currency="EUR")
    assert job.budget == Money(5.0, "EUR")
    with pytest.raises(InputError, match=re.escape("amount '5' needs a currency, e.g. 5USD")):
        build_job(w, tokens=10**6, budget=Recommend(model="x", budget="5").budget)  # type: ignore[arg-type]


def test_the_engine_gets_what_a_python_callers_text_gives():
    """Values read by the request equal the text read for the Python API (build_job,
    build_workload and parse_host still take text)."""
    q = Recommend(model="llama-3.1-8b", task="lora", steps="100", spot=True,  # type: ignore[arg-type]
                  **{k: WRITTEN[k] for k in ("deadline", "budget", "checkpoint_every",
                                             "lora_targets")})
    w = build_workload("llama-3.1-8b", task="lora", lora_targets=q.lora_targets)
    assert w == build_workload("llama-3.1-8b", task="lora", lora_targets=WRITTEN["lora_targets"])
    typed = build_job(w, steps=100, deadline=q.deadline, budget=q.budget, spot=True,
                      checkpoint_every=q.checkpoint_every)
    text = build_job(w, steps=100, deadline="1h30m", budget="50EUR", spot=True,
                     checkpoint_every="45m")
    said = (5400.0, Money(50, "EUR"), 2700.0)
    assert (typed.deadline_s, typed.budget, typed.checkpoint_every_s) == \
        (text.deadline_s, text.budget, text.checkpoint_every_s) == said
    host = Recommend(model="x", host_memory="ddr4-3200x4",  # type: ignore[arg-type]
                     host_bandwidth="90GB/s")
    assert parse_host(None, host.host_memory, host.host_bandwidth) == \
        parse_host(None, "ddr4-3200x4", "90GB/s")


def test_the_default_host_memory_is_data_as_before():
    """data/host_memory.toml names the default as a type, MT/s and channels: the same
    dual-channel DDR5-5600 as the 'ddr5-5600x2' it replaced (5,600 MT/s x 8 B x 2)."""
    host = default_host()
    assert host.memory == "ddr5-5600x2"
    assert host.bandwidth_bytes_per_s == 5600e6 * 8 * 2
    assert parse_host(None, "ddr5").bandwidth_bytes_per_s == host.bandwidth_bytes_per_s


def test_the_command_line_said_back_is_the_persons_words():
    """The line a page shows under its answer, and the CLI's own, say each value as typed
    (-ot item by item)."""
    from whichgpu.answers.command_line import command_line

    q = Memory(model="x", override_tensor=["exps=CPU"], resolution="768*1344",  # type: ignore[arg-type,list-item]
               host_memory="DDR4-3200x4")
    line = command_line(q)
    assert "--override-tensor exps=CPU" in line and "--resolution '768*1344'" in line
    assert "--host-memory DDR4-3200x4" in line


def test_the_rest_api_reads_every_moved_field_from_a_query_string(web):
    """GET reads one value per key (a resolution or LoRA targets are not repeated keys); the
    answer equals the POST body's."""
    query = ("model=flux.1-dev&task=image&resolution=768x1344&gpu=rtx-4090")
    get = web.get("/api/v1/speed?" + query)
    post = web.post("/api/v1/speed", json={"model": "flux.1-dev", "task": "image",
                                            "resolution": "768x1344", "gpu": "rtx-4090"})
    assert get.status_code == post.status_code == 200
    assert get.json() == post.json()
    lora = web.get("/api/v1/memory?model=llama-3.1-8b&task=lora&lora_targets=q_proj,v_proj")
    assert lora.status_code == 200
    every = web.get("/api/v1/memory?model=llama-3.1-8b&task=lora")
    assert lora.json()["total_bytes"] < every.json()["total_bytes"]  # two targets, not all
