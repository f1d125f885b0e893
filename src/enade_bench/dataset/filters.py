"""Which questions a run keeps: the flags, the ENADE filters and ``dataset.filters`` on any field.

Every filter counts what it removed (``removed_<name>`` in the results' dataset counts).
A filter that keeps no question is an error listing the values the data has, so a
typo (``Medicina`` for ``Medicine``) never becomes an empty run.
"""

from __future__ import annotations

from enade_bench.config import DatasetConfig
from enade_bench.dataset.schema import FieldValue, Question
from enade_bench.errors import UserError, closest

__all__ = ["apply_filters", "field_value", "known_fields"]


def apply_filters(questions: list[Question], cfg: DatasetConfig, counts: dict[str, int]) -> list[Question]:
    steps: list[tuple[str, bool, object]] = [
        ("has_image", cfg.filter_images, lambda q: not q.has_image),
        ("cannot_fix", cfg.filter_cannot_fix, lambda q: not q.cannot_fix),
        ("year", cfg.anos is not None, lambda q: q.year in set(cfg.anos or [])),
        ("course", cfg.cursos is not None, lambda q: q.course in set(cfg.cursos or [])),
        ("component", cfg.componentes is not None, lambda q: q.component in set(cfg.componentes or [])),
    ]
    for name, active, keep in steps:
        before = len(questions)
        if active:
            kept = [q for q in questions if keep(q)]  # type: ignore[operator]
            if questions and not kept:
                raise _matches_nothing(name, questions, cfg)
            questions = kept
        counts[f"removed_{name}"] = before - len(questions)
    known = known_fields(questions)
    for name in cfg.filters or {}:
        if questions and name not in known:
            raise UserError(
                f"dataset.filters.{name}: no field or column '{name}' in the data{closest([name], known)} "
                f"(fields and columns: {', '.join(known)})"
            )
    for name, wanted in (cfg.filters or {}).items():
        questions = _filter_on(questions, name, wanted, counts)
    return questions


def known_fields(questions: list[Question]) -> list[str]:
    """The names :func:`field_value` reads: grouping fields, canonical fields, other columns."""
    names = dict.fromkeys(n for q in questions[:1] for n in q.fields)
    names.update(dict.fromkeys(("year", "course", "component", "answer", "id", "cluster")))
    names.update(dict.fromkeys(k for q in questions for k, _ in q.extra))
    return list(names)


def field_value(question: Question, name: str) -> FieldValue | str:
    """A question's value of a grouping field, a canonical field or another column ("" if none)."""
    if name in question.fields:
        return question.fields[name]
    if name in ("year", "course", "component", "answer", "id", "cluster"):
        return getattr(question, name)  # type: ignore[no-any-return]
    return dict(question.extra).get(name, "")


def _filter_on(
    questions: list[Question], name: str, wanted: list[str | int], counts: dict[str, int]
) -> list[Question]:
    """``dataset.filters``: keep the questions whose ``name`` is one of ``wanted`` (compared as text)."""
    values = [field_value(q, name) for q in questions]
    keep = {str(w) for w in wanted}
    kept = [q for q, v in zip(questions, values, strict=True) if str(v) in keep]
    if questions and not kept:
        present = sorted({str(v) for v in values if v not in ("", None)})
        shown = ", ".join(present[:20]) + (f", … ({len(present)} in all)" if len(present) > 20 else "")
        fields = ", ".join(questions[0].fields)
        raise UserError(
            f"dataset.filters.{name}: {list(wanted)} matches no question; "
            + (
                f"values present: {shown}"
                if present
                else f"no question has a field '{name}' (fields: {fields})"
            )
        )
    counts[f"removed_filter_{name}"] = len(questions) - len(kept)
    return kept


#: The config key of each filter on a question's value (the others are flags).
_FILTER_KEYS = {"year": "anos", "course": "cursos", "component": "componentes"}


def _matches_nothing(name: str, questions: list[Question], cfg: DatasetConfig) -> UserError:
    """The error of a filter that keeps no question: what it asked for and what the data holds."""
    key = _FILTER_KEYS.get(name)
    if key is None:  # filter_images / filter_cannot_fix removed every remaining question
        flag = "filter_images" if name == "has_image" else "filter_cannot_fix"
        return UserError(
            f"dataset.{flag}: every one of the {len(questions)} questions left is flagged {name}; "
            f"set {flag}: false to keep them"
        )
    values = sorted({getattr(q, name) for q in questions}, key=lambda v: (v is None, str(v)))
    shown = ", ".join(repr(v) for v in values[:20]) + (" …" if len(values) > 20 else "")
    return UserError(
        f"dataset.{key}: {getattr(cfg, key)} matches none of the {len(questions)} questions; "
        f"the data has {name} {shown}"
    )
