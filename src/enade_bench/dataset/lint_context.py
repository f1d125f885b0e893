"""Lint checks for what a question points at but does not hold, and for a stem cut into option A.

Part of :mod:`enade_bench.dataset.lint` (issues 50 and 60), pure (no I/O):

``missing_context``
    The stem points back at something in a row whose context is empty or only a title
    (:meth:`~enade_bench.dataset.stem.StemTemplate.context_lost`), in a file whose stem is
    composed with a context (``dataset.stem``): a phrase of :data:`BACK_REFERENCE`
    (``nessas condições``, ``o texto``, ``o gráfico``…) within the stem's first
    :data:`OWN_TEXT` characters (most ENEM stems carry their text before "o texto"), or a
    demonstrative or ``anterior`` whose noun the stem has not named before (``essa empresa``,
    ``esses 10 casais``, ``a entrega anterior``: :func:`back_reference`).  A row with an image
    is checked too, but what it points at may be its image (``o gráfico``, ``essa figura``).
``short_stem``
    A stem under :data:`SHORT_SHARE` of the file's median length in a row without an image
    whose context is lost.
``image_reference``
    An image named without brackets (``a figura abaixo``, ``imagem a seguir``, ``observe o
    gráfico``, ``mostrado na imagem``, ``o ecomapa a seguir``), whatever the white space
    between its words, in a question without an image, with no description of it: no
    ``Descrição da imagem`` (as ENEM's accessible version writes it) and under
    :data:`DESCRIBED` characters after the reference.  ``dataset.image_markers: true``
    counts these as image markers.
``stem_in_option`` (the cut forms)
    A stem that ends mid-sentence (:func:`cut_off`) with option A holding the cut text:
    option A's own letter after it (``… lesão? ⏎A Melanoma.``: :func:`cut_point`), a
    question mark where no sibling has one, or option A starting with the stem's closing
    words.  ``dataset.stem_in_option: repair`` moves the cut text back into the stem and
    removes the repeated letter where the letter shows where option A starts; elsewhere the
    row is left as it is and the fix says so.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from enade_bench.dataset.cells import marker
from enade_bench.dataset.schema import Question

__all__ = ["context_checks", "cut_off", "cut_point", "image_reference", "repair_cut"]

OWN_TEXT = 200
#: Text after an image reference long enough to be its description.
DESCRIBED = 150
_DESCRIPTION = re.compile(r"\bdescri[çc][ãa]o d[aoe]s?\b", re.IGNORECASE)
SHORT_SHARE = 0.5
_OVERLAP_WORDS = 3

#: What an image shows: a row with an image may point at it.
_IMAGES = (
    r"figura|imagem|gr[áa]fico|infogr[áa]fico|ilustra[çc][ãa]o|fotografia|foto|charge|tirinha|mapa|"
    r"esquema|diagrama|ecomapa|genograma|fluxograma|organograma|quadro|tabela|cartum|cartaz"
)
_IMAGE_NOUN = re.compile(rf"^(?:{_IMAGES})s?$", re.IGNORECASE)
BACK_REFERENCE = re.compile(
    r"\bness[ae]s?\s+(?:condições|condição|situação|situações|contexto|caso)\b|"
    r"\b(?:o|no|do|pelo|neste|nesse|deste|desse)\s+(?P<noun>texto|trecho|gráfico|infográfico|quadro|mapa|"
    r"poema|fragmento|esquema|diagrama)\b|"
    r"\b(?:a|na|da|pela|nesta|nessa|desta|dessa)\s+(?P<noun2>tabela|figura|imagem|charge|tirinha|ilustração|"
    r"reportagem|notícia|letra)\b",
    re.IGNORECASE,
)
#: A demonstrative before its noun (``essa empresa``, ``esses 10 casais``), or a noun ``anterior``.
_DEMONSTRATIVE = re.compile(
    r"\b(?:[nd]?(?:ess|est)|[nd]?aquel)(?:e|a|es|as)\s+(?:\d+\s+)?(?P<noun>[^\W\d_]{3,})|"
    r"(?:\b[ond]?[oa]s?|\bpel[oa]s?|(?<!\w)[àá]s?)\s+(?P<before>[^\W\d_]{3,})\s+anterior(?:es)?\b",
    re.IGNORECASE,
)
#: Words after a demonstrative that are no noun it points at (a connective, a verb, a time).
_NOT_POINTED = frozenset(
    "que quem qual forma maneira modo jeito vez sentido tipo mesmo mesma mesmos mesmas último última "
    "primeiro primeira seguinte seguintes momento ano dia época período tempo pergunta questão item "
    "alternativa opção afirmativa afirmação resposta".split()
)
IMAGE_REFERENCE = re.compile(
    rf"\b(?:{_IMAGES})s?\s+(?:abaixo|a\s+seguir|acima|ao\s+lado)\b|"
    rf"\b(?:observe|observando|analise|analisando|veja|considere)\s+(?:[oa]s?)\s+(?:{_IMAGES})s?\b|"
    rf"\b(?:mostrad|representad|ilustrad|retratad|esquematizad)[oa]s?\s+(?:n[oa]s?\s+(?:{_IMAGES})s?\b|"
    r"a\s+seguir\b|abaixo\b|ao\s+lado\b)",
    re.IGNORECASE,
)


def _plain(word: str) -> str:
    """A word without case, accents or a plural ending (``casais`` and ``casal`` alike)."""
    text = marker(word)
    for plural, singular in (("oes", "ao"), ("aes", "ao"), ("ais", "al"), ("eis", "el"), ("ns", "m")):
        if text.endswith(plural):
            return text[: -len(plural)] + singular
    return (text[:-2] if text.endswith(("res", "zes", "ses")) else text.removesuffix("s")).rstrip("e")


def back_reference(stem: str, has_image: bool = False) -> str | None:
    """The first phrase of ``stem`` that points at a text the stem does not hold (module docstring).

    ``has_image``: a phrase pointing at an image, which the row has, does not count.
    """
    for found in BACK_REFERENCE.finditer(stem):
        noun = found.group("noun") or found.group("noun2") or ""
        if found.start() < OWN_TEXT and not (has_image and _IMAGE_NOUN.match(noun)):
            return found.group()
    for found in _DEMONSTRATIVE.finditer(stem):
        noun = found.group("noun") or found.group("before")
        if noun.casefold() in _NOT_POINTED or (has_image and _IMAGE_NOUN.match(noun)):
            continue
        if _plain(noun) not in {_plain(w) for w in re.findall(r"[^\W\d_]+", stem[: found.start()])}:
            return found.group()
    return None


def image_reference(stem: str) -> re.Match[str] | None:
    """An undescribed reference to an image in ``stem`` (module docstring), or ``None``."""
    if _DESCRIPTION.search(stem):
        return None
    for found in IMAGE_REFERENCE.finditer(stem):
        if len(stem) - found.end() < DESCRIBED:
            return found
    return None


#: A stem that ends a sentence (or a clause introducing the options) is complete.
_COMPLETE = re.compile(r"[.?!:;…][\"'”’»)\]]*\s*$")
#: Option A's letter repeated after the cut text: at a line's start, or written ``(A)`` / ``A)``
#: or ``A``, ``A.``, ``A -`` (:func:`cut_point` says when it is sure); then its own text.
_LETTER = re.compile(
    r"(?P<gap>\s*\n\s*|\s+)(?P<letter>\(A\)|A\)|A\.|A\s*[-–]|A)\s+(?=\S)",
)
_LINE_A = re.compile(r"\n\s*A\s+\S")


@dataclass(frozen=True)
class Cut:
    """Where option A holds the end of the stem: the cut text, option A's own text, and whether a
    repair can be sure of the boundary (``why`` it cannot, else empty)."""

    head: str
    tail: str
    why: str = ""


def cut_off(stem: str) -> bool:
    """Whether ``stem`` ends mid-sentence (no ``.``, ``?``, ``!``, ``:``, ``;`` at its end)."""
    return not _COMPLETE.search(stem)


def cut_point(q: Question) -> Cut | None:
    """Where option A holds text cut from the stem (module docstring), or ``None``.

    The last of option A's own letters after some text marks the boundary: written ``(A)`` or
    ``A)``, or a bare ``A`` at a line's start or before a number, where no sibling has a line
    starting with ``A`` (then it is an article the layout broke: ``… da página. ⏎A força``);
    never a bare ``A`` mid-sentence (``vitamina A e D``) or after a sentence (``… lesão? A
    Melanoma.``: an article?).  Without a letter, a ``?`` that no sibling holds marks it, not sure.
    """
    if not q.options or not cut_off(q.stem):
        return None
    first = q.options[0]
    layout = any(_LINE_A.search(o) for o in q.options[1:])
    for found in reversed(list(_LETTER.finditer(first))):
        head, tail = first[: found.start()].strip(), first[found.end() :].strip()
        bare = "\n" in found.group("gap") or tail[:1].isdigit()
        if head and (found.group("letter") in ("(A)", "A)") or (bare and not layout)):
            return Cut(head, tail)
    question = re.match(r"^(?P<head>.+?\?)\s+(?P<tail>\S.*)$", first, re.DOTALL)
    if question and not any("?" in o for o in q.options[1:]):
        return Cut(question["head"], question["tail"], "no letter shows where option A's own text starts")
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

    ``without_context``: ids of the rows whose composed stem's context part is empty or only a
    title (only a file with a composed stem has any).
    """
    out = []
    lengths = [len(q.stem) for q in questions]
    median = statistics.median(lengths) if lengths else 0
    fix = "fill the row's context, or leave the question out with dataset.exclude: ['{id}']"
    for q in questions:
        image = None if q.has_image else image_reference(q.stem)
        pointed = back_reference(q.stem, q.has_image) if q.id in without_context else None
        if image:
            message = (
                f"the stem refers to '{' '.join(image.group().split())}', an image the model cannot see "
                "(dataset.image_markers: true drops such questions)"
            )
            out.append(("image_reference", q.id, message))
        elif pointed:
            message = f"the stem points at '{pointed}' but the row's context is empty or only a title; "
            out.append(("missing_context", q.id, message + fix.format(id=q.id)))
        elif q.id in without_context and not q.has_image and len(q.stem) < SHORT_SHARE * median:
            message = (
                f"a stem of {len(q.stem)} characters (the file's median: {median:.0f}) with an empty context: "
                "can it be answered? "
            )
            out.append(("short_stem", q.id, message + fix.format(id=q.id)))
        if cut_point(q) is not None or (cut_off(q.stem) and _overlaps(q)):
            shown = " ".join(q.options[0].split())[:80]
            message = (
                f"the stem ends mid-sentence and option A reads '{shown}': the end of the stem cut into "
                "option A? dataset.stem_in_option: repair moves it back into the stem, drop leaves the "
                "question out"
            )
            out.append(("stem_in_option", q.id, message))
    return out


def repair_cut(q: Question) -> tuple[Question, str]:
    """``dataset.stem_in_option: repair``: the cut text back into the stem, option A's letter removed.

    Returns the repaired question and ``""``, or the question unchanged and why a repair cannot
    be sure (:func:`cut_point`).
    """
    found = cut_point(q)
    if _overlaps(q):
        return q, "option A repeats the stem's closing words: which copy is the stem's is not sure"
    if found is None:
        return q, "no letter or question mark in option A shows where the stem's text ends"
    if found.why:
        return q, found.why
    stem = f"{q.stem.rstrip()} {' '.join(found.head.split())}"
    return replace(q, stem=stem, options=(found.tail, *q.options[1:])), ""
