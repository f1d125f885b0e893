"""The 23 E-EVAL subjects: key, level and display names, derived from the file names.

A subject file is ``<Level>_School_<Subject>_<split>.csv`` (e.g.
``High_School_Biology_val.csv``).  Its *key* is the lower-cased stem without the
split (``high_school_biology``), as in ``submission_example.json``; its *level*
is ``primary``, ``middle`` or ``high``; its Chinese name (``高中生物``) is what
the prompt's ``{subject}`` placeholder shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from enade_bench.errors import UserError

LEVELS = ("primary", "middle", "high")
LEVEL_NAMES_ZH = {"primary": "小学", "middle": "初中", "high": "高中"}
LEVEL_NAMES_EN = {"primary": "Primary School", "middle": "Middle School", "high": "High School"}

#: Chinese names of the disciplines (E-EVAL's ``Ethics`` is primary school 道德与法治).
DISCIPLINE_NAMES_ZH = {
    "biology": "生物",
    "chemistry": "化学",
    "chinese": "语文",
    "english": "英语",
    "ethics": "道德与法治",
    "geography": "地理",
    "history": "历史",
    "mathematics": "数学",
    "physics": "物理",
    "politics": "政治",
    "science": "科学",
}

_FILE = re.compile(
    r"^(?P<level>Primary|Middle|High)_School_(?P<discipline>[A-Za-z]+)_(?P<split>dev|val|test)$"
)


@dataclass(frozen=True)
class Subject:
    """One E-EVAL subject.

    Attributes
    ----------
    key
        Lower-case identifier, e.g. ``high_school_biology`` (submission key).
    level
        ``primary``, ``middle`` or ``high``.
    discipline
        Lower-case discipline, e.g. ``biology``.
    """

    key: str
    level: str
    discipline: str

    @property
    def name_en(self) -> str:
        """English display name, e.g. ``High School Biology``."""
        return f"{LEVEL_NAMES_EN[self.level]} {self.discipline.capitalize()}"

    @property
    def name_zh(self) -> str:
        """Chinese display name used in prompts, e.g. ``高中生物``."""
        return LEVEL_NAMES_ZH[self.level] + DISCIPLINE_NAMES_ZH.get(self.discipline, self.discipline)

    @property
    def file_prefix(self) -> str:
        """File name without the split, e.g. ``High_School_Biology``."""
        return f"{self.level.capitalize()}_School_{self.discipline.capitalize()}"


def parse_subject_file(path: Path) -> tuple[Subject, str]:
    """The subject and split of an E-EVAL file name.

    Examples
    --------
    >>> s, split = parse_subject_file(Path("val/Middle_School_Physics_val.csv"))
    >>> s.key, s.level, s.name_zh, split
    ('middle_school_physics', 'middle', '初中物理', 'val')
    """
    match = _FILE.match(path.stem)
    if not match:
        raise UserError(
            f"{path}: not an E-EVAL subject file (expected <Primary|Middle|High>_School_<Subject>_"
            "<dev|val|test>.csv)"
        )
    level = match["level"].lower()
    discipline = match["discipline"].lower()
    return Subject(f"{level}_school_{discipline}", level, discipline), match["split"]


def subject_from_key(key: str) -> Subject:
    """The subject of a key (``high_school_biology``) or file prefix (``High_School_Biology``)."""
    subject, _ = parse_subject_file(Path(f"{key.strip().title()}_val.csv"))
    return subject
