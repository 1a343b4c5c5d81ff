"""The ``setup`` and ``run`` of an exported task: the engine and settings the estimate assumed.

For the engines and trainers whichgpu models with known command lines (vLLM, SGLang,
llama.cpp's server; axolotl, torchtune, Unsloth), the commands carry the layout and memory
settings the estimate used (tensor-parallel size, context, batch, GPU memory fraction, llama.cpp
offload flags; LoRA rank, gradient checkpointing, optimizer, micro-batch, steps, checkpoint
interval). Anything else gets a placeholder the user fills, marked as such. An engine's command
line and its ROCm build are written by its own module (``engines/<engine>.py``); the trainers'
are here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from whichgpu.engines import module
from whichgpu.units import format_duration
from whichgpu.vocabulary import Task

if TYPE_CHECKING:
    from collections.abc import Callable

    from whichgpu.advise.job import Job
    from whichgpu.advise.options import Option
    from whichgpu.estimate.workload import Workload

FILL_IN = "FILL-IN"  # the marker of every value the user must supply
PORT = 8000
CHECKPOINT_DIR = "/checkpoints"  # where training writes its checkpoints (a persistent mount)

#: torchtune recipe configs for the presets it ships configs for (torchtune recipes/configs);
#: (preset, task) -> config stem; single-device and distributed variants follow its naming.
_TORCHTUNE = {("llama-3.1-8b", "lora"): "llama3_1/8B_lora",
              ("llama-3.1-8b", "qlora"): "llama3_1/8B_qlora",
              ("llama-3.1-8b", "full-ft"): "llama3_1/8B_full",
              ("llama-3.1-70b", "lora"): "llama3_1/70B_lora",
              ("llama-3.1-70b", "full-ft"): "llama3_1/70B_full"}
#: whichgpu optimizer -> the optimizer name Hugging Face Trainer (axolotl, TRL) takes
_HF_OPTIM = {"adamw": "adamw_torch_fused", "adamw-8bit": "adamw_bnb_8bit",
             "paged-adamw-8bit": "paged_adamw_8bit", "adafactor": "adafactor", "sgd": "sgd",
             "sgd-momentum": "sgd", "lion": "lion_32bit"}
_TORCHTUNE_OPTIM = {"adamw": "torch.optim.AdamW", "adamw-8bit": "bitsandbytes.optim.AdamW8bit",
                    "paged-adamw-8bit": "bitsandbytes.optim.PagedAdamW8bit"}


@dataclass
class LaunchCommands:
    """What the task runs, and what whichgpu assumed to write it."""

    engine: str  # what runs: vllm, sglang, llamacpp, axolotl, torchtune, unsloth, placeholder
    setup: str
    run: str
    envs: dict[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()  # environment variables passed from the user's machine
    ports: tuple[int, ...] = ()
    placeholder: bool = False  # the run is a placeholder the user replaces
    settings: list[str] = field(default_factory=list)  # the assumed settings, in words
    to_fill: list[str] = field(default_factory=list)  # envs the user must set
    checkpoints: bool = False  # writes checkpoints under CHECKPOINT_DIR (mount it)
    image: str | None = None  # a container image the task runs in (AMD: a ROCm build)


#: an engine module's ``launch`` (its command line for an option) and ``rocm`` (its ROCm build,
#: in place, given why); found through :func:`whichgpu.engines.module`
Launch: TypeAlias = "Callable[[Option, Workload], LaunchCommands]"
Rocm: TypeAlias = "Callable[[LaunchCommands, str], None]"


def model_env(w: Workload, out: LaunchCommands, what: str = "a Hugging Face model id") -> None:
    hub = w.model.hub_id
    quant = w.quant_name.lower()
    if hub and not (w.task == Task.INFERENCE and quant.startswith(("awq", "gptq", "exl2"))):
        out.envs["MODEL"] = hub
    else:
        note = f"{quant.upper()} checkpoint of {w.model.name}" if hub else w.model.name
        out.envs["MODEL"] = f"{FILL_IN} ({what}: a {note})" if hub else \
            f"{FILL_IN} ({what} for {note})"
        out.to_fill.append("MODEL")
    out.secrets = ("HF_TOKEN",)


#: ROCm builds for AMD cards (pip's vLLM, flash-attn and llama.cpp's CUDA build are NVIDIA-only).
#: AMD's vLLM image: "Pull the ROCm vLLM Docker image ... rocm/vllm" (vLLM inference and serving
#: on ROCm, https://rocm.docs.amd.com/projects/ai-ecosystem/en/latest/inference/vllm.html);
#: AMD's PyTorch image rocm/pytorch for training (https://rocm.docs.amd.com, "PyTorch on ROCm",
#: the Docker install); llama.cpp's HIP build: -DGGML_HIP=ON with the card's gfx target
#: (ggml-org/llama.cpp docs/build.md, "HIP"), read here from rocminfo on the machine.
ROCM_PYTORCH_IMAGE = "rocm/pytorch:latest"


def commands(option: Option, job: Job) -> LaunchCommands:
    """The commands for ``option`` (its workload as the recommender ran it); on an AMD card,
    the ROCm builds (an image, the HIP build) or a placeholder that says what to install."""
    out = _commands(option, job)
    if option.gpu.vendor == "amd":
        _rocm(out, option)
    return out


def _rocm(out: LaunchCommands, option: Option) -> None:
    """Swap the CUDA-only setup for ROCm's (in place)."""
    why = f"{option.gpu.id} is an AMD card: the engine must be a ROCm build"
    engine_rocm: Rocm | None = getattr(module(out.engine), "rocm", None)
    if engine_rocm is not None:
        engine_rocm(out, why)
    elif out.engine in ("axolotl", "torchtune"):
        out.image = ROCM_PYTORCH_IMAGE
        out.run = out.run.replace("flash_attention: true", "sdp_attention: true")
        out.settings.append(f"{why}: AMD's PyTorch image {ROCM_PYTORCH_IMAGE}; "
                            + ("PyTorch's SDPA attention instead of the flash-attn package "
                               "(its pip wheel is CUDA-only)" if out.engine == "axolotl" else
                               "torchtune is plain PyTorch"))
    else:
        engine = out.engine if out.engine != "placeholder" else "the engine"
        out.setup = (f"# {FILL_IN}: install a ROCm build of {engine} ({why}; whichgpu has "
                     "none to write)\n" + "".join(f"# {line}\n" for line in
                                                  out.setup.splitlines() if line.strip()))
        out.run = out.run if out.placeholder else (
            f"# {FILL_IN}: the setup above must install a ROCm build first\n" + out.run)
        out.placeholder = True
        out.settings.append(f"{why}: the setup is a placeholder (no ROCm recipe here for "
                            f"{engine})")


