"""llama.cpp in code: its ``llama-server`` launch command (GPU layers, host experts, slots, KV
type) and its HIP build on AMD cards. Its traits and speed are data (``data/engines.toml``,
``estimate/data/``); its memory is the model's (no reserve beyond it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from whichgpu.advise.options import Option
    from whichgpu.estimate.workload import Workload
    from whichgpu.export.commands import LaunchCommands

# Facts the estimate reads by name (engines/__init__.py lists them):
#: one model's layers spread over cards of different sizes in any proportion (--tensor-split;
#: by default each card's free memory: src/llama-model.cpp load_tensors), the mixed-cards split
SPLITS_UNEVEN_CARDS = True
#: built for one of ggml's GPU backends (cuda, vulkan, rocm, metal, sycl: --backend)
GPU_BACKENDS = True
#: its 16-bit GEMMs on GeForce cards (inference): accumulated in FP16, cuBLAS's faster rate
#: there (S22 in estimate/speed/hardware.py's sources); the precision key and why
CONSUMER_GEMM = ("fp16_acc16", "llama.cpp accumulates FP16 GEMMs in FP16 on GeForce (S22)")

BUILD = ("git clone --depth 1 https://github.com/ggml-org/llama.cpp\n"
         "cmake -S llama.cpp -B llama.cpp/build -DGGML_CUDA=ON\n"
         "cmake --build llama.cpp/build --config Release -j --target llama-server\n")


def gguf_file_type(name: str) -> str | None:
    """The GGUF file type of weights in the format ``name`` under llama.cpp: a plain dtype is
    its own (fp16 is F16), MXFP4 is the MXFP4_MOE file ggml-org publishes for gpt-oss
    (experts MXFP4, every other tensor Q8_0); None for a format llama.cpp has no file of."""
    if name in ("fp16", "bf16", "fp32", "f32"):
        return {"fp16": "f16", "fp32": "f32"}.get(name, name)
    return "mxfp4_moe" if name == "mxfp4" else None


def launch(o: Option, w: Workload) -> LaunchCommands:
    """``llama-server`` with the offload, slots and KV type the estimate used."""
    # export is loaded only to write a launch file: a memory answer never reaches here
    from whichgpu.export.commands import FILL_IN, PORT, LaunchCommands, lines

    out = LaunchCommands("llamacpp", setup=BUILD, run="", ports=(PORT,))
    quant = w.quant_name.upper()
    source = w.model.source
    if source.startswith("gguf:"):
        out.envs["GGUF"] = f"{FILL_IN} (the path of {source[5:]} on the machine)"
        model = "-m $GGUF"
    else:
        out.envs["GGUF_REPO"] = f"{FILL_IN} (a Hugging Face repository of {w.model.name} GGUF " \
                                f"files with a {quant} file)"
        model = f"-hf $GGUF_REPO:{quant}"
    out.to_fill.append(next(iter(out.envs)))
    out.secrets = ("HF_TOKEN",)
    ngl = w.gpu_layers if w.gpu_layers is not None else 999
    slots = max(1, o.batch)
    out.run = lines(f"llama.cpp/build/bin/llama-server {model}", f"-ngl {ngl}",
                    f"--n-cpu-moe {w.cpu_moe_layers}" if w.cpu_moe_layers else "",
                    f"-c {w.seq_len * slots} -np {slots}",
                    "--split-mode layer" if w.gpus > 1 else "",
                    "-ctk q8_0 -ctv q8_0" if w.kv_dtype.lower() == "q8_0" else "",
                    "--no-mmap" if not w.mmap else "",
                    f"--host 0.0.0.0 --port {PORT}")
    layers = "every layer on the GPU" if w.gpu_layers is None else f"{ngl} layers on the GPU"
    out.settings += [f"llama.cpp: {layers}" + (f", the experts of {w.cpu_moe_layers} layers "
                                                 "in host RAM" if w.cpu_moe_layers else "") +
                     (f", layers split over {w.gpus} GPUs" if w.gpus > 1 else ""),
                     f"{slots} slot(s) of {w.seq_len:,} tokens (-c is the total)"]
    return out


def rocm(out: LaunchCommands, why: str) -> None:
    """On an AMD card: built with HIP for the card's gfx target, in AMD's ROCm image."""
    # export is loaded only to write a launch file: a memory answer never reaches here
    from whichgpu.export.commands import ROCM_PYTORCH_IMAGE

    out.image = ROCM_PYTORCH_IMAGE  # carries ROCm's compilers (hipconfig, rocminfo)
    out.setup = out.setup.replace(
        "-DGGML_CUDA=ON",
        "-DGGML_HIP=ON \\\n  -DAMDGPU_TARGETS=$(rocminfo | grep -o -m1 'gfx[0-9a-f]*') "
        "-DCMAKE_BUILD_TYPE=Release")
    out.setup = 'export HIPCXX="$(hipconfig -l)/clang" HIP_PATH="$(hipconfig -R)"\n' + out.setup
    out.settings.append(f"{why}: llama.cpp built with HIP (-DGGML_HIP=ON, the card's gfx "
                        f"target from rocminfo) in AMD's ROCm image {ROCM_PYTORCH_IMAGE}")

