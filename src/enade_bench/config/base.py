"""The shared pieces of the config blocks: :class:`StrictModel` and the small literal types."""

from __future__ import annotations

import os
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict

Method = Literal["generation", "log_prob", "first_token"]
#: A path a config names: ``~`` and ``~user`` at its start are the home folder (as in a shell).
UserPath = Annotated[str, AfterValidator(os.path.expanduser)]
Provider = Literal["anthropic", "openai", "maritaca", "google", "nvidia", "openai_compatible"]


class StrictModel(BaseModel):
    """Base for config blocks: unknown keys are an error, values are not coerced silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)
