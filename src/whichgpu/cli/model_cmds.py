"""``whichgpu model MODEL`` (one model's architecture and parameters) and ``whichgpu models``
(the shipped presets)."""

from __future__ import annotations

import typer

from whichgpu.answers import requests as req
from whichgpu.cli.bind import bind
from whichgpu.cli.common import console, show


def register(app: typer.Typer) -> None:
    bind(app, req.Model, model)
    bind(app, req.Models, models)


def model(q: req.Model) -> None:
    from whichgpu.answers.catalog import model as answer

    show(answer(q), q.as_json, lambda a: _print_spec(a.spec))


def _print_spec(spec) -> None:
    from rich.markup import escape
    from rich.table import Table

    from whichgpu.models.describe import attention_summary
    from whichgpu.units import format_bytes_both, format_count

    flag = " [yellow](approximation)[/yellow]" if spec.approximate else ""
    console.print(f"[bold]{escape(spec.name)}[/bold]{flag}  ({spec.architecture}, "
                  f"{spec.family}; {escape(spec.source)})")
    if spec.hub_id:
        console.print(f"Hub id: {spec.hub_id}")
    total, active = spec.params_total, spec.params_active
    line = f"Parameters: {format_count(total, 2)} ({total:,})"
    if active != total:
        line += f", active per token/step: {format_count(active, 2)} ({active:,})"
    console.print(line)

    if spec.family == "diffusion" and spec.diffusion:
        d = spec.diffusion
        t = Table(title="Components", title_justify="left", pad_edge=False)
        for col in ("Component", "Kind", "Parameters", "dtype"):
            t.add_column(col, justify="right" if col == "Parameters" else "left")
        for c in d.components:
            star = " (denoiser)" if c.name == d.denoiser else ""
            t.add_row(c.name + star, c.kind, f"{c.params:,}", c.native_dtype)
        console.print(t)
        w, h = d.default_resolution
        frames = f", {d.default_frames} frames" if d.is_video else ""
        console.print(
            f"{d.pipeline}: latent {d.latent_channels} ch at 1/{d.vae_scale_factor} scale"
            + (f", 1/{d.temporal_compression} in time" if d.is_video else "")
            + f", patch {d.patch_size}; {d.image_tokens(w, h, d.default_frames):,} tokens at "
            f"{w}x{h}{frames}; {d.text_tokens} text tokens; {d.default_steps} steps; "
            + ("guidance-distilled (one pass per step)" if d.guidance_distilled
               else "classifier-free guidance (two passes per step)"))
    else:
        t = Table(title="Architecture", title_justify="left", pad_edge=False, show_header=False)
        t.add_column("Field")
        t.add_column("Value")
        att = attention_summary(spec)
        attn = f"{att['full']} full"
        if att["sliding"]:
            windows = ", ".join(map(str, att["sliding_windows"]))
            attn += f", {att['sliding']} sliding (window {windows})"
        if att["chunked"]:
            chunks = ", ".join(map(str, att["chunk_sizes"]))
            attn += f", {att['chunked']} chunked (chunk {chunks})"
        if att["linear"]:
            attn += f", {att['linear']} linear/SSM"
        if att["none"]:
            attn += f", {att['none']} MLP/MoE only"
        rows = [
            ("layers", str(spec.num_layers)), ("hidden size", str(spec.hidden_size)),
            ("attention heads / KV heads",
             f"{spec.num_attention_heads} / {spec.num_kv_heads}"),
            ("head dim", str(spec.head_dim)),
            ("intermediate size", str(spec.intermediate_size)),
            ("vocabulary", f"{spec.vocab_size:,}"),
            ("tied embeddings", "yes" if spec.tie_word_embeddings else "no"),
            ("max context", f"{spec.max_context:,}"), ("attention layers", attn),
            ("native dtype", spec.native_dtype + (f", shipped as {spec.quantization}"
                                                  if spec.quantization else "")),
        ]
        if spec.moe:
            m = spec.moe
            rows.append(("MoE", f"{m.num_experts} experts, {m.experts_per_token} per token, "
                         f"{m.num_shared_experts} shared; {m.moe_layers} MoE + "
                         f"{m.dense_layers} dense layers"))
        if spec.mla:
            rows.append(("MLA", f"kv_lora_rank {spec.mla.kv_lora_rank}, rope "
                         f"{spec.mla.qk_rope_head_dim}: {spec.mla.cache_elements_per_token} "
                         "cached elements per token per layer"))
        for k, v in rows:
            t.add_row(k, v)
        console.print(t)
        b = Table(title="Parameters by component", title_justify="left", pad_edge=False)
        b.add_column("Component")
        b.add_column("Parameters", justify="right")
        b.add_column("Share", justify="right")
        for key, value in spec.params.to_json().items():
            if key in ("total", "active") or not value:
                continue
            b.add_row(key, f"{value:,}", f"{value / total:.1%}" if total else "")
        console.print(b)
    if spec.checkpoint:
        c = spec.checkpoint
        kinds = ", ".join(f"{k} {format_bytes_both(v)}" for k, v in c.bytes_by_dtype.items())
        console.print(f"Checkpoint: {format_bytes_both(c.total_bytes)} in {c.tensor_count} "
                      f"tensors ({kinds}) [dim]{c.source}[/dim]")
    for n in spec.notes:
        console.print(f"[dim]- {escape(n)}[/dim]")


def models(q: req.Models) -> None:
    from whichgpu.answers.catalog import models as answer

    show(answer(q), q.as_json, _print_models)


def _print_models(answer) -> None:
    from rich.table import Table

    from whichgpu.units import format_count

    rows = answer.rows
    t = Table(title="Model presets (offline)", title_justify="left", pad_edge=False)
    for col in ("Alias", "Params", "Active", "Official", "Error", "Hub id"):
        t.add_column(col, justify="left" if col in ("Alias", "Hub id") else "right",
                     overflow="fold")
    for r in rows:
        active = format_count(r.params_active, 2) if r.params_active != r.params_total else ""
        t.add_row(r.alias, format_count(r.params_total, 2), active,
                  format_count(r.official_params, 2), f"{r.official_error:+.2%}",
                  r.hub_ids[0] if r.hub_ids else "")
    console.print(t)
    console.print("[dim]Official: the publisher's count (for a pipeline, its denoiser's) and "
                  "how far the count computed from the shipped config is from it. "
                  "'whichgpu model ALIAS' shows the full spec.[/dim]")
