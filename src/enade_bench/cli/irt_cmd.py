"""``enade-bench irt``: IRT scoring and calibration with fixed or estimated items.

``irt score`` (a stable contract; scripts call it)::

    enade-bench irt score --items ITEMS.csv --responses RESPONSES.csv --out OUT.csv
        [--method eap|map|ml|wle] [--quadpts N] [--theta-lim L] [--preset mirt|inep]
        [--scale enem:AREA]

writes ``respondent_id,theta,se,lz,lz_star,n_items,n_correct`` (plus ``score``
with ``--scale``). ``irt calibrate`` estimates item parameters (MML-EM, 2PL
with priors by default) and writes an ITEMS.csv that ``irt score`` reads.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from enade_bench.benchmarks.commands import extend
from enade_bench.cli import irt_prior_cmd
from enade_bench.errors import UserError
from enade_bench.results.writable import check_output_file

if TYPE_CHECKING:
    from enade_bench.psychometrics.estimation import Quadrature

#: ``psychometrics.estimation.METHODS`` and ``PRESETS``' names, written here so that ``irt --help``
#: imports no psychometrics (pandas, scipy); tests/cli/test_cli_start.py keeps them equal.
THETA_METHODS = ("eap", "map", "ml", "wle")
QUADRATURE_PRESETS = ("inep", "mirt")


def register(subparsers: Any) -> None:
    """Add the ``irt`` command to the main parser: the exam-free ``score``, ``calibrate`` and
    ``debias``, then the exams' own sub-commands (ENEM's, on its runs and INEP's items)."""
    irt = subparsers.add_parser("irt", help="IRT ability, person fit and item calibration")
    sub = irt.add_subparsers(dest="irt_command", required=True, parser_class=type(irt))

    score = sub.add_parser("score", help="estimate theta, SE, l_z and l_z* with fixed item parameters")
    score.add_argument("--items", required=True, help="ITEMS.csv: item_id,a,b[,c]")
    score.add_argument(
        "--responses", required=True, help="RESPONSES.csv: respondent_id + one column per item"
    )
    score.add_argument("--out", required=True, help="OUT.csv to write")
    score.add_argument("--method", choices=THETA_METHODS, default="eap", help="theta estimator (default eap)")
    score.add_argument(
        "--preset", choices=QUADRATURE_PRESETS, default="mirt", help="quadrature preset (default mirt)"
    )
    score.add_argument("--quadpts", type=int, help="quadrature points (default: the preset's, mirt 121)")
    score.add_argument("--theta-lim", type=float, help="theta range [-L, L] (default: the preset's, mirt 6)")
    score.set_defaults(handler=run_score, scale=None)
    extend("irt score", score)  # an exam's score scale (ENEM's --scale enem:AREA)

    cal = sub.add_parser("calibrate", help="estimate item parameters by MML-EM (2PL with priors by default)")
    cal.add_argument("--responses", required=True, help="wide (respondent_id + items) or tidy responses CSV")
    cal.add_argument("--out", required=True, help="ITEMS.csv to write (item_id,a,b,c,SEs, S-X2 fit)")
    cal.add_argument(
        "--model", choices=("1pl", "2pl", "3pl"), default="2pl", help="response model (default 2pl)"
    )
    cal.add_argument("--no-priors", action="store_true", help="plain MML without item-parameter priors")
    cal.set_defaults(handler=run_calibrate)

    irt_prior_cmd.register(sub)
    extend("irt", sub)


def _quadrature(args: argparse.Namespace) -> Quadrature:
    from enade_bench.psychometrics.estimation import PRESETS, Quadrature  # noqa: PLC0415 (the command's own)

    base = PRESETS[args.preset]
    npts = base.npts if args.quadpts is None else args.quadpts
    lim = base.lim if args.theta_lim is None else args.theta_lim
    if npts < 2:
        raise UserError(f"--quadpts {npts}: expected an integer >= 2")
    if not (math.isfinite(lim) and lim > 0):
        raise UserError(f"--theta-lim {lim}: expected a positive number")
    return Quadrature(npts=npts, lim=lim)


def run_score(args: argparse.Namespace) -> int:
    """Handler of ``irt score``."""
    import pandas as pd  # noqa: PLC0415 (the command's own imports: not at --help)

    from enade_bench.psychometrics.estimation import estimate_theta  # noqa: PLC0415
    from enade_bench.psychometrics.io import read_items, read_responses, write_csv  # noqa: PLC0415
    from enade_bench.psychometrics.personfit import person_fit  # noqa: PLC0415

    check_output_file(args.out, "--out", create_parent=False)
    quad = _quadrature(args)
    scale = None if args.scale is None else args.scale_column(args.scale)  # checked before any work
    items = read_items(args.items)
    ids, x = read_responses(args.responses, items)
    est = estimate_theta(x, items, args.method, quad)
    fit = person_fit(x, est, items)
    out = pd.DataFrame(
        {
            "respondent_id": ids,
            "theta": est.theta,
            "se": est.se,
            "lz": fit["lz"].to_numpy(),
            "lz_star": fit["lz_star"].to_numpy(),
            "n_items": est.n_items,
            "n_correct": est.n_correct,
        }
    )
    if scale is not None:
        out["score"] = scale(est.theta)
    write_csv(out, args.out)
    _note_infinite(ids, est.theta, est.n_correct, est.n_items)
    if args.method == "eap":
        print(
            "note: lz_star left empty: Snijders' correction needs an ML, MAP or WLE theta (--method)",
            file=sys.stderr,
        )
    return 0


def _note_infinite(ids: Sequence[Any], theta: Any, n_correct: Any, n_items: Any) -> None:
    """Say which thetas are not finite and why (ML has no maximum for all right / all wrong)."""
    bad = [i for i, t in enumerate(theta) if not math.isfinite(t)]
    if not bad:
        return

    def why(i: int) -> str:
        if n_items[i] == 0:
            return "no item answered"
        if n_correct[i] == n_items[i]:
            return f"{theta[i]:+}: all {n_items[i]} correct"
        if n_correct[i] == 0:
            return f"{theta[i]:+}: all {n_items[i]} wrong"
        return f"{theta[i]}"

    shown = ", ".join(f"{ids[i]} ({why(i)})" for i in bad[:5]) + (" …" if len(bad) > 5 else "")
    print(
        f"note: theta is not finite for {len(bad)} respondent(s): {shown}; maximum likelihood has "
        "no maximum for an all-correct or all-wrong pattern (se and lz left empty): "
        "use --method map, wle or eap for a finite estimate",
        file=sys.stderr,
    )


def run_calibrate(args: argparse.Namespace) -> int:
    """Handler of ``irt calibrate``."""
    from enade_bench.psychometrics.calibration import Priors, calibrate  # noqa: PLC0415 (the command's own)
    from enade_bench.psychometrics.io import read_calibration_responses, write_csv  # noqa: PLC0415
    from enade_bench.psychometrics.tidy import aggregate_shuffles  # noqa: PLC0415

    check_output_file(args.out, "--out", create_parent=False)
    data = read_calibration_responses(args.responses)
    wide = aggregate_shuffles(data) if "shuffle" in data.columns else data
    if len(wide) < 2:
        raise UserError(f"{args.responses}: calibration needs at least 2 respondents")
    try:
        result = calibrate(wide, model=args.model, priors=Priors.flat() if args.no_priors else Priors())
    except ValueError as exc:
        raise UserError(f"{args.responses}: {exc}") from None
    write_csv(result.table, args.out)
    if not result.converged:
        print(f"note: EM stopped after {result.iterations} cycles without converging", file=sys.stderr)
    return 0
