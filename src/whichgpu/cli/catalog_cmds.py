"""``whichgpu gpus`` (the catalog with cost per TFLOP) and ``whichgpu gpu ID`` (one GPU)."""

from __future__ import annotations

import typer

from whichgpu.answers import requests as req
from whichgpu.cli.bind import bind
from whichgpu.cli.common import console, emit_json, note, show


def register(app: typer.Typer) -> None:
    bind(app, req.Gpus, gpus)
    bind(app, req.Gpu, gpu)


def gpus(q: req.Gpus) -> None:
    from whichgpu.answers.catalog import gpus as answer

    show(answer(q), q.as_json, _print_gpus)


def _print_gpus(answer) -> None:
    from rich.table import Table

    from whichgpu.cli.prices_cmds import print_price_origin
    from whichgpu.units import format_money

    rows, selection, precision = answer.rows, answer.selection, answer.request.precision
    offers = list(selection.offers)
    meaning = rows[0].figure.meaning if rows else precision
    if ":" not in precision:
        meaning = meaning.split(",")[0] + ", dense" if "," not in meaning else meaning
    table = Table(title=f"GPU catalog - TFLOPS: {precision} ({meaning})", title_justify="left",
                  pad_edge=False, expand=False)
    table.add_column("GPU", no_wrap=True)
    table.add_column("Form", no_wrap=True)
    table.add_column("GB", justify="right")
    table.add_column("GB/s", justify="right")
    table.add_column("TFLOPS", justify="right")
    if offers is not None:
        table.add_column("Price/h", justify="right")
        table.add_column("/TFLOP-h", justify="right")
    table.add_column("TDP W", justify="right")
    for r in rows:
        g = r.gpu
        tf = (f"{r.figure.tflops:,.0f}" if r.figure.tflops else
              "no" if r.figure.status == "unsupported" else "?")
        cells = [g.id, g.form_factor, f"{float(g.memory_gb.value):g}",
                 f"{float(g.bandwidth_gb_s.value):,.0f}", tf]
        if offers is not None:
            cells += [format_money(r.price_per_gpu_hour) if r.price_per_gpu_hour else "-",
                      format_money(r.cost_per_tflop_hour, 4) if r.cost_per_tflop_hour else "-"]
        cells.append(f"{g.tdp_watts:,.0f}")
        table.add_row(*cells)
    console.print(table)
    console.print("[dim]GB = 10^9 bytes as marketed; 'no' = unsupported, '?' = unknown. "
                  "'whichgpu gpu ID' shows every figure with its source.[/dim]")
    print_price_origin(selection)
    if offers is not None and ":" not in precision and precision in ("bf16", "fp16"):
        console.print("[dim]GeForce figures are FP32-accumulate; --precision fp16_acc16 uses the "
                      "FP16-accumulate rate some inference engines get (S22).[/dim]")


def gpu(q: req.Gpu) -> None:
    from whichgpu.answers.catalog import gpu as answer

    result = answer(q)
    if result.note:
        note(result.note)
    if q.as_json:
        emit_json(result.to_json())
        return
    _print_gpu(result)


