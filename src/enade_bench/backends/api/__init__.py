"""API backends: Anthropic, OpenAI, Maritaca, Google Gemini, NVIDIA NIM, OpenAI-compatible servers.

:func:`enade_bench.backends.factory.create_backend` builds one for ``model.type: api``
through :mod:`.spec` (an :class:`ApiBackend` with its key).  See docs/providers.md for
configs, keys, capabilities, retries and the batch workflow.
"""
