"""What each provider accepts and bills: profiles, token counts, wire dialects, validation, overflow errors.

- :mod:`.profiles`       reader profiles: page geometry, cell, image cost function, limits (each rule sourced).
- :mod:`.request_model`  the request's ``model`` for a profile.
- :mod:`.tokens`         text token counting (tiktoken where offline, else a calibrated estimate).
- :mod:`.dialects`       neutral messages <-> OpenAI chat, Anthropic messages, OpenAI Responses bodies.
- :mod:`.validation`     a request body checked against a dialect's grammar and a profile's limits.
- :mod:`.overflow`       recognizing a provider's "context too long" answer, and silent truncation.
"""
