"""Lint checks for what a question points at but does not hold, and for a stem cut into option A.

Part of :mod:`enade_bench.dataset.lint` (issue 50), pure (no I/O):

``missing_context``
    The stem points back at something (``nessas condições``, ``o texto``, ``o gráfico``,
    ``a tabela``…) in a row whose context is empty, in a file whose stem is composed with a
    context (``dataset.stem``), and the question has no image.  A back-reference with its
    text inside the stem (at least :data:`OWN_TEXT` characters before the phrase) is not
    flagged: most ENEM stems carry their text before "o texto".
``short_stem``
    A stem under :data:`SHORT_SHARE` of the file's median length in a row whose context is
    empty, in a file whose stem is composed with a context.
``image_reference``
    An image named without brackets (``a figura abaixo``, ``imagem a seguir``, ``observe o
    gráfico``) in a question without an image, with no description of it: no ``Descrição
    da imagem`` (as ENEM's accessible version writes it) and under :data:`DESCRIBED`
    characters after the reference.  ``dataset.image_markers: true`` counts these as image
    markers.
``stem_in_option`` (the cut forms)
    Option A holds the end of the question (a ``?`` or ``:`` followed by the option's own
    text, ``…? A Melanoma.``) where no sibling does, or starts with the stem's own closing
    words.  ``dataset.stem_in_option: repair`` moves option A's text up to that ``?`` or
    ``:`` back into the stem; ``drop`` leaves such questions out (both counted).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Collection, Sequence
from dataclasses import replace

from enade_bench.dataset.schema import Question

__all__ = ["IMAGE_REFERENCE", "context_checks", "cut_point", "repair_cut"]

OWN_TEXT = 200
#: Text after an image reference long enough to be its description.
DESCRIBED = 150
_DESCRIPTION = re.compile(r"\bdescri[çc][ãa]o d[aoe]s?\b", re.IGNORECASE)
SHORT_SHARE = 0.5
#: A cut option A: the end of a question, then the option's own text.
_CUT = re.compile(r"^(?P<head>.{10,}?[?:])\s+(?P<tail>\S.{0,200})$", re.DOTALL)
_OVERLAP_WORDS = 3

BACK_REFERENCE = re.compile(
    r"\bness[ae]s? (?:condições|condição|situação|situações|contexto|caso)\b|"
    r"\b(?:o|no|do|pelo|neste|nesse|deste|desse) (?:texto|trecho|gráfico|infográfico|quadro|mapa|poema|"
    r"fragmento|esquema|diagrama)\b|"
    r"\b(?:a|na|da|pela|nesta|nessa|desta|dessa) (?:tabela|figura|imagem|charge|tirinha|ilustração|"
    r"reportagem|notícia|letra)\b",
    re.IGNORECASE,
)
IMAGE_REFERENCE = re.compile(
    r"\b(?:figura|imagem|gr[áa]fico|ilustra[çc][ãa]o|fotografia|foto|charge|tirinha|mapa|esquema)s?\s+"
    r"(?:abaixo|a seguir|acima|ao lado)\b|"
    r"\b(?:observe|observando|analise|analisando|veja|considere)\s+(?:[oa]s?)\s+"
    r"(?:figura|imagem|gr[áa]fico|ilustra[çc][ãa]o|fotografia|foto|charge|tirinha|mapa|esquema)s?\b",
    re.IGNORECASE,
)


def image_reference(stem: str) -> re.Match[str] | None:
    """An undescribed reference to an image in ``stem`` (module docstring), or ``None``."""
    if _DESCRIPTION.search(stem):
        return None
    for found in IMAGE_REFERENCE.finditer(stem):
        if len(stem) - found.end() < DESCRIBED:
            return found
    return None


def _warning(check: str, qid: str, message: str) -> tuple[str, str, str]:
    return (check, qid, message)


def _back_reference(stem: str) -> re.Match[str] | None:
    """The first back-reference with too little of the stem's own text before it."""
    for found in BACK_REFERENCE.finditer(stem):
        if found.start() < OWN_TEXT:
            return found
    return None


def cut_point(q: Question) -> re.Match[str] | None:
    """Where option A holds the end of the question (module docstring), or ``None``."""
    if not q.options:
        return None
    first = q.options[0]
    found = _CUT.match(first)
    if found and not any(_CUT.match(o) for o in q.options[1:]):
        return found
    return None


def _overlaps(q: Question) -> bool:
    """Option A starts with the stem's own closing words."""
    words = q.stem.split()
    if len(words) < _OVERLAP_WORDS or not q.options:
        return False
    closing = " ".join(words[-_OVERLAP_WORDS:]).casefold().rstrip("?:.")
    return " ".join(q.options[0].split()).casefold().startswith(closing)


def context_checks(
    questions: Sequence[Question], without_context: Collection[str]
) -> list[tuple[str, str, str]]:
    """(check, question id, message) of the checks in the module docstring.

    ``without_context``: ids of the rows whose composed stem's context part is empty (only a
    file with a composed stem has any).
    """
    out = []
    lengths = [len(q.stem) for q in questions]
    median = statistics.median(lengths) if lengths else 0
    fix = "fill the row's context, or leave the question out with dataset.exclude: ['{id}']"
    for q in questions:
        image = None if q.has_image else image_reference(q.stem)
        if image:
            message = (
                f"the stem refers to '{image.group()}', an image the model cannot see "
                "(dataset.image_markers: true drops such questions)"
            )
            out.append(_warning("image_reference", q.id, message))
        elif q.id in without_context and not q.has_image:
            found = _back_reference(q.stem)
            if found:
                message = f"the stem points at '{found.group()}' but the row's context is empty and it has no image; "
                out.append(_warning("missing_context", q.id, message + fix.format(id=q.id)))
            elif len(q.stem) < SHORT_SHARE * median:
                message = (
                    f"a stem of {len(q.stem)} characters (the file's median: {median:.0f}) with an empty context: "
                    "can it be answered? "
                )
                out.append(_warning("short_stem", q.id, message + fix.format(id=q.id)))
        if cut_point(q) is not None or _overlaps(q):
            shown = " ".join(q.options[0].split())[:80]
            message = (
                f"option A reads '{shown}': the end of the stem cut into option A? "
                "dataset.stem_in_option: repair moves it back into the stem, drop leaves the question out"
            )
            out.append(_warning("stem_in_option", q.id, message))
    return out


def repair_cut(q: Question) -> Question | None:
    """``dataset.stem_in_option: repair``: option A's text up to its ``?`` or ``:`` back into the stem.

    ``None`` when option A holds no such point (the question is then left out, counted).
    """
    found = cut_point(q)
    if found is None:
        return None
    stem = f"{q.stem.rstrip()} {' '.join(found.group('head').split())}"
    return replace(q, stem=stem, options=(found.group("tail").strip(), *q.options[1:]))
