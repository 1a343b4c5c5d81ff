"""whichgpu where agents ask: an MCP server (Model Context Protocol) over the answer layer.

- ``tools``: the tools (recommend, memory, fits, speed, prices, cost, rent_or_buy, export),
  each a request model of answers/requests.py (its input schema is that model's JSON
  schema), its answer's JSON (the command line's ``--json``) and a short summary; the
  resources (the GPU catalog, the current offers). Nothing here imports the SDK.
- ``server``: those tools as an MCP server on the official ``mcp`` SDK (the ``mcp`` extra),
  given a :class:`~whichgpu.agents.tools.Surface` that answers them: the command line's
  (``local``: ``whichgpu mcp`` over stdio) or the web service's (web/mcp_mount.py: the same
  tools over streamable HTTP at ``/mcp``).

The SDK is imported only when a server is built, so ``whichgpu --help`` never loads it.
"""
