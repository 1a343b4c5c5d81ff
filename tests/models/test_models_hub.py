"""Hub look-ups replayed from recorded responses: success, gated, missing, offline,
rate-limited, a diffusers repo. Nothing here touches the network: ``hf_hub_download`` and
``parse_safetensors_file_metadata`` are replaced by fakes that return what huggingface_hub
returns (a cached file path; a SafetensorsFileMetadata) or raise its exceptions with an HTTP
response of the status the Hub sends. We cannot record live traffic in this environment, so the
fixtures are built in the exact shape of the real objects.
"""

from __future__ import annotations

import json
import sys
from importlib import resources

import huggingface_hub
import pytest
from huggingface_hub import errors as hf_errors
from huggingface_hub.utils._safetensors import (
    SafetensorsFileMetadata,
    SafetensorsRepoMetadata,
    TensorInfo,
)

from whichgpu.errors import InputError, WhichGPUError
from whichgpu.models import resolve_model
from whichgpu.models.hub import looks_like_hub_id, validate_hub_id

PRESETS = resources.files("whichgpu.models").joinpath("presets")
REPO = "acme/tiny-qwen-0.5b"  # not a preset: resolution has to go to the Hub


def http_response(status: int, url: str = "https://huggingface.co/api/models/x"):
    """An HTTP response object of the library huggingface_hub uses (httpx-like or requests)."""
    cls = hf_errors.Response
    lib = sys.modules[cls.__module__.split(".")[0]]
    try:
        return cls(status, request=lib.Request("GET", url))
    except TypeError:  # requests.Response takes no arguments
        r = cls()
        r.status_code = status
        return r


def hub_exc(kind: type, status: int, message: str) -> Exception:
    try:
        return kind(message, response=http_response(status))
    except TypeError:  # LocalEntryNotFoundError and other non-HTTP errors
        return kind(message)


class FakeHub:
    """Stands in for the Hub: files by (repo, filename), or an exception for every call."""

    def __init__(self, tmp_path, files=None, error=None, metadata=None):
        self.tmp_path, self.files = tmp_path, files or {}
        self.error, self.metadata = error, metadata
        self.calls: list[dict] = []

    def hf_hub_download(self, repo_id, filename, **kwargs):
        self.calls.append({"repo_id": repo_id, "filename": filename, **kwargs})
        if self.error is not None:
            raise self.error
        if filename not in self.files:
            raise hub_exc(hf_errors.RemoteEntryNotFoundError, 404,
                          f"404 Client Error. Entry Not Found for url: {filename}")
        path = self.tmp_path / "cache" / repo_id.replace("/", "--") / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.files[filename]))
        return str(path)

    def parse_safetensors_file_metadata(self, repo_id, filename, **kwargs):
        """One file's header (whichgpu reads them one by one, within its look-up's limits)."""
        self.calls.append({"repo_id": repo_id, "filename": filename, "safetensors": True,
                           **kwargs})
        if isinstance(self.metadata, Exception):
            raise self.metadata
        if self.metadata is None or filename not in self.metadata.files_metadata:
            raise hub_exc(hf_errors.RemoteEntryNotFoundError, 404,
                          f"404 Client Error. Entry Not Found for url: {filename}")
        return self.metadata.files_metadata[filename]


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)

    def install(**kwargs) -> FakeHub:
        hub = FakeHub(tmp_path, **kwargs)
        monkeypatch.setattr(huggingface_hub, "hf_hub_download", hub.hf_hub_download)
        monkeypatch.setattr(huggingface_hub, "parse_safetensors_file_metadata",
                            hub.parse_safetensors_file_metadata)
        return hub

    return install


def qwen_config() -> dict:
    return json.loads(PRESETS.joinpath("qwen2.5-0.5b", "config.json").read_text("utf-8"))


def recorded_metadata() -> SafetensorsRepoMetadata:
    tensors = {
        "model.embed_tokens.weight": TensorInfo(dtype="BF16", shape=[151936, 896],
                                                data_offsets=(0, 151936 * 896 * 2)),
        "model.layers.0.self_attn.q_proj.weight": TensorInfo(
            dtype="BF16", shape=[896, 896], data_offsets=(151936 * 896 * 2,
                                                          151936 * 896 * 2 + 896 * 896 * 2)),
    }
    file = SafetensorsFileMetadata(metadata={"format": "pt"}, tensors=tensors)
    return SafetensorsRepoMetadata(metadata=None, sharded=False,
                                   weight_map={k: "model.safetensors" for k in tensors},
                                   files_metadata={"model.safetensors": file})


def test_hub_ids_are_validated_before_any_lookup():
    assert looks_like_hub_id("meta-llama/Llama-3.1-8B")
    for bad in ("no-slash", "a/b/c", "a//b", "org/na..me", "org/na--me", "https://x.co/a"):
        assert not looks_like_hub_id(bad), bad
    with pytest.raises(InputError, match="org/name"):
        validate_hub_id("bad id/with space")


