"""Tables for ``memory``/``speed --task grpo|ppo`` (the RL plan) and ``--lora-adapters``."""

from __future__ import annotations

from typing import Any

from whichgpu.cli.common import console


def print_rl(plan) -> None:
    """The RL plan: memory per GPU by part, then the time of one step where a GPU is named."""
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    from whichgpu.units import GB

    s = plan.settings
    where = ("the training model generates (transformers)" if not s.uses_vllm
             else f"colocated, the engine takes {s.rollout_share:.0%} of each GPU"
             if s.colocated else f"{s.rollout_gpus} rollout GPU(s)")
    title = (f"{plan.model} - {s.task} ({s.tuning}, {s.framework.name}): {s.generations} "
             f"completions x {s.prompts} prompt(s), {s.prompt_tokens:,} + "
             f"{s.completion_tokens:,} tokens; {s.training_gpus} training GPU(s), {where}")
    t = Table(title=Text(title), title_justify="left", pad_edge=False)
    t.add_column("Part")
    t.add_column("GB", justify="right")
    t.add_column("How", overflow="fold")
    for p in (*plan.training_parts, *plan.rollout_parts):
        t.add_row(p.name, f"{p.bytes / GB:,.2f}", escape(str(p.said)))
    t.add_row("[bold]per training GPU[/bold]",
              f"[bold]{plan.peak_training_gpu_bytes / GB:,.2f}[/bold]",
              "peak, the larger of generation and training" if not s.uses_vllm else
              "peak, with the colocated engine's share" if s.colocated and plan.gpu else
              "peak, with what the colocated rollouts need" if s.colocated else "peak")
    if plan.peak_rollout_gpu_bytes is not None:
        t.add_row("[bold]per rollout GPU[/bold]",
                  f"[bold]{plan.peak_rollout_gpu_bytes / GB:,.2f}[/bold]", "vLLM engine")
    console.print(t)
    if plan.gpu is not None:
        verdict = "fits" if plan.fits else "does NOT fit"
        console.print(f"On {plan.gpu} ({(plan.usable_bytes or 0) / GB:,.1f} GB usable): "
                      f"{verdict}.")
    if plan.times:
        tt = Table(title="Time per step (seconds, low / typical / high)", title_justify="left",
                   pad_edge=False)
        tt.add_column("Phase")
        for c in ("low", "typical", "high"):
            tt.add_column(c, justify="right")
        for key in ("rollout_s", "training_s", "sync_s", "step_s"):
            r = plan.times[key]
            tt.add_row(key[:-2], f"{r.low:,.2f}", f"{r.typical:,.2f}", f"{r.high:,.2f}")
        console.print(tt)
        console.print(f"[bold]{plan.dominant}[/bold] dominates the step.")
        if plan.suggested_rollout_gpus is not None:
            console.print(f"With separate rollout GPUs: give about "
                          f"{plan.suggested_rollout_gpus} of {s.gpus} to the rollouts.")
    for w in plan.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(str(w))}")
    for a in plan.assumptions:
        console.print(f"[dim]- {escape(str(a))}[/dim]")


def print_multi_lora(data: dict[str, Any]) -> None:
    """The engine settings for many adapters, and how many slots fit on the GPU named."""
    from whichgpu.units import GB

    cost = data["throughput_cost"]
    console.print(
        f"[bold]LoRA adapters:[/bold] {data['adapters']} of rank {data['rank']} on "
        f"{data['engine']}: max_loras={data['max_loras']} max_lora_rank="
        f"{data['max_lora_rank']} max_cpu_loras={data['max_cpu_loras']}; "
        f"{data['slot_bytes'] / GB:,.3f} GB per GPU slot, {data['host_bytes'] / GB:,.2f} GB "
        f"in host RAM; throughput cost {cost['low']:.0%}-{cost['high']:.0%} "
        f"(typical {cost['typical']:.0%}).")
    if "max_loras_that_fit" in data:
        console.print(f"On {data['gpu']}: up to {data['max_loras_that_fit']} adapter slots "
                      "(max_loras) fit beside the KV cache of this concurrency.")


def print_rl_ranking(answer) -> None:
    """``recommend --task grpo|ppo``: the options by cost per step, why, then the best plan."""
    from rich.markup import escape
    from rich.table import Table

    from whichgpu.units import GB, format_money

    for line in answer.explanation:
        console.print(escape(str(line)))
    shown = answer.shown()
    if shown:
        t = Table(title=f"RL options ({answer.request.task}), ranked by "
                  f"{answer.request.objective}", title_justify="left", pad_edge=False)
        for col in ("#", "GPUs", "GB per GPU", "Price/h", "Step s", "Per step", "Total",
                    "Provider"):
            t.add_column(col, justify="left" if col in ("GPUs", "Provider") else "right")
        for i, o in enumerate(shown, 1):
            p, r = o.plan, o.step_s
            t.add_row(str(i), f"{o.count} x {o.gpu.id}",
                      f"{p.peak_training_gpu_bytes / GB:,.1f} of "
                      f"{(p.usable_bytes or 0) / GB:,.0f}",
                      format_money(o.price_per_hour),
                      f"{r.typical:,.1f} ({r.low:,.1f}-{r.high:,.1f})",
                      format_money(o.cost_per_step),
                      format_money(o.total_cost) if o.total_cost else "-",
                      o.offer.provider)
        console.print(t)
    if answer.excluded:
        console.print(f"[dim]{len(answer.excluded)} GPU x count configuration(s) excluded "
                      "(--json lists each with why); e.g.: "
                      f"{answer.excluded[0].count} x {answer.excluded[0].gpu.id}: "
                      f"{escape(str(answer.excluded[0].reason))}[/dim]")
    for a in answer.assumptions:
        console.print(f"[dim]- {escape(str(a))}[/dim]")
    from whichgpu.cli.prices_cmds import print_price_origin

    print_price_origin(answer.selection)  # where the prices come from, their date and warnings
