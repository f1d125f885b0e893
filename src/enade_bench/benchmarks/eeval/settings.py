"""E-EVAL settings: answer-only or chain-of-thought with k demonstrations.

A setting id is ``ao<k>`` or ``cot<k>`` (k = 0..5), e.g. the leaderboard's
``ao0``, ``ao5`` and ``cot5``.  Answer-only is scored with the config's
``evaluation.method`` (``generation`` + extraction, or ``first_token``: the
probability of A/B/C/D as the next token, which the benchmark recommends for
models that ignore the format); ``ao5_gen`` / ``ao5_ft`` name the method
explicitly.  Chain of thought is always generation (``cot_max_new_tokens``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from enade_bench.config import EvaluationConfig, Method
from enade_bench.errors import UserError
from enade_bench.strategies.registry import Strategy

#: The three settings of the published leaderboard.
LEADERBOARD_SETTINGS = ("ao0", "ao5", "cot5")
_ID = re.compile(r"^(?P<kind>ao|cot)(?P<k>[0-9])(?:_(?P<method>gen|ft))?$")
_METHODS: dict[str, Method] = {"gen": "generation", "ft": "first_token"}


@dataclass(frozen=True)
class EEvalSetting(Strategy):
    """A core :class:`Strategy` with E-EVAL's demonstration count and prompt kind.

    Attributes
    ----------
    kind
        ``ao`` (answer-only) or ``cot`` (chain of thought).
    k
        Number of dev-split demonstrations of the same subject (0..5).
    benchmark
        Always ``eeval`` (lets reports tell these results from ENADE ones).
    """

    kind: str = "ao"
    k: int = 0
    benchmark: str = "eeval"

    @property
    def n_examples(self) -> int:
        return self.k

    @property
    def label(self) -> str:
        what = "chain of thought" if self.kind == "cot" else f"answer-only, {self.method}"
        return f"E-EVAL {self.k}-shot {what}"


def parse_setting(setting_id: str, evaluation: EvaluationConfig) -> EEvalSetting:
    """The setting an id names (``ao0``, ``ao5``, ``cot5``, ``ao5_ft``…).

    Examples
    --------
    >>> s = parse_setting("cot5", EvaluationConfig())
    >>> s.kind, s.k, s.method, s.chain_of_thought
    ('cot', 5, 'generation', True)
    """
    match = _ID.match(setting_id.strip().lower())
    if not match or int(match["k"]) > 5:
        raise UserError(
            f"unknown E-EVAL setting '{setting_id}' (allowed: ao<k> or cot<k> with k = 0..5, "
            "e.g. ao0, ao5, cot5; ao<k>_gen / ao<k>_ft pick the answer-only method)"
        )
    kind, k = match["kind"], int(match["k"])
    if kind == "cot":
        if match["method"] == "ft":
            raise UserError(f"E-EVAL setting '{setting_id}': chain of thought needs generation")
        method: Method = "generation"
    elif match["method"]:
        method = _METHODS[match["method"]]
    else:
        method = evaluation.resolved_method
        if method == "log_prob":
            raise UserError(
                "evaluation.method: 'log_prob' is not an E-EVAL answer-only method "
                "(allowed: generation, first_token)"
            )
    return EEvalSetting(
        id=match.group(0),
        method=method,
        shot="zero" if k == 0 else "few",
        shuffle=False,
        chain_of_thought=kind == "cot",
        kind=kind,
        k=k,
    )


def plan_settings(requested: list[str] | None, evaluation: EvaluationConfig) -> list[EEvalSetting]:
    """The settings to run: those requested, else the leaderboard's three."""
    ids = requested or list(LEADERBOARD_SETTINGS)
    # one per id, in the order first asked (an id parses to the same setting each time)
    return list({s.id: s for s in (parse_setting(i, evaluation) for i in ids)}.values())
