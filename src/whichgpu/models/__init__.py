"""Know the model: ModelSpec from presets, config.json, the Hub, GGUF files or a bare size."""

from whichgpu.models.preset_index import PresetRecord, list_presets
from whichgpu.models.quant import QuantFormat, get_quant, quant_names
from whichgpu.models.resolve import resolve_model
from whichgpu.models.spec import (
    CheckpointInfo,
    ComponentSpec,
    DiffusionSpec,
    LayerSpec,
    LinearGroup,
    MLASpec,
    ModelSpec,
    MoESpec,
    ParamCounts,
)

__all__ = [
    "CheckpointInfo", "ComponentSpec", "DiffusionSpec", "LayerSpec", "LinearGroup", "MLASpec",
    "ModelSpec", "MoESpec", "ParamCounts", "PresetRecord", "QuantFormat", "get_quant",
    "list_presets", "quant_names", "resolve_model",
]
