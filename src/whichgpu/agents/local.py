"""The command line's surface for ``whichgpu mcp``: the same request models, the same
answers and the same context as the command line (this machine's price store, files and
Hub), so a tool's JSON is the JSON of ``whichgpu ... --json``."""

from __future__ import annotations

from typing import Any

from whichgpu.agents.tools import Answer
from whichgpu.answers.request import Request


class LocalSurface:
    """Answers as the command line does, each in a worker thread (the event loop keeps
    answering pings while one computes)."""

    def request_model(self, model: type[Request], body: bool) -> type[Request]:
        return model

    async def answer(self, answer: str, request: Request) -> Answer:
        import anyio

        return await anyio.to_thread.run_sync(compute, answer, request)


def compute(answer: str, request: Request) -> Answer:
    """``whichgpu.answers.<answer>(request)`` as its JSON and its notes; an export's header
    gives the command line that asks the same question."""
    import whichgpu.answers as answers
    from whichgpu.answers.command_line import command_line

    fn = getattr(answers, answer)
    extra: dict[str, Any] = {}
    if answer == "recommend":
        extra["command_line"] = command_line(request)
    result = fn(request, **extra)
    notes = tuple(str(n) for n in getattr(result, "notes", ()) or ())
    return Answer(result.to_json(), notes)


def main() -> None:
    """Run the server on stdin/stdout (``whichgpu mcp``)."""
    import anyio

    from whichgpu.agents.server import serve_stdio

    anyio.run(serve_stdio, LocalSurface())
