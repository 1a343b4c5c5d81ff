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


def automatic_note(change: str, short: bool) -> Message:
    """What ComfyUI did by itself to fit, with no setting to name (issue 29): ``change`` is the
    offload it ran ("sequential": its partial loading; another: its model management) or
    "vae_tiling" (its tiled retry of the decode); short for the list of adaptations, long for
    an option's notes."""
    if change == "vae_tiling":
        return (msg("adapted.comfy_tiled", "with ComfyUI's tiled retry of the VAE decode")
                if short else
                msg("option.comfy_tiled", "ComfyUI's VAE decode, out of memory, retries tile "
                    "by tile (automatic; the decode takes longer)"))
    if change == "sequential":
        return (msg("adapted.comfy_partial", "with ComfyUI's partial loading (what does not "
                    "fit streamed from system RAM every step)") if short else
                msg("option.comfy_partial", "ComfyUI's partial loading: the part of the "
                    "diffusion model that does not fit streams from system RAM every step "
                    "(automatic; slower, same output)"))
    return (msg("adapted.comfy_model", "with ComfyUI's model management (idle models "
                "unloaded)") if short else
            msg("option.comfy_model", "ComfyUI's model management: idle models leave the GPU "
                "for the one that runs (automatic; same output)"))