def _print_gpu(result) -> None:
    from rich.table import Table

    from whichgpu.catalog.describe import platform_text, purchase_price_text, sources_of
    from whichgpu.catalog.gpus import ENGINE_LABELS, PRECISIONS, default_catalog
    from whichgpu.units import format_bytes_both, format_money

    catalog = default_catalog()
    g, offers, uses, lang = result.gpu, result.offers, result.uses, result.lang
    console.print(f"[bold]{g.name}[/bold]  ({g.id}; {g.vendor}, {g.form_factor})")
    specs = Table(show_header=True, pad_edge=False)
    specs.add_column("Spec")
    specs.add_column("Value")
    specs.add_column("Source", overflow="fold")

    def add(label: str, sv, text: str | None = None) -> None:
        value = text if text is not None else str(sv.value)
        if sv.note:
            value += f"\n[dim]{sv.note}[/dim]"
        specs.add_row(label, value, sv.source)

    specs.add_row("Form factor", g.form_factor, g.form_factor_source)
    add("Platform", g.platform, platform_text(g, catalog))
    if g.engines is not None:
        add("Engines", g.engines, ", ".join(ENGINE_LABELS.get(e, e) for e in g.engines.value))
    add("Architecture", g.architecture)
    add("Compute capability", g.compute_capability)
    add("Launch year", g.launch_year)
    add("Memory (marketed)", g.memory_gb, format_bytes_both(g.memory_bytes))
    add("Memory (usable)", g.memory_usable_mib,
        f"{int(g.memory_usable_mib.value):,} MiB = {format_bytes_both(g.usable_memory_bytes)}")
    add("Memory type", g.memory_type)
    add("Bandwidth", g.bandwidth_gb_s, f"{float(g.bandwidth_gb_s.value):,.0f} GB/s")
    add("TDP", g.tdp_w, f"{g.tdp_watts:,.0f} W")
    ic = g.interconnect
    add("Interconnect", ic.kind)
    add("  bandwidth per GPU", ic.bandwidth_gb_s,
        f"{float(ic.bandwidth_gb_s.value):,.1f} GB/s {ic.direction.value}")
    add("  peer-to-peer", ic.peer_to_peer, "yes" if ic.peer_to_peer.value else "no")
    add("  GPUs per domain", ic.domain_gpus)
    add("  host link", ic.host_link)
    price = g.purchase_price or g.no_public_price
    if price is not None:
        specs.add_row("Purchase price", purchase_price_text(g)
                      + (f"\n[dim]{price.note}[/dim]" if price.note else ""), price.source)
    else:
        specs.add_row("Purchase price", "unknown", "")
    console.print(specs)

    tp = Table(title="Dense throughput", title_justify="left", pad_edge=False)
    tp.add_column("Precision")
    tp.add_column("Dense", justify="right")
    tp.add_column("Sparse", justify="right")
    tp.add_column("Meaning")
    tp.add_column("Source")
    for key, (meaning, _acc) in PRECISIONS.items():
        t = g.throughput.get(key)
        if t is None:
            continue
        dense = f"{t.tflops:,.1f}" if t.status == "supported" else "unsupported"
        sparse = f"{t.sparse_tflops:,.1f}" if t.sparse_tflops else ""
        tp.add_row(key, dense, sparse, meaning + (f"\n[dim]{t.note}[/dim]" if t.note else ""),
                   t.source or "")
    console.print(tp)

    if offers:
        ot = Table(title="Offers", title_justify="left", pad_edge=False)
        for col in ("Set", "Provider", "GPUs", "Price/GPU-h", "Billing", "Source"):
            ot.add_column(col)
        ranked = sorted(offers, key=lambda o: (o.price_per_hour.currency,
                                               o.price_per_gpu_hour.amount))
        for o in ranked[:12]:
            ot.add_row(o.offer_set or "", o.provider, str(o.gpu_count),
                       format_money(o.price_per_gpu_hour) + (" spot" if o.spot else ""),
                       o.billing.describe(), o.source or "")
        console.print(ot)
        if len(ranked) > 12:
            console.print(f"[dim]{len(ranked) - 12} more offers: 'whichgpu prices list "
                          f"{g.id}' lists them with their age.[/dim]")
    else:
        console.print("[dim]No offer for this GPU in the shipped offer sets.[/dim]")
    if uses:
        console.print("[bold]What the articles say it is best for[/bold]")
        for u in uses:
            console.print(f"  - {u.text(lang)} [dim]({u.source})[/dim]")
    keys = sources_of(g)
    console.print("[bold]Sources[/bold]")
    for k in keys:
        url = catalog.source_url(k)
        console.print(f"  {k}: {url}" if url != k else f"  {k}: shared/seed-facts.md")

