"""Issue 26, part 4: every answer restates the work it understood (amount and unit, what one
image or video is, context per sequence, precision, engine) on the CLI, in the JSON's typed
``assumptions``, over REST and on the page (EN and FR); the advisor's amount for
pre-training is read in training tokens unless steps are chosen."""

from __future__ import annotations

import pytest

from whichgpu.models.resolve import resolve_model


def _assumed(data) -> dict:
    return {a["name"]: a for a in data["assumptions"]}


@pytest.mark.parametrize(("args", "amount", "unit"), [
    (("llama-3.1-8b", "--tokens", "10M"), 10_000_000, "tokens"),
    (("llama-3.1-8b", "--users", "50", "--tokens-per-s-each", "20"), 50, "users"),
    (("flux.1-dev", "--task", "image", "--images", "1000"), 1000, "images"),
    (("wan-2.2-14b", "--task", "video", "--videos", "10"), 10, "videos"),
    (("llama-3.1-8b", "--task", "lora", "--steps", "2000"), 2000, "training steps"),
    (("1B", "--task", "pretrain", "--train-tokens", "2B"), 2_000_000_000, "training tokens"),
])
def test_the_json_states_the_amount_and_its_unit(cli, args, amount, unit):
    out = cli("recommend", *args, "--json")
    assert out.code == 0, out.err
    data = out.json()
    a = _assumed(data)
    assert a["amount"]["value"] == amount and a["amount"]["unit"] == unit
    assert a["amount"]["source"] == "asked"
    assert a["precision"]["value"] == data["quant"]
    assert f"{amount:,}" in data["understood"]
    text = " ".join(cli("recommend", *args).out.split())
    assert data["understood"] in text


def test_an_image_and_a_video_say_what_one_of_them_is():
    flux, wan = resolve_model("flux.1-dev").diffusion, resolve_model("wan-2.2-14b").diffusion
    assert flux and wan  # the presets' own defaults, not numbers typed here
    from whichgpu.advise.job import Job
    from whichgpu.advise.understood import assumed, understood
    from whichgpu.answers.inputs.workload import build_workload

    img = Job(build_workload("flux.1-dev", task="image"), images=1000)
    a = {x.name: x for x in assumed(img)}
    w, h = flux.default_resolution
    assert a["resolution"].value == f"{w}x{h}" and not a["resolution"].asked
    assert a["sampling_steps"].value == flux.default_steps
    assert f"{w}x{h} pixels at {flux.default_steps} sampling steps" in understood(img)
    vid = Job(build_workload("wan-2.2-14b", task="video"), videos=10)
    a = {x.name: x for x in assumed(vid)}
    assert a["frames"].value == wan.default_frames
    assert f"{wan.default_frames} frames" in understood(vid)


def test_what_was_asked_is_marked_asked(cli):
    data = cli("recommend", "flux.1-dev", "--task", "image", "--images", "10", "--resolution",
               "512x512", "--sampling-steps", "20", "--json").json()
    a = _assumed(data)
    assert (a["resolution"]["value"], a["resolution"]["source"]) == ("512x512", "asked")
    assert (a["sampling_steps"]["value"], a["sampling_steps"]["source"]) == (20, "asked")
    assert "512x512 pixels at 20 sampling steps" in data["understood"]


def test_rest_and_the_page_say_it_in_english_and_french(web, cli):
    api = web.get("/api/v1/recommend?model=flux.1-dev&task=image&images=1000").json()
    c = cli("recommend", "flux.1-dev", "--task", "image", "--images", "1000", "--json").json()
    assert api["assumptions"] == c["assumptions"] and api["understood"] == c["understood"]
    q = "/?model=flux.1-dev&task=image&amount=1000&unit=images"
    en = web.get(q).text
    fr = web.get(q, headers={"Accept-Language": "fr"}).text
    assert "Understood: 1,000 images, each 1024x1024 pixels at 28 sampling steps" in en
    assert "Compris :" in fr and "pas d’échantillonnage" in fr


def test_pretraining_2b_on_the_advisor_is_tokens_not_steps(web):
    page = web.get("/?task=pretrain&model=1B&amount=2B").text
    assert "Understood: 2,000,000,000 training tokens" in page
    # the form's script takes each task's own unit: pre-training counts tokens
    assert "pretrain:train_tokens" in page


def test_the_advisor_lets_a_person_set_what_one_image_or_video_is(web):
    q = ("/?model=wan-2.2-14b&task=video&amount=2&unit=videos&resolution=832x480"
         "&frames=49&sampling_steps=20")
    page = web.get(q).text
    for name in ("resolution", "frames", "sampling_steps"):
        assert f'name="{name}"' in page
    assert "each 832x480 pixels, 49 frames, at 20 sampling steps" in page
    fr = web.get(q, headers={"Accept-Language": "fr"}).text
    assert "chacune en 832x480 pixels, 49 images, à 20 pas d’échantillonnage" in fr
