"""ComfyUI in code: what it does by itself to fit a pipeline that does not fit whole. Its
traits (``streams_weights``), platforms and speed are data."""

from __future__ import annotations

from whichgpu.messages import Message, msg


def fit_note(offload: str, need: int) -> Message:
    """Its lowvram mode when the weights stream in, else its model management."""
    if offload == "sequential":
        return msg("diffusion.fit.comfy_partial", "{need:.1f} GB needed whole: ComfyUI loads "
                   "the diffusion model partly (its lowvram mode, automatic when the model "
                   "does not fit) and streams the rest over PCIe every step",
                   need=need / 1e9)
    return msg("diffusion.fit.comfy", "{need:.1f} GB needed with every model loaded: "
               "ComfyUI's model management unloads the text encoders before sampling",
               need=need / 1e9)
