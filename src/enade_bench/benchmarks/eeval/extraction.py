"""Extract the chosen letter from a Chinese (E-EVAL) answer or chain of thought.

A cascade of Chinese patterns, tried in priority order, then the core cascade
(:func:`enade_bench.scoring.extraction.extract_answer`: ``(X)``, ``X)`` at a line
start, a lone letter, quoted option text, the last standalone letter, else
``unanswered``).  The first rule that yields a letter valid for the item wins;
the result records the rule, so a run reports the share of each.

1. ``so_answer``      – ``所以答案是X`` / ``因此答案为X`` / ``故答案选X`` / ``综上，答案是X``: the
   closing phrase of the chain-of-thought template.  The *first* one wins: what
   a model writes after it is a new, made-up item.
2. ``answer_is``      – ``答案是X`` / ``正确答案为X`` / ``答案应选X`` (the last wins)
3. ``answer_colon``   – ``答案：X`` (the last wins)
4. ``choose``         – ``选X`` / ``故选：X`` / ``应选择X`` (not ``不选X``; the last wins)
5. ``leading_letter`` – the answer starts with the letter (``B``, ``B．…``, ``(B)``,
   ``**B**``): the answer-only shape.  An English article (``A bird…``) is not one.
6. ``correct_option`` – ``X正确`` / ``X项正确`` / ``选项X符合题意`` (the last wins)

Text is NFKC-normalised first, so full-width letters, colons and brackets
(``Ｂ``, ``：``, ``（Ｂ）``) read as their ASCII forms.  Letters are read
case-insensitively in rules 1–4, where the context is unambiguous.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from enade_bench.scoring.extraction import Extraction, extract_answer

_OPEN = r"(?:\\boxed\{|\\text\{|\\mathrm\{|\*\*|\*|\$|\(|\[|\{|\"|'|“|‘|`|【|「|『|<)*"
_L = r"([A-Ea-e])(?![A-Za-z0-9])"
_OPTION_WORD = r"(?:选项|项)?"
_TAIL = r"\s*(?::\s*)?" + _OPTION_WORD + r"\s*" + _OPEN + r"\s*" + _L

_SO_ANSWER = re.compile(
    r"(?:所以|因此|故而|故|综上所述|综上)\s*[,，:]?\s*(?:本题的?|正确的?|最终的?)?\s*答案\s*"
    r"(?:应该|应当|应)?\s*(?:是|为|选择|选)" + _TAIL
)
_ANSWER_IS = re.compile(r"答案\s*(?:应该|应当|应)?\s*(?:是|为|选择|选)" + _TAIL)
_ANSWER_COLON = re.compile(r"答案\s*:" + _TAIL)
_CHOOSE = re.compile(r"(?<!不)(?:选择|选出|选)(?!项)\s*(?::\s*)?(?:选项)?\s*" + _OPEN + r"\s*" + _L)
_LEADING = re.compile(r"^\s*" + _OPEN + r"\s*([A-E])(?![A-Za-z0-9])(?!(?<=A)[ \t]+[A-Za-z]{2,})")
_CORRECT = re.compile(
    r"(?<![A-Za-z0-9])(?:选项)?" + _OPEN + r"([A-E])(?![A-Za-z0-9])[\)\]】」』>*]*\s*(?:选?项)?\s*(?:是|为)?"
    r"\s*(?:正确|符合题意)"
)


def _hits(pattern: re.Pattern[str], text: str, valid: str) -> list[str]:
    return [h for h in (m.group(1).upper() for m in pattern.finditer(text)) if h in valid]


def extract_chinese(text: str, valid_letters: str, options: Sequence[str] = ()) -> Extraction:
    """Extract the answer letter from a Chinese answer or chain of thought.

    Parameters
    ----------
    text
        The model's output (what follows ``答案：`` or ``…\\n1. ``).
    valid_letters
        Letters valid for this item, e.g. ``"ABCD"``.
    options
        Option texts in display order (for the core ``option_text`` rule).

    Examples
    --------
    >>> extract_chinese("氧气不足时进行无氧呼吸。所以答案是Ｂ。", "ABCD")
    Extraction(letter='B', rule='so_answer')
    >>> extract_chinese("C", "ABCD")
    Extraction(letter='C', rule='leading_letter')
    """
    valid = valid_letters.upper()
    norm = unicodedata.normalize("NFKC", text)
    if hits := _hits(_SO_ANSWER, norm, valid):
        return Extraction(hits[0], "so_answer")
    for pattern, rule in ((_ANSWER_IS, "answer_is"), (_ANSWER_COLON, "answer_colon"), (_CHOOSE, "choose")):
        if hits := _hits(pattern, norm, valid):
            return Extraction(hits[-1], rule)
    if hits := _hits(_LEADING, norm, valid):
        return Extraction(hits[0], "leading_letter")
    if hits := _hits(_CORRECT, norm, valid):
        return Extraction(hits[-1], "correct_option")
    return extract_answer(norm, valid, options)