def _commands(option: Option, job: Job) -> LaunchCommands:
    w = option.workload
    if w is None:
        raise ValueError("an option without its workload cannot be exported")
    if w.is_diffusion:
        return _placeholder(w, "diffusers or ComfyUI",
                            "whichgpu does not write diffusion pipelines: run your diffusers "
                            "script or ComfyUI workflow here")
    if w.is_training:
        return _training(option, job, w)
    engine = w.engine_name
    launch: Launch | None = getattr(module(engine), "launch", None)  # the engine's module
    if launch is not None:
        return launch(option, w)
    return _placeholder(w, engine, f"whichgpu has no command line for {engine}: start it here")


def _placeholder(w: Workload, engine: str, why: str) -> LaunchCommands:
    out = LaunchCommands("placeholder", setup=f"# {FILL_IN}: install {engine}\n",
                         run=f"# {FILL_IN}: {why}.\n# whichgpu assumed: {_summary(w)}\n"
                             "exit 1  # remove once the command above is written\n",
                         placeholder=True)
    out.settings.append(_summary(w))
    model_env(w, out)
    return out


def _summary(w: Workload) -> str:
    parts = [w.model.name, w.task, w.quant_name, f"engine {w.engine_name}",
             f"context {w.seq_len:,}", f"batch {w.batch}"]
    if w.gpus > 1:
        parts.append(f"{w.gpus} GPUs (tp={w.tp_degree}, pp={w.pp_degree}, dp={w.dp_degree})")
    return ", ".join(parts)


def lines(*parts: str) -> str:
    """A shell command over several lines, joined with backslashes."""
    return " \\\n  ".join(p for p in parts if p) + "\n"


def max_seqs(o: Option) -> int:
    """Sequences at once: a rate-sized replica's engine limit (the serving model's batch
    limit), else the option's batch."""
    limit = (o.serving or {}).get("batch_limit") if getattr(o, "serving", None) else None
    return max(1, int(limit)) if limit else max(1, o.batch)


# ------------------------------------------------------------------------------ training

def _steps(o: Option, job: Job, w: Workload) -> int:
    if job.steps:
        return int(job.steps)
    if job.train_tokens:
        per_step = max(1, w.batch * w.seq_len * w.dp_degree)
        return max(1, math.ceil(job.train_tokens / per_step))
    return 1000  # no amount given: a round number the user adjusts (the header says so)


