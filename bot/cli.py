"""`sourced`: the command line entry point. Each subcommand lives in `bot.commands.<name>`."""

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from sqlalchemy.exc import OperationalError

from bot.commands import ask, audit, bench, demo, doctor, feedback, ingest, serve, start, sync
from bot.commands import eval as eval_command
from core.config import ConfigError
from core.domain import OperatorError
from core.log_privacy import quiet_libraries

DESCRIPTION = ("Sourced answers questions from your company's documents: every answer cites a source it checked, "
               "and when it cannot answer it says so and who can help. Start with `sourced demo`, or "
               "`sourced ingest FOLDER` then `sourced ask \"QUESTION\"`; `sourced start` runs it in Slack.")
EPILOG = "Run `sourced COMMAND --help` for a command's options."

COMMANDS = (start, demo, ingest, sync, ask, audit, feedback, serve, doctor, eval_command, bench)


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="sourced", description=DESCRIPTION, epilog=EPILOG)
    root.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    subparsers = root.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(subparsers)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    quiet_libraries()  # -v is our debug details, never a library's whole HTTP responses
    try:
        code: int = args.run(args)
        sys.stdout.flush()  # a closed pipe shows here, not as a traceback at exit
    except BrokenPipeError:  # `sourced ask ... | head`: the reader has gone; nothing to say to anyone
        silence_stdout()
        return 141  # 128 + SIGPIPE, as a shell reports a command a closed pipe ended
    except ConfigError as error:
        print(f"sourced: configuration error: {error}", file=sys.stderr)
        return 2
    except OperatorError as error:  # each says what to install, set or free, in one line
        print(f"sourced: {error}", file=sys.stderr)
        return 2
    except OperationalError as error:  # unreachable, locked past its busy timeout, out of disk: one line
        reason = (str(error.orig or error).splitlines() or [type(error).__name__])[0]
        print(f"sourced {args.command}: the database is unavailable ({reason})", file=sys.stderr)
        return 1
    return code


def silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush at exit has nowhere to fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (a test's capture): no flush
        pass


if __name__ == "__main__":
    sys.exit(main())
