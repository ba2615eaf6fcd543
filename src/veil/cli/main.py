"""Entry point of the ``veil`` command.

Each sub-command lives in its own module ``veil.cli._<name>`` exposing
``register(subparsers: argparse._SubParsersAction) -> None``; ``register`` adds a parser and
sets ``func`` (a callable taking the parsed ``argparse.Namespace`` and returning an exit code).

User errors (:class:`veil.errors.VeilError`) print one line on stderr and exit with status 2;
``--debug`` (before or after the sub-command) prints the traceback instead.  Any other
exception is an internal error: one line naming its type (not its text, which may quote the
data: a pandas or numpy message often does) and exit status 70 (``EX_SOFTWARE``); ``--debug``
shows its traceback.  The traceback is the only place an exception chain is printed.  A reader
that stops early (``veil check ... | head``) is not an error: the command stops quietly with
status 141, as a tool killed by ``SIGPIPE`` does.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Sequence

from veil import __version__
from veil.errors import VeilError

#: Sub-command modules, in the order they appear in ``veil --help``.
COMMAND_MODULES: tuple[str, ...] = (
    "veil.cli._scan",
    "veil.cli._anonymize",
    "veil.cli._reidentify",
    "veil.cli._check",
    "veil.cli._query",
    "veil.cli._crypto",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: one line, exit 2
        self.exit(2, f"veil: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="veil",
        description="Veil: de-identify, anonymize and analyse personal data with privacy guarantees.",
    )
    parser.add_argument("--version", action="version", version=f"veil {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show full tracebacks instead of one-line errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for mod_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(mod_name)
        except ModuleNotFoundError as exc:
            if exc.name == mod_name:  # command not built yet
                continue
            raise
        module.register(sub)
    _accept_debug_everywhere(sub)
    return parser


def _accept_debug_everywhere(action: argparse._SubParsersAction) -> None:
    """Let ``--debug`` follow any (nested) sub-command too: ``veil check ... --debug``.

    ``default=argparse.SUPPRESS`` keeps a sub-parser from resetting a ``--debug`` given before
    the sub-command (argparse copies sub-parser defaults over the main namespace).
    """
    seen: set[int] = set()
    for parser in action.choices.values():
        if id(parser) in seen:  # aliases share one parser
            continue
        seen.add(id(parser))
        if "--debug" not in parser._option_string_actions:
            parser.add_argument(
                "--debug",
                action="store_true",
                default=argparse.SUPPRESS,
                help="show full tracebacks instead of one-line errors",
            )
        for sub_action in parser._actions:
            if isinstance(sub_action, argparse._SubParsersAction):
                _accept_debug_everywhere(sub_action)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: object = None,
    line: str | None = None,
) -> None:
    """Print a warning as one line (no source path and code line, which mean nothing here)."""
    text = " ".join(str(message).split())
    print(f"veil: warning: {text}", file=sys.stderr)


#: Exit status when the reader of stdout went away (128 + SIGPIPE, what a shell reports).
BROKEN_PIPE_STATUS = 141

#: Exit status of an internal error (an exception that is not a Veil user error): sysexits'
#: ``EX_SOFTWARE``.
INTERNAL_ERROR_STATUS = 70


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's final flush cannot fail again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced stdout (tests): nothing to redirect
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _report(debug: bool, message: str) -> None:
    """Report the exception being handled: its traceback under ``--debug``, else ``message``.

    Call it from an ``except`` block; ``message`` is printed as one ``veil: error:`` line.
    """
    if debug:
        traceback.print_exc()
    else:
        print(f"veil: error: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``veil`` command; returns the process exit code."""
    if sys.stdout is None:  # started with stdout closed (`>&-`): output is discarded, as print()
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # does; json.dump would crash
    if sys.stderr is None:  # `2>&-`: print(file=None) would write messages to stdout, and
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # sys.stderr.isatty() would crash
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        with warnings.catch_warnings():
            if not debug:  # one line per warning, like the errors (--debug keeps Python's form)
                warnings.showwarning = _show_warning
            status = int(args.func(args) or 0)
            sys.stdout.flush()  # a closed pipe surfaces here, not in the interpreter's exit
            return status
    except BrokenPipeError:  # `veil ... | head`: the reader has all it wanted
        _silence_stdout()
        return BROKEN_PIPE_STATUS
    except VeilError as exc:
        _report(debug, " ".join(str(exc).split()))
        return 2
    except OSError as exc:  # disk full, permission denied, a path through a file, ...
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        _report(debug, f"{exc.strerror or exc}{where}")
        return 2
    except KeyboardInterrupt:
        print("veil: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug or an unexpected library error: its text may quote data
        _report(
            debug,
            f"internal error ({type(exc).__name__}) in veil {args.command}; its message is not "
            "shown because it may quote your data: rerun with --debug to see the traceback, "
            "and report it if the input is valid",
        )
        return INTERNAL_ERROR_STATUS


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
