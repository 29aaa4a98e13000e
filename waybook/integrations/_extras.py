"""One way for every integration to say that its runtime is missing: `MissingExtraError`, naming the extra.

    with needs_extra("waybook.integrations.strands", runtime="Strands Agents", extra="strands",
                     modules=("strands",)):
        from strands.session.session_repository import SessionRepository

Only a missing module of the runtime itself (or of its own dependencies, listed in `modules`) becomes the
typed error; any other import failure is raised as it is, so a broken install is not mistaken for a
missing extra.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from waybook.integrations.errors import MissingExtraError


@contextmanager
def needs_extra(integration: str, *, runtime: str, extra: str, modules: tuple[str, ...]) -> Iterator[None]:
    """Turn a ModuleNotFoundError for one of `modules` (top-level names) into MissingExtraError."""
    try:
        yield
    except ModuleNotFoundError as missing:
        top = (missing.name or "").partition(".")[0]
        if top not in modules:
            raise
        raise MissingExtraError(
            integration=integration, runtime=runtime, extra=extra, missing=missing.name
        ) from missing
