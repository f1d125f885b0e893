"""The shared pieces of the config blocks: :class:`StrictModel` and the small literal types."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Method = Literal["generation", "log_prob", "first_token"]
Provider = Literal["anthropic", "openai", "maritaca", "google", "nvidia", "openai_compatible"]


class StrictModel(BaseModel):
    """Base for config blocks: unknown keys are an error, values are not coerced silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)
