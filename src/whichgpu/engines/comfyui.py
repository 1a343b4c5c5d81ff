"""ComfyUI in code: what it does by itself to fit a pipeline that does not fit whole. Its
traits (``streams_weights``), platforms and speed are data."""

from __future__ import annotations

from whichgpu.messages import Message, msg

#: a ComfyUI instance runs on one device ("--cuda-device: Set the id of the cuda device this
#: instance will use", comfy/cli_args.py): on several GPUs, one instance and one video per GPU
ONE_DEVICE = True

#: what moves idle models off the GPU, in its words (it has no model-offload switch)
MODEL_OFFLOAD_WORDS = "ComfyUI model management"

#: ComfyUI loads part of a model that does not fit and streams the rest by itself (its
#: default, comfy/model_management.py): the recommender may offer it unasked
STREAMS_UNASKED = True


def fit_note(offload: str, need: int, tiled: bool = False) -> Message:
    """Its lowvram mode when the weights stream in, else its model management (and, when the
    decode had to be tiled, that its VAE decode retries tile by tile)."""
    if offload == "sequential":
        return msg("diffusion.fit.comfy_partial", "{need:.1f} GB needed whole: ComfyUI loads "
                   "the diffusion model partly (its lowvram mode, automatic when the model "
                   "does not fit) and streams the rest over PCIe every step",
                   need=need / 1e9)
    if tiled:
        return msg("diffusion.fit.comfy_tiled", "{need:.1f} GB needed with every model "
                   "loaded: ComfyUI's model management unloads the text encoders before "
                   "sampling, and its VAE decode, out of memory, retries tile by tile "
                   "(comfy/sd.py)", need=need / 1e9)
    return msg("diffusion.fit.comfy", "{need:.1f} GB needed with every model loaded: "
               "ComfyUI's model management unloads the text encoders before sampling",
               need=need / 1e9)