def test_success_gives_config_architecture_and_exact_checkpoint_bytes(fake_hub):
    hub = fake_hub(files={"config.json": qwen_config()}, metadata=recorded_metadata())
    spec = resolve_model(REPO)
    assert spec.source == f"hub:{REPO}" and spec.hub_id == REPO
    assert spec.params_total == 494_032_768 and spec.num_kv_heads == 2
    ck = spec.checkpoint
    assert ck.bytes_by_dtype == {"BF16": (151936 * 896 + 896 * 896) * 2}
    assert ck.embedding_bytes == 151936 * 896 * 2 and ck.tensor_count == 2
    download = hub.calls[0]
    assert download["filename"] == "config.json" and download["local_files_only"] is False
    assert download["etag_timeout"] > 0  # a timeout is always set
    assert "token" not in download  # HF_TOKEN is left to huggingface_hub


def test_gated_repo_says_to_accept_the_licence_and_set_hf_token(fake_hub, cli):
    fake_hub(error=hub_exc(hf_errors.GatedRepoError, 401,
                           f"401 Client Error. Cannot access gated repo for url "
                           f"https://huggingface.co/{REPO}/resolve/main/config.json"))
    with pytest.raises(InputError) as e:
        resolve_model(REPO)
    assert "gated" in str(e.value) and "HF_TOKEN" in str(e.value) and "licence" in str(e.value)
    r = cli("model", REPO)
    assert r.code == 2 and "HF_TOKEN" in r.err and "Traceback" not in r.err


def test_missing_repo_says_to_check_the_id(fake_hub):
    fake_hub(error=hub_exc(hf_errors.RepositoryNotFoundError, 404,
                           "404 Client Error. Repository Not Found"))
    with pytest.raises(InputError, match=r"not found.*spelling"):
        resolve_model(REPO)


def test_offline_uses_the_cache_only_and_says_how_to_go_online(fake_hub, monkeypatch):
    hub = fake_hub(error=hub_exc(hf_errors.LocalEntryNotFoundError, 0,
                                 "Cannot find the requested files in the disk cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError) as e:
        resolve_model(REPO)
    assert "unset HF_HUB_OFFLINE" in str(e.value)
    assert hub.calls[0]["local_files_only"] is True


def test_offline_flag_beats_the_environment(fake_hub):
    hub = fake_hub(files={"config.json": qwen_config()}, metadata=recorded_metadata())
    spec = resolve_model(REPO, offline=True)
    assert hub.calls[0]["local_files_only"] is True
    assert not any(c.get("safetensors") for c in hub.calls)  # no header fetch offline
    assert spec.checkpoint is None and any("offline" in n for n in spec.notes)


def test_rate_limit_is_reported_with_what_to_do(fake_hub, cli):
    fake_hub(error=hub_exc(hf_errors.HfHubHTTPError, 429, "429 Too Many Requests"))
    with pytest.raises(WhichGPUError) as e:
        resolve_model(REPO)
    assert "429" in str(e.value) and "HF_TOKEN" in str(e.value)
    assert not isinstance(e.value, InputError)
    assert cli("model", REPO).code == 1


def test_missing_safetensors_still_resolves_from_the_config(fake_hub):
    fake_hub(files={"config.json": qwen_config()},
             metadata=hub_exc(hf_errors.NotASafetensorsRepoError, 404, "no safetensors"))
    spec = resolve_model(REPO)
    assert spec.checkpoint is None and any("safetensors" in n for n in spec.notes)


def test_a_diffusers_repo_is_read_through_model_index(fake_hub):
    files = {"model_index.json": json.loads(
        PRESETS.joinpath("flux.1-dev", "model_index.json").read_text("utf-8"))}
    for comp in ("text_encoder", "text_encoder_2", "transformer", "vae"):
        files[f"{comp}/config.json"] = json.loads(
            PRESETS.joinpath("flux.1-dev", comp, "config.json").read_text("utf-8"))
    fake_hub(files=files)
    spec = resolve_model("acme/flux-finetune")
    assert spec.family == "diffusion" and spec.hub_id == "acme/flux-finetune"
    assert spec.params_total == resolve_model("flux.1-dev").params_total


def test_a_repo_with_neither_config_is_an_input_error(fake_hub):
    fake_hub(files={})
    with pytest.raises(InputError, match=r"neither config\.json nor model_index\.json"):
        resolve_model(REPO)


def test_a_sharded_checkpoint_reads_every_shard_header(fake_hub):
    """model.safetensors.index.json names the shards; each header is read (a few at a time,
    under the look-up's limits) and the bytes add up."""
    one = recorded_metadata().files_metadata["model.safetensors"]
    tensors = dict(one.tensors)
    first = SafetensorsFileMetadata(metadata=None, tensors={
        k: v for k, v in tensors.items() if "embed" in k})
    second = SafetensorsFileMetadata(metadata=None, tensors={
        k: v for k, v in tensors.items() if "embed" not in k})
    shards = {"model-00001-of-00002.safetensors": first,
              "model-00002-of-00002.safetensors": second}
    index = {"metadata": {}, "weight_map": {
        name: shard for shard, meta in shards.items() for name in meta.tensors}}
    metadata = SafetensorsRepoMetadata(metadata=None, sharded=True,
                                       weight_map=index["weight_map"], files_metadata=shards)
    hub = fake_hub(files={"config.json": qwen_config(),
                          "model.safetensors.index.json": index}, metadata=metadata)
    spec = resolve_model(REPO)
    assert spec.checkpoint.bytes_by_dtype == {"BF16": (151936 * 896 + 896 * 896) * 2}
    read = sorted(c["filename"] for c in hub.calls if c.get("safetensors"))
    assert read == sorted(shards)
