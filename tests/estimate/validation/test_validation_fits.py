"""validation/fits.csv holds set-ups people demonstrably run: none may come out "does not fit"
(a borderline verdict, or a fit with llama.cpp's own offload layout, is allowed)."""

from __future__ import annotations

from whichgpu.estimate.validation import fits as validation_fits


def test_no_setup_users_run_comes_out_does_not_fit():
    outcomes = validation_fits.run()
    judged = [o for o in outcomes if o.verdict != "not modelled"]
    assert len(judged) >= 5, [o.detail for o in outcomes]
    failures = [(o.id, o.detail) for o in judged if o.verdict == "does not fit"]
    assert not failures, failures


def test_a_published_expert_offload_is_judged_with_its_own_flags(tmp_path):
    """A measured run's --n-cpu-moe is used as published; without it the same card would not
    hold gpt-oss-120b, and with far too few experts in RAM it does not fit either."""
    head = ("id,model,quant,engine,gpu,gpu_count,host_ram,settings,context,reported,"
            "tokens_per_s,source_url,date,engine_version,conditions\n")
    rows = [
        "a,openai/gpt-oss-120b,mxfp4,llamacpp,rtx-3090,1,64 GB DDR4-3200,n_cpu_moe=27; ngl=99,"
        "5500,runs,1.6,u,2025,llama.cpp,measured",
        "b,openai/gpt-oss-120b,mxfp4,llamacpp,rtx-3090,1,64 GB DDR4-3200,n_cpu_moe=2; ngl=99,"
        "5500,runs,1.6,u,2025,llama.cpp,measured",
    ]
    path = tmp_path / "fits.csv"
    path.write_text(head + "\n".join(rows) + "\n", encoding="utf-8")
    by_id = {o.id: o for o in validation_fits.run(path)}
    assert by_id["a"].verdict == "fits"
    assert by_id["a"].host_bytes > 40e9  # 27 layers of experts in RAM
    assert by_id["b"].verdict == "does not fit"


def test_host_ram_is_read_from_the_published_words():
    host = validation_fits.host_of("64 GB DDR5-6000 (4 x 16 GB, dual channel)")
    assert host.ram_bytes == 64e9
    assert host.bandwidth_bytes_per_s == 6000e6 * 8 * 2
    assert validation_fits.host_of("not stated") is None
