"""Issue 51's inputs the corpus cannot hold: a stdout that cannot encode or cannot be written."""

from __future__ import annotations

import errno
import io
from pathlib import Path

import pytest
import yaml
from tests.conftest import offline_api_config

from enade_bench.cli.main import main
from enade_bench.config import parse_config


class _Full(io.RawIOBase):
    """A device that takes nothing (``/dev/full``)."""

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_stdout_that_cannot_encode_gets_replacements_and_one_that_cannot_write_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = offline_api_config(tmp_path, "enc")
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr("sys.stdout", ascii_out)
    assert main(["validate", str(cfg), "--limit", "1"]) == 0
    ascii_out.flush()
    shown = ascii_out.buffer.getvalue().decode("ascii")  # type: ignore[attr-defined]
    assert "ok: " in shown and "quest\\xe3o" in shown.lower()  # ã could not be shown: escaped, no traceback
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(io.BufferedWriter(_Full()), encoding="utf-8"))
    assert main(["validate", str(cfg), "--limit", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "error: standard output: No space left on device" and "Traceback" not in "".join(err)


def test_user_metadata_sent_with_requests_is_masked_like_a_query_value(tmp_path: Path) -> None:
    """Issue 51 (unclear case decided): ``extra_params.metadata.session`` is sent, never written."""
    cfg = yaml.safe_load(offline_api_config(tmp_path, "enc").read_text(encoding="utf-8"))
    cfg["model"]["api"]["extra_params"] = {
        "metadata": {"session": "sess-7f3a", "n": 3},
        "user": "ana@x.br",
        "temperature": 0.2,
    }
    public = parse_config(cfg, "enc.yaml").public_dict()
    extra = public["model"]["api"]["extra_params"]  # type: ignore[index, call-overload]
    assert extra == {"metadata": {"session": "***", "n": "***"}, "user": "***", "temperature": 0.2}


def test_a_strip_pattern_that_glues_words_is_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 51 (unclear case decided): ``{regex: '\\s'}`` removes every space: one warning line."""
    cfg = yaml.safe_load(offline_api_config(tmp_path, "enc").read_text(encoding="utf-8"))
    cfg["dataset"]["strip"] = [{"regex": "\\s"}]
    path = tmp_path / "glue.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    assert main(["validate", str(path), "--limit", "1"]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "dataset.strip" in line]
    assert warned == [
        "warning: dataset.strip: the pattern '\\s' matches the lone space between two words: every such "
        "space is removed, gluing the words together (match the debris itself, e.g. 'P[aá]gina \\d+')"
    ]
