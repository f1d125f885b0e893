"""Write E-EVAL test-split predictions in the official submission layout.

``{"high_school_biology": {"0": "A", "1": "C", ...}, ...}``: one key per subject
(as in ``submission_example.json``), one key per test id.  The writer reads one
test-split results file, checks it against the test files themselves (every
subject, every id) and, where present, against ``submission_example.json``;
anything missing is an ``error:``, never a partial file.
"""

from __future__ import annotations

import json
from pathlib import Path

from enade_bench.benchmarks.eeval.report import ResultFile, eval_split, load_eeval_results
from enade_bench.benchmarks.eeval.subjects import parse_subject_file
from enade_bench.dataset.schema import LETTERS
from enade_bench.dataset.sources import read_csv
from enade_bench.errors import UserError
from enade_bench.regular_file import read_text
from enade_bench.results.store import atomic_write_text, read_result

Submission = dict[str, dict[str, str]]


def expected_ids(test_dir: Path) -> dict[str, list[str]]:
    """Subject key -> test ids, from the ``*_test.csv`` files of ``test_dir``."""
    files = sorted(test_dir.glob("*_test.csv"))
    if not files:
        raise UserError(f"{test_dir}: no *_test.csv file (pass --data with the E-EVAL root)")
    out: dict[str, list[str]] = {}
    for path in files:
        subject, _ = parse_subject_file(path)
        out[subject.key] = [row.values.get("id", "").strip() for row in read_csv(path)]
    return out


def select_results(results: Path, setting: str | None = None, experiment: str | None = None) -> ResultFile:
    """The one test-split E-EVAL results file that ``results`` (a file or folder) names."""
    if results.is_file():
        candidates = [ResultFile(results, read_result(results))]
    else:
        candidates = load_eeval_results(results)
    candidates = [c for c in candidates if eval_split(c.result.dataset.sources) == "test"]
    if setting:
        candidates = [c for c in candidates if c.result.strategy.id == setting.lower()]
    if experiment:
        candidates = [c for c in candidates if c.result.experiment == experiment]
    if not candidates:
        raise UserError(f"{results}: no E-EVAL test-split results{' for ' + setting if setting else ''}")
    if len(candidates) > 1:
        names = ", ".join(f"{c.result.experiment}/{c.result.strategy.id}" for c in candidates)
        raise UserError(
            f"{results}: several test-split results ({names}); choose with --setting/--experiment"
        )
    return candidates[0]


def _test_dir(found: ResultFile) -> Path:
    for source in found.result.dataset.sources:
        if source.get("split") == "test":
            return Path(source["path"]).parent
    raise UserError(f"{found.path}: no test-split source recorded")


def build_submission(
    found: ResultFile, test_dir: Path | None = None, fill_unanswered: str | None = None
) -> Submission:
    """Predictions of one test-split results file, complete and in the official layout.

    Parameters
    ----------
    found
        A results file and its path (see :func:`select_results`).
    test_dir
        The test split folder (default: the folder recorded in the results).
    fill_unanswered
        Letter to submit for questions without an extracted answer (default: refuse).
    """
    folder = test_dir or _test_dir(found)
    expected = expected_ids(folder)
    got: dict[str, dict[str, str | None]] = {}
    for record in found.result.records:
        subject = str(record.fields.get("subject", ""))
        qid = record.id.removeprefix(f"{subject}/")  # ids are <subject key>/<row id>
        got.setdefault(subject, {})[qid] = record.prediction
    missing_subjects = [s for s in expected if s not in got]
    if missing_subjects:
        raise UserError(
            f"{found.path}: subject(s) missing from the predictions: {', '.join(missing_subjects)} "
            f"({len(missing_subjects)} of {len(expected)}); run the whole test split"
        )
    submission: Submission = {}
    unanswered: list[str] = []
    for subject, ids in expected.items():
        missing = [i for i in ids if i not in got[subject]]
        if missing:
            shown = ", ".join(missing[:10]) + (" …" if len(missing) > 10 else "")
            raise UserError(f"{found.path}: {subject}: {len(missing)} test id(s) missing: {shown}")
        answers: dict[str, str] = {}
        for i in ids:
            letter = got[subject][i]
            if letter is None:
                if fill_unanswered is None:
                    unanswered.append(f"{subject}/{i}")
                    continue
                letter = fill_unanswered
            answers[i] = letter
        submission[subject] = answers
    if unanswered:
        raise UserError(
            f"{found.path}: {len(unanswered)} question(s) without an answer (e.g. {unanswered[0]}); "
            "pass --fill-unanswered LETTER to submit a letter for them"
        )
    extra = sorted(set(got) - set(expected))
    if extra:
        raise UserError(f"{found.path}: predictions for subjects not in {folder}: {', '.join(extra)}")
    return submission


def check_layout(submission: Submission, example_path: Path) -> None:
    """Every subject and id of ``submission_example.json`` is present, each with a letter A–D."""
    example = json.loads(read_text(example_path))
    for subject, ids in example.items():
        if subject not in submission:
            raise UserError(f"submission: subject '{subject}' of {example_path.name} is missing")
        missing = [i for i in ids if i not in submission[subject]]
        if missing:
            raise UserError(
                f"submission: {subject}: id(s) {', '.join(missing[:10])} of {example_path.name} missing"
            )
    bad = [(s, i, v) for s, a in submission.items() for i, v in a.items() if v not in LETTERS[:4]]
    if bad:
        raise UserError(f"submission: {bad[0][0]}/{bad[0][1]}: '{bad[0][2]}' is not a letter A–D")


def write_submission(
    results: Path,
    out: Path,
    *,
    setting: str | None = None,
    experiment: str | None = None,
    data_dir: Path | None = None,
    fill_unanswered: str | None = None,
) -> tuple[Submission, ResultFile]:
    """Select the results, build and check the submission, write it atomically to ``out``.

    ``data_dir`` is the E-EVAL root (or its test folder); by default the test
    folder recorded in the results, whose parent may hold ``submission_example.json``.
    """
    found = select_results(results, setting, experiment)
    test_dir = None
    if data_dir is not None:
        test_dir = data_dir if data_dir.name == "test" else data_dir / "test"
    if fill_unanswered is not None and fill_unanswered.upper() not in LETTERS[:4]:
        raise UserError(f"--fill-unanswered: expected one of A, B, C, D, got '{fill_unanswered}'")
    fill = fill_unanswered.upper() if fill_unanswered else None
    submission = build_submission(found, test_dir, fill)
    example = (test_dir or _test_dir(found)).parent / "submission_example.json"
    if example.exists():
        check_layout(submission, example)
    atomic_write_text(out, json.dumps(submission, ensure_ascii=False, indent=4) + "\n")
    return submission, found
