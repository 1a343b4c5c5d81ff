"""``whichgpu mcp``: whichgpu as an MCP server on stdin/stdout, for an assistant or an editor
that speaks the Model Context Protocol (the tools: agents/tools.py)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)


# (\\[ in the help: rich markup would take [mcp] for a style)
def mcp() -> None:
    """Serve whichgpu's answers to an MCP client over stdio: tools for recommend, memory,
    fits, fits_gpu, speed, prices, cost, rent_or_buy and export, and the GPU catalog and
    current offers as resources. The client starts it; it reads JSON-RPC on stdin and writes
    only JSON-RPC on stdout. Needs the 'mcp' extra (pip install 'whichgpu\\[mcp]')."""
    from whichgpu.agents.local import main
    from whichgpu.agents.server import require_sdk

    require_sdk()
    from whichgpu.cli.process import long_running

    long_running()
    main()
