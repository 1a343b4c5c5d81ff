"""Cross-check the parameter counts of the config parsers against the models transformers builds.

For every decoder preset (or the aliases given), transformers instantiates the model class its
config names on the ``meta`` device (no weights, no download) and the script prints its count
(parameters + persistent buffers) beside whichgpu's ``params_total``. Neither side counts
multi-token-prediction layers (transformers does not load them). Needs ``torch`` and
``transformers``, which whichgpu does not depend on:

    pip install torch transformers        # in any environment that also has whichgpu
    python scripts/check_counts_with_transformers.py [alias ...]
    python scripts/check_counts_with_transformers.py --pipelines [alias ...]   # needs diffusers

A model type transformers does not register is built as the architecture it is a copy of
(Kimi K2 as DeepSeek-V3, which its config.json's auto_map points to); any other class it cannot
build is reported as not built, not skipped silently.
"""

from __future__ import annotations

import sys
import warnings

# model types shipped with remote code whose architecture transformers has under another name
_SAME_AS = {"kimi_k2": "deepseek_v3"}


def _build(config: dict):
    import torch
    import transformers

    config = dict(config, model_type=_SAME_AS.get(config["model_type"], config["model_type"]))
    cfg = transformers.AutoConfig.for_model(**config)
    error: Exception | None = None
    for auto in (transformers.AutoModelForImageTextToText, transformers.AutoModelForCausalLM):
        try:
            with torch.device("meta"):
                return auto.from_config(cfg)
        except (ValueError, KeyError) as exc:
            error = exc
    raise error  # type: ignore[misc]


def _count(model) -> int:
    kept = set(model.state_dict())
    return (sum(p.numel() for p in model.parameters())
            + sum(b.numel() for name, b in model.named_buffers() if name in kept))


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore")
    try:
        import transformers
    except ImportError:
        print("needs torch and transformers: pip install torch transformers")
        return 2
    from whichgpu.models.preset_index import load_preset, presets

    chosen = [p for p in presets() if p.family == "decoder" and (not argv or p.alias in argv)]
    print(f"transformers {transformers.__version__}")
    print(f"{'preset':28s} {'whichgpu':>18s} {'transformers':>18s} {'difference':>12s}")
    mismatches = 0
    for p in chosen:
        ours = load_preset(p).params_total
        try:
            theirs = _count(_build(p.read_json("config.json")))
        except Exception as exc:  # any class transformers cannot build is reported
            print(f"{p.alias:28s} {ours:>18,} {'not built':>18s}  ({type(exc).__name__}: "
                  f"{str(exc).splitlines()[0][:60]})")
            continue
        diff = theirs - ours
        mismatches += diff != 0
        print(f"{p.alias:28s} {ours:>18,} {theirs:>18,} {diff:>+12,}")
    print(f"{len(chosen)} presets, {mismatches} with a different count")
    return 0


def _build_component(cls: str, config: dict):
    """A pipeline component on the meta device: a diffusers class by name, else transformers."""
    import torch

    with torch.device("meta"):
        import diffusers

        if hasattr(diffusers, cls):
            return getattr(diffusers, cls).from_config(config)
        import transformers

        cfg = transformers.AutoConfig.for_model(**config)
        return getattr(transformers, cls)._from_config(cfg)


def main_pipelines(argv: list[str]) -> int:
    """Every component of every pipeline preset (or the aliases given), built with diffusers
    (transformers for the text encoders), beside whichgpu's count."""
    try:
        import diffusers
    except ImportError:
        print("needs torch, diffusers and transformers: pip install torch diffusers transformers")
        return 2
    from whichgpu.models.preset_index import load_preset, presets

    chosen = [p for p in presets() if p.family == "diffusion" and (not argv or p.alias in argv)]
    print(f"diffusers {diffusers.__version__}")
    print(f"{'preset / component':44s} {'whichgpu':>16s} {'diffusers':>16s} {'difference':>12s}")
    mismatches = 0
    for p in chosen:
        spec = load_preset(p).diffusion
        index = p.read_json("model_index.json")
        for comp in spec.components:
            cls = index[comp.name][1]
            name = f"{p.alias} / {comp.name}"
            config = p.read_json(f"{comp.name}/config.json") or {}
            try:
                theirs = _count(_build_component(cls, config))
            except Exception as exc:  # reported, never skipped silently
                print(f"{name:44s} {comp.params:>16,} {'not built':>16s}  ({type(exc).__name__}: "
                      f"{str(exc).splitlines()[0][:50]})")
                continue
            diff = theirs - comp.params
            mismatches += diff != 0
            print(f"{name:44s} {comp.params:>16,} {theirs:>16,} {diff:>+12,}")
    print(f"{len(chosen)} pipelines, {mismatches} components with a different count")
    return 0


if __name__ == "__main__":
    if "--pipelines" in sys.argv[1:]:
        warnings.filterwarnings("ignore")
        raise SystemExit(main_pipelines([a for a in sys.argv[1:] if a != "--pipelines"]))
    raise SystemExit(main(sys.argv[1:]))
