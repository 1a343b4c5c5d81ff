"""resolve_model: aliases, Hub ids, paths (config.json, model folders, pipeline folders),
bare sizes, and what an unknown name gets back."""

from __future__ import annotations

import json
import shutil
import struct
from importlib import resources
from pathlib import Path

import pytest

from whichgpu.errors import DataError, InputError, NotFoundError
from whichgpu.models import resolve_model
from whichgpu.models.generic import parse_bare_size

PRESETS = resources.files("whichgpu.models").joinpath("presets")


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    """A valid safetensors file with zero-filled tensors (header + data)."""
    sizes = {"BF16": 2, "F16": 2, "F32": 4, "U8": 1, "F8_E4M3": 1}
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = sizes[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))


def copy_preset(alias: str, dest: Path) -> Path:
    with resources.as_file(PRESETS.joinpath(alias)) as src:
        shutil.copytree(src, dest)
    return dest


def test_alias_hub_id_and_instruct_variant_resolve_offline():
    a = resolve_model("llama-3.1-70b")
    b = resolve_model("meta-llama/Llama-3.1-70B-Instruct")
    assert a.params_total == b.params_total == 70_553_706_496
    assert b.hub_id == "meta-llama/Llama-3.1-70B-Instruct"
    assert a.num_kv_heads == 8 and not a.approximate


@pytest.mark.parametrize("text,value", [("70B", 70e9), ("8b", 8e9), ("350M", 350e6),
                                        ("1.5B", 1.5e9), ("llama", None), ("70", None)])
def test_bare_sizes(text, value):
    assert parse_bare_size(text) == value


def test_bare_size_gives_an_approximate_dense_spec_of_exactly_that_size():
    spec = resolve_model("70B")
    assert spec.approximate and spec.params_total == 70_000_000_000
    assert spec.params_active == spec.params_total
    assert spec.num_kv_heads == 8 and spec.head_dim == 128 and 70 <= spec.num_layers <= 90
    assert any("approximation" in n for n in spec.notes)
    assert all(v >= 0 for v in spec.params.to_json().values())
    small = resolve_model("x", params=7e9)
    assert small.approximate and small.params_total == 7_000_000_000
    assert 24 <= small.num_layers <= 36  # Llama 3 8B: 32 layers at 8.03B


def test_absurd_sizes_are_refused():
    with pytest.raises(InputError):
        resolve_model("x", params=5)
    with pytest.raises(InputError):
        resolve_model("x", params=float("nan"))


def test_unknown_name_suggests_close_presets():
    with pytest.raises(NotFoundError) as e:
        resolve_model("llama-3.1-7b")
    assert "llama-3.1-70b" in e.value.suggestions or "llama-3.1-8b" in e.value.suggestions
    assert "70B" in str(e.value)  # says a bare size works too


def test_config_json_path_and_model_folder(tmp_path):
    cfg = json.loads(PRESETS.joinpath("qwen2.5-0.5b", "config.json").read_text("utf-8"))
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    by_file = resolve_model(str(tmp_path / "config.json"))
    assert by_file.params_total == 494_032_768 and by_file.source.startswith("config:")
    write_safetensors(tmp_path / "model.safetensors", {
        "model.embed_tokens.weight": ("BF16", [151936, 8]),
        "model.layers.0.mlp.down_proj.weight": ("BF16", [8, 16])})
    by_folder = resolve_model(str(tmp_path))
    ck = by_folder.checkpoint
    assert ck.bytes_by_dtype == {"BF16": (151936 * 8 + 128) * 2}
    assert ck.embedding_bytes == 151936 * 8 * 2 and ck.tensor_count == 2


def test_broken_files_name_the_file(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(DataError, match=r"config\.json.*invalid JSON"):
        resolve_model(str(bad))
    with pytest.raises(InputError, match="file not found"):
        resolve_model(str(tmp_path / "missing.gguf"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match=r"no config\.json"):
        resolve_model(str(empty))
    (tmp_path / "st").mkdir()
    (tmp_path / "st" / "config.json").write_text(
        PRESETS.joinpath("gpt2", "config.json").read_text("utf-8"))
    (tmp_path / "st" / "model.safetensors").write_bytes(b"\x05\x00")
    with pytest.raises(DataError, match="safetensors"):
        resolve_model(str(tmp_path / "st"))


def test_diffusers_folder_resolves_like_its_preset(tmp_path):
    folder = copy_preset("flux.1-dev", tmp_path / "FLUX.1-dev")
    spec = resolve_model(str(folder))
    preset = resolve_model("flux.1-dev")
    assert spec.family == "diffusion" and spec.params_total == preset.params_total
    assert spec.diffusion.denoiser == "transformer"


def test_pipeline_folder_takes_exact_counts_from_component_safetensors(tmp_path):
    folder = copy_preset("sd-1.5", tmp_path / "sd15")
    write_safetensors(folder / "vae" / "diffusion_pytorch_model.safetensors",
                      {"encoder.conv_in.weight": ("F16", [128, 3, 3, 3])})
    spec = resolve_model(str(folder))
    vae = spec.diffusion.component("vae")
    assert vae.params == 128 * 27 and vae.checkpoint_bytes == 128 * 27 * 2
    assert spec.diffusion.component("unet").params == 859_520_964  # from the formula


def test_offline_unknown_hub_id_says_how_to_get_it():
    with pytest.raises(InputError) as e:
        resolve_model("someorg/some-model-not-a-preset", offline=True)
    assert "HF_HUB_OFFLINE" in str(e.value)