def _save_steps(o: Option, job: Job, steps: int) -> int | None:
    """Steps between checkpoints for the job's interval (None: no checkpoints)."""
    every = job.checkpoint_every_s
    if every is None:
        return None
    step_s = None
    if o.rate_name == "step_s":
        step_s = o.rate.typical
    elif o.time_s is not None:
        step_s = o.time_s.typical / steps
    if not step_s:
        return max(1, steps // 10)
    return max(1, min(steps, int(every / step_s)))


def _training(o: Option, job: Job, w: Workload) -> LaunchCommands:
    from whichgpu.estimate.frameworks import framework_id

    fw = framework_id(w.framework) if w.framework else "transformers"
    if w.task == Task.PRETRAIN or fw in ("torchtitan", "llm-foundry", "megatron", "pytorch"):
        return _placeholder(w, fw, f"write the {fw} launch of this run here")
    steps = _steps(o, job, w)
    save = _save_steps(o, job, steps)
    base = CHECKPOINT_DIR if o.offer.spot else "./outputs"
    if fw == "torchtune" and (w.model.id, w.task) in _TORCHTUNE:
        out = _torchtune(o, w, steps, save, base)
    elif fw == "unsloth":
        out = _unsloth(o, w, steps, save, base)
    else:
        out = _axolotl(o, w, steps, save, base)
        if fw not in ("transformers", "axolotl"):
            out.settings.append(f"{fw} has no command here for {w.model.name}: axolotl runs "
                                "the same settings")
    out.settings += [f"{w.task} of {w.model.name}, sequence length {w.seq_len:,}, micro-batch "
                     f"{w.batch}, {steps:,} steps, optimizer {w.optimizer}",
                     "gradient checkpointing " + ("on" if w.uses_checkpointing else "off")]
    if w.task in (Task.LORA, Task.QLORA):
        out.settings.append(f"LoRA rank {w.lora_rank} on {', '.join(w.lora_targets)}")
    if save is not None and job.checkpoint_every_s is not None:  # one is set with the other
        where = CHECKPOINT_DIR if o.offer.spot else "./outputs"
        every = format_duration(job.checkpoint_every_s)
        if out.engine == "torchtune":
            from whichgpu.advise.spot_risk import EPOCH_END_SAVERS

            out.settings.append(f"{EPOCH_END_SAVERS['torchtune']}: this run is one epoch, so "
                                f"its only checkpoint is at the end, in {where}; an "
                                "interrupted run starts again from the beginning (not one "
                                f"checkpoint every {every})")
        elif save >= steps:
            out.settings.append(f"the run (about {format_duration(o.time_s.typical)}) is "
                                f"shorter than the {every} checkpoint interval: one "
                                f"checkpoint, at the end ({steps:,} steps), in {where}; an "
                                "interrupted run starts again from the beginning"
                                if o.time_s is not None else
                                f"one checkpoint, at the end ({steps:,} steps), in {where}")
        else:
            out.settings.append(f"a checkpoint every {save:,} steps (about every {every}) in "
                                f"{where}; a restarted run resumes from the last one")
        out.checkpoints = o.offer.spot
    if "DATASET" not in out.envs:
        out.envs["DATASET"] = f"{FILL_IN} (a Hugging Face dataset id or a path)"
        out.to_fill.append("DATASET")
    return out


def _axolotl(o: Option, w: Workload, steps: int, save: int | None, base: str
             ) -> LaunchCommands:
    out = LaunchCommands("axolotl", setup='pip install -U "axolotl[deepspeed]"\n'
                         + ("axolotl fetch deepspeed_configs\n" if w.gpus > 1 else ""), run="")
    model_env(w, out)
    out.envs["DATASET"] = f"{FILL_IN} (a Hugging Face dataset id or a path, alpaca format)"
    out.to_fill.append("DATASET")
    cfg = ["base_model: ${MODEL}"]
    if w.task in (Task.LORA, Task.QLORA):
        cfg += [f"adapter: {w.task}", f"lora_r: {w.lora_rank}", f"lora_alpha: {2 * w.lora_rank}",
                "lora_dropout: 0.05", "lora_target_linear: true"]
    if w.task == Task.QLORA:
        cfg.append("load_in_4bit: true")
    cfg += [f"sequence_len: {w.seq_len}", f"micro_batch_size: {w.batch}",
            "gradient_accumulation_steps: 1", f"max_steps: {steps}",
            f"optimizer: {_HF_OPTIM.get(w.optimizer, 'adamw_torch_fused')}",
            "learning_rate: 0.0002", "bf16: true", "flash_attention: true",
            f"gradient_checkpointing: {'true' if w.uses_checkpointing else 'false'}",
            "datasets:", "  - path: ${DATASET}", "    type: alpaca"]
    if w.gpus > 1 and w.zero_stage == 3:
        cfg.append("deepspeed: deepspeed_configs/zero3_bf16.json")
    if save is not None:
        cfg += [f"output_dir: {base}/axolotl", f"save_steps: {save}",
                "auto_resume_from_checkpoints: true"]
    else:
        cfg += ["output_dir: ./outputs", "save_strategy: 'no'"]
    body = "\n".join(cfg)
    out.run = ("cat > whichgpu-axolotl.yaml <<EOF\n" + body + "\nEOF\n"
               "axolotl train whichgpu-axolotl.yaml\n")
    return out


def _torchtune(o: Option, w: Workload, steps: int, save: int | None, base: str
               ) -> LaunchCommands:
    stem = _TORCHTUNE[(w.model.id, w.task)]
    single = w.gpus == 1
    kind = "lora" if w.task in (Task.LORA, Task.QLORA) else "full"
    recipe = f"{kind}_finetune_{'single_device' if single else 'distributed'}"
    config = stem + ("_single_device" if single else "")
    out = LaunchCommands("torchtune", setup="pip install -U torchtune torchao\n"
                         "tune download $MODEL --output-dir /tmp/model\n", run="")
    model_env(w, out)
    out.envs["MODEL"] = (w.model.hub_id or "") + ("-Instruct" if w.model.hub_id and not
                                                   w.model.hub_id.endswith("Instruct") else "")
    nproc = "" if single else f"--nproc_per_node {w.gpus} "
    overrides = ["checkpointer.checkpoint_dir=/tmp/model",
                 "tokenizer.path=/tmp/model/original/tokenizer.model",
                 f"batch_size={w.batch}", f"max_steps_per_epoch={steps}",
                 f"tokenizer.max_seq_len={w.seq_len}",
                 f"enable_activation_checkpointing={'True' if w.uses_checkpointing else 'False'}"]
    if kind == "lora":
        overrides += [f"model.lora_rank={w.lora_rank}", f"model.lora_alpha={2 * w.lora_rank}"]
    if w.optimizer in _TORCHTUNE_OPTIM:
        overrides.append(f"optimizer._component_={_TORCHTUNE_OPTIM[w.optimizer]}")
    if save is not None:
        overrides.append(f"output_dir={base}/torchtune")
    out.run = lines(f"tune run {nproc}{recipe} --config {config}", *overrides)
    out.envs["DATASET"] = "the config's default dataset (alpaca_cleaned); set dataset.source " \
                          "to change it"
    return out


def _unsloth(o: Option, w: Workload, steps: int, save: int | None, base: str
             ) -> LaunchCommands:
    out = LaunchCommands("unsloth", setup="pip install -U unsloth\n", run="")
    model_env(w, out)
    out.envs["DATASET"] = f"{FILL_IN} (a Hugging Face dataset id with a 'text' column)"
    out.to_fill.append("DATASET")
    optim = _HF_OPTIM.get(w.optimizer, "adamw_8bit")
    save_args = (f'output_dir="{base}/unsloth", save_steps={save},' if save else
                 'output_dir="outputs", save_strategy="no",')
    resume = "import glob; resume = bool(glob.glob(args.output_dir + '/checkpoint-*'))" \
        if save else "resume = False"
    ckpt = '"unsloth"' if w.uses_checkpointing else "False"
    lora = (f"model = FastLanguageModel.get_peft_model(model, r={w.lora_rank}, "
            f"lora_alpha={w.lora_rank}, use_gradient_checkpointing={ckpt})"
            if w.task in (Task.LORA, Task.QLORA) else "")
    script = "\n".join([
        "import os",
        "from datasets import load_dataset",
        "from trl import SFTConfig, SFTTrainer",
        "from unsloth import FastLanguageModel",
        f"model, tokenizer = FastLanguageModel.from_pretrained(os.environ['MODEL'], "
        f"max_seq_length={w.seq_len}, load_in_4bit={w.task == Task.QLORA}, "
        f"full_finetuning={w.task == Task.FULL_FT})",
        lora,
        f"args = SFTConfig(per_device_train_batch_size={w.batch}, max_steps={steps}, "
        f"optim=\"{optim}\", bf16=True, dataset_text_field=\"text\", {save_args})",
        resume,
        "trainer = SFTTrainer(model=model, tokenizer=tokenizer, args=args, "
        "train_dataset=load_dataset(os.environ['DATASET'], split='train'))",
        "trainer.train(resume_from_checkpoint=resume)",
    ])
    out.run = "cat > whichgpu_unsloth.py <<'EOF'\n" + script + "\nEOF\npython whichgpu_unsloth.py\n"
    return out
