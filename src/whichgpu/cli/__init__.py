"""The ``whichgpu`` command line: a thin shell over the Python API.

Heavy modules are imported inside each command so that ``whichgpu --help`` starts fast.
"""

from __future__ import annotations

import sys
from typing import NoReturn


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning known errors into one line and an exit status.

    Called as the program (no ``argv``), the process runs as one short answer and ends
    without the interpreter's teardown (cli/process.py); called with ``argv``, it exits with
    ``SystemExit`` as any command line does."""
    if argv is not None:
        _main(argv)
    from whichgpu.cli import process

    process.start(sys.argv[1:])
    try:
        _main(sys.argv[1:])
    except SystemExit as done:
        process.leave(done.code)


def _main(args: list[str]) -> NoReturn:
    """The command line ``args``, to its end (always ``SystemExit``)."""
    from whichgpu.errors import WhichGPUError

    args = list(args)
    debug = "--debug" in args
    import typer

    from whichgpu.cli.app import app
    from whichgpu.cli.common import input_failure, machine_failure

    # typer's own copy of click, whose exceptions its parser raises
    click = sys.modules[typer.BadParameter.__module__]
    try:
        # Usage errors come back here (not typer's boxed panel): one line, exit status 2.
        status = app(args=args, prog_name="whichgpu", standalone_mode=False)
    except click.NoArgsIsHelpError as exc:  # a bare group: its help, as typer shows it
        exc.show()
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "whichgpu"
        print(f"error: {exc.format_message()} (see '{where} --help')", file=sys.stderr)
        sys.exit(2)
    except click.ClickException as exc:
        print(f"error: {exc.format_message()}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(130)
    except WhichGPUError as exc:
        if debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # the machine, bad input the parsers missed, or a bug: say which
        if debug:
            raise
        bad_input = input_failure(exc)
        if bad_input is not None:
            print(f"error: {bad_input}", file=sys.stderr)
            sys.exit(2)
        failure = machine_failure(exc)
        if failure is not None:
            print(f"error: {failure}", file=sys.stderr)
            sys.exit(1)
        print(f"internal error: {type(exc).__name__}: {str(exc)[:300]}\n"
              "run again with --debug for the traceback, and please report it", file=sys.stderr)
        sys.exit(1)
    sys.exit(status if isinstance(status, int) else 0)
