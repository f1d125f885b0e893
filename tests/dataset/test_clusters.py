"""Shared stimuli: a ``cluster`` column or questions opening with one text are one cluster."""

from __future__ import annotations

from pathlib import Path

from enade_bench.compare.analysis import compare_table
from enade_bench.compare.table import read_long_csv
from enade_bench.config import DatasetConfig
from enade_bench.dataset.clusters import MIN_SHARED_CHARS, shared_text_clusters
from enade_bench.dataset.loader import load_dataset
from enade_bench.dataset.schema import Question

HEADER = "id,year,course,component,stem,A,B,C,D,E,answer,has_image,cannot_fix"
CASE = "Paciente de 54 anos, hipertenso, chega ao pronto-socorro com dor torácica há duas horas. " * 3


def _write(path: Path, rows: list[str], header: str = HEADER) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_a_cluster_column_is_read(tmp_path: Path) -> None:
    rows = [
        f"q{i},2020,Medicina,CE,Pergunta {i}?,a,b,c,d,e,A,false,false,{c}"
        for i, c in ((1, "caso1"), (2, "caso1"), (3, ""))
    ]
    data = load_dataset(DatasetConfig(path=str(_write(tmp_path / "c.csv", rows, HEADER + ",cluster"))))
    assert [q.cluster for q in data.questions] == ["caso1", "caso1", ""]
    assert all("cluster" not in dict(q.extra) for q in data.questions)


def test_questions_opening_with_one_case_share_a_cluster(tmp_path: Path) -> None:
    rows = [
        f'q1,2020,Medicina,CE,"{CASE} Qual o diagnóstico?",a,b,c,d,e,A,false,false',
        f'q2,2020,Medicina,CE,"{CASE}  Qual a conduta?",a,b,c,d,e,B,false,false',  # whitespace differs
        "q3,2020,Medicina,CE,Uma questão isolada?,a,b,c,d,e,C,false,false",
        f'q4,2020,Medicina,CE,"{CASE[: MIN_SHARED_CHARS - 20]} outro caso",a,b,c,d,e,C,false,false',
    ]
    data = load_dataset(DatasetConfig(path=str(_write(tmp_path / "s.csv", rows))))
    assert [q.cluster for q in data.questions] == ["text:q1", "text:q1", "", ""]


def test_a_declared_cluster_is_kept() -> None:
    qs = [
        Question(id=i, stem=CASE + i, options=("a", "b"), answer="A", cluster=c)
        for i, c in (("x", "k"), ("y", ""))
    ]
    assert [q.cluster for q in shared_text_clusters(qs)] == ["k", ""]  # one unclustered question is alone


def test_clusters_widen_the_comparison(tmp_path: Path) -> None:
    """The same answers, once with every pair of questions declared one stimulus."""
    lines = ["model,item,correct,cluster"]
    for model, pattern in (("m1", "11110000110011001010"), ("m2", "11000000100011000000")):
        lines += [f"{model},i{i:02d},{c},c{i // 2}" for i, c in enumerate(pattern)]
    clustered = tmp_path / "clustered.csv"
    clustered.write_text("\n".join(lines) + "\n", encoding="utf-8")
    flat = tmp_path / "flat.csv"
    flat.write_text("\n".join(line.rsplit(",", 1)[0] for line in lines) + "\n", encoding="utf-8")
    with_c, without = (compare_table(read_long_csv(p)) for p in (clustered, flat))
    sc, sf = with_c.scores[0].score, without.scores[0].score
    assert (sc.n_clusters, sf.n_clusters) == (10, 20)
    assert sc.method == "clustered" and sf.method == "wilson"
    assert (
        with_c.pairs[0].result.test == "clustered paired t"
        and without.pairs[0].result.test == "exact unconditional score"
    )
    assert with_c.pairs[0].result.n_clusters == 10
