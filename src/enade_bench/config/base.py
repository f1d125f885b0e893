"""The shared pieces of the config blocks: :class:`StrictModel` and the small literal types."""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

Method = Literal["generation", "log_prob", "first_token"]
#: A path a config names: ``~`` and ``~user`` at its start are the home folder (as in a shell).
UserPath = Annotated[str, AfterValidator(os.path.expanduser)]
Provider = Literal["anthropic", "openai", "maritaca", "google", "nvidia", "openai_compatible"]


def unset_absent(description: str, default: Any = None) -> Any:
    """A field absent from the dump while it holds its default (``None`` unless given): the resume
    fingerprints of runs recorded before the field existed hold."""
    return Field(default=default, exclude_if=lambda v: v is default or v == default, description=description)


class StrictModel(BaseModel):
    """Base for config blocks: unknown keys are an error, values are not coerced silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)
