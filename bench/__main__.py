"""``python -m bench [options]``, from the checkout's root: our scoring speed against lm-eval.

The benchmark is :mod:`bench.speed` (its options: :mod:`bench.speed.cli`), measurement code
that is not part of the installed package (docs/performance.md).  Its command line keeps the
contract of ``enade-bench``'s commands: bad input, a usage error or a refused option, is one
``error: …`` line on stderr and exit status 2, before any model is loaded, never a traceback;
Ctrl-C is one line and exit status 130.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from bench.speed.cli import add_arguments, run
from enade_bench.cli.main import EXIT_INTERRUPTED, OneLineErrorParser, exit_process
from enade_bench.cli.streams import safe_stdout
from enade_bench.errors import UserError
from enade_bench.masking import scrub
from enade_bench.masking.stream import scrubbed_stderr

#: How the benchmark is run: its usage line, and the prefix of its usage errors.
PROG = "python -m bench"


def build_parser() -> OneLineErrorParser:
    """The benchmark's parser: :func:`bench.speed.cli.add_arguments` (no engine imported)."""
    parser = OneLineErrorParser(
        prog=PROG, description="Benchmark scoring speed against lm-evaluation-harness (docs/performance.md)."
    )
    add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark on ``argv`` (default: the command line); return the exit status."""
    with scrubbed_stderr():  # every stderr line through the check every file gets, as enade-bench's
        try:
            with safe_stdout():
                return _main(argv)
        except OSError as exc:  # stdout's last flush (>/dev/full)
            print(f"error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
            return UserError.exit_code


def _main(argv: Sequence[str] | None) -> int:
    from enade_bench.results.writable import check_output_file  # noqa: PLC0415 (not at --help)

    try:
        args = build_parser().parse_args(argv)
        if args.out is not None:
            check_output_file(args.out, "--out")
        return run(args)
    except UserError as exc:  # a usage error, --out, or a user's error in a worker
        print(f"error: {scrub(str(exc))}", file=sys.stderr)
    except ValueError as exc:  # the benchmark's own checks of its options
        print(f"error: bench: {scrub(str(exc))}", file=sys.stderr)
    except OSError as exc:  # an OS failure after the up-front checks (disk full, folder removed)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {scrub(f'{where}{exc.strerror or exc}')}", file=sys.stderr)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return UserError.exit_code


if __name__ == "__main__":
    exit_process(main())
