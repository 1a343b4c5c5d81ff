"""The command line's picture of a machine of different cards (``--gpu rtx-5090,rtx-3090``):
each card's load, the launch line and the speed of the mix."""

from __future__ import annotations

from typing import Any

from whichgpu.cli.common import console


def print_mixed(answer: Any) -> None:
    """A :class:`whichgpu.answers.mixed.MixedCardsAnswer` as tables."""
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    from whichgpu.catalog.gpu_list import describe_cards
    from whichgpu.units import GB

    result = answer.result
    plan = result.plan
    w = answer.workload
    title = (f"{w.model.name} - {w.quant_name}, engine {plan.engine}, on "
             f"{describe_cards(result.cards)}")
    t = Table(title=Text(title), title_justify="left", pad_edge=False)
    for name, just in (("Device", "left"), ("GPU", "left"), ("Layers", "right"),
                       ("Weights GB", "right"), ("KV GB", "right"), ("Other GB", "right"),
                       ("Need GB", "right"), ("Usable GB", "right"), ("Verdict", "left")):
        t.add_column(name, justify=just)  # type: ignore[arg-type]
    for c in plan.cards:
        colour = "green" if c.verdict == "fits" else "yellow" if c.verdict == "borderline" \
            else "red"
        t.add_row(str(c.index), c.gpu.id, str(c.layers), f"{c.weight_bytes / GB:,.2f}",
                  f"{c.kv_bytes / GB:,.2f}", f"{c.other_bytes / GB:,.2f}",
                  f"{c.need_bytes / GB:,.2f}", f"{c.gpu.usable_memory_bytes / GB:,.2f}",
                  f"[{colour}]{c.verdict}[/{colour}]")
    console.print(t)
    console.print(escape(str(plan.describe())))
    console.print(f"[bold]Launch:[/bold] {escape(plan.launch)}")
    if not plan.fits:
        console.print("[red]It does not fit these cards as split[/red]: a smaller format "
                      "(--quant), a shorter context or layers in host RAM (-ngl) would.")
    if plan.speed is not None:
        _print_speed(plan)
    other = result.other
    if other is not None:
        split = ", ".join(f"{c.layers} on {c.gpu.id}" for c in other.cards)
        if other.split == "suggested" and other.speed is not None and plan.speed is not None:
            r, mine = other.speed.decode_tokens_per_s_per_sequence, \
                plan.speed.decode_tokens_per_s_per_sequence
            console.print(f"[bold]Faster split that fits:[/bold] {split}: {r.typical:,.1f} "
                          f"tokens/s ({r.low:,.1f}-{r.high:,.1f}) against {mine.typical:,.1f}; "
                          f"{escape(other.launch)}")
        elif other.split == "default":
            console.print(f"[dim]llama.cpp's own split (by free memory), {split}, does not "
                          "fit: the split above does.[/dim]")
    for n in plan.notes:
        console.print(f"[yellow]note:[/yellow] {escape(str(n))}")
    for a in result.assumptions:
        console.print(f"[dim]assumes: {escape(str(a))}[/dim]")


def _print_speed(plan: Any) -> None:
    s = plan.speed
    r = s.decode_tokens_per_s_per_sequence
    p = s.prefill_tokens_per_s
    console.print(f"[bold]Decode:[/bold] {r.typical:,.1f} tokens/s per sequence "
                  f"({r.low:,.1f}-{r.high:,.1f}); prefill {p.typical:,.0f} tokens/s "
                  f"({p.low:,.0f}-{p.high:,.0f}).")
    shares = ", ".join(f"{c.gpu.id} {b:.0%} of the bytes, {t:.0%} of the time"
                       for c, b, t in zip(plan.cards, s.byte_share, s.time_share, strict=True))
    console.print(f"Each token: {shares}; hops {s.hop_s * 1e3:.3f} ms over {s.link}; the "
                  f"slowest card is {s.bound_by}.")
    alone = ", ".join(f"{k} {v.typical:,.1f}" for k, v in s.single_card.items())
    console.print(f"[dim]Each card alone, the whole model on it (tokens/s per sequence, memory "
                  f"aside): {alone}.[/dim]")
