"""Prompt layers: the base prompt, the stable extension orientation and the dynamic memory layer.

Kept apart, in that order, each with its authority label and the SHA-256 of its bytes, so a runtime can
cache the stable prefix (base + orientation) and an auditor can tell which text came from whom: the
operator's base prompt, the extensions' orientation, and memory the agent wrote (data, not instructions).
`record_prompt(session, layers)` records the digests with the turn (`waybook.memory.used/1`).

Another memory source (a retrieval index, a knowledge graph, a team's notes) adds its own layer through
`ContextContribution`, a two-member Protocol (`name`, `text`): `prompt_layers(..., contributions=[...])`
puts each after the memory block, labelled `memory` (data, not instructions) and digested like the rest.
The loop stays the host's: nothing is replaced, a contribution is one more layer of the same turn.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final, Literal, Protocol, runtime_checkable

import attrs

from waybook.memory._errors import RequestError
from waybook.memory.tools._block import MemoryBlock
from waybook.model import MemoryUsed

if TYPE_CHECKING:
    from waybook._session import Session

Authority = Literal["operator", "extension", "memory"]
LAYER_ORDER: Final = ("base", "orientation", "memory")
AUTHORITY: Final[dict[str, Authority]] = {"base": "operator", "orientation": "extension", "memory": "memory"}


@runtime_checkable
class ContextContribution(Protocol):
    """A prompt layer another memory source contributes to a turn: its `name` (not `base`, `orientation`
    or `memory`, and unique in the turn) and its `text`. Its authority is `memory`: data for the model,
    never instructions."""

    @property
    def name(self) -> str: ...

    @property
    def text(self) -> str: ...


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@attrs.frozen
class PromptLayer:
    name: str
    authority: Authority
    text: str
    sha256: str


@attrs.frozen
class PromptLayers:
    layers: tuple[PromptLayer, ...]
    block: MemoryBlock

    @property
    def text(self) -> str:
        """The prompt: every layer's text, in order, nothing between them."""
        return "".join(layer.text for layer in self.layers)

    @property
    def stable_prefix(self) -> str:
        """The base prompt and the orientation: the part a runtime may cache across turns."""
        return "".join(layer.text for layer in self.layers if layer.authority != "memory")


def prompt_layers(
    base: str,
    orientation: str,
    block: MemoryBlock,
    *,
    contributions: Iterable[ContextContribution] = (),
) -> PromptLayers:
    """The layers of one turn's prompt, in their fixed order, each labelled and digested: base,
    orientation, memory, then each contribution in the order given."""
    texts = {"base": base, "orientation": orientation, "memory": block.text}
    layers = [PromptLayer(n, AUTHORITY[n], texts[n], sha256_text(texts[n])) for n in LAYER_ORDER]
    for contribution in tuple(contributions):
        name, text = _contributed(contribution, {layer.name for layer in layers})
        layers.append(PromptLayer(name, "memory", text, sha256_text(text)))
    return PromptLayers(tuple(layers), block)


def _contributed(contribution: object, taken: set[str]) -> tuple[str, str]:
    """A contribution's name and text, each read once and copied, then checked."""
    try:  # each read once (an isinstance check against the Protocol would read them too)
        name, text = contribution.name, contribution.text  # type: ignore[attr-defined]
    except AttributeError:
        msg = f"a context contribution has a name and a text; {type(contribution).__name__} has not"
        raise RequestError(msg) from None
    if not isinstance(name, str) or not isinstance(text, str):
        kinds = f"{type(name).__name__} and {type(text).__name__}"
        msg = f"a context contribution's name and text are strings, not {kinds}"
        raise RequestError(msg)
    name, text = str.__str__(name), str.__str__(text)
    if not name or name in taken:
        msg = (
            f"context contribution name {name!r:.60} is empty or already a layer of this turn; give it a "
            "name of its own"
        )
        raise RequestError(msg)
    return name, text


def record_prompt(
    session: Session, prompt: PromptLayers, *, policy: Literal["require", "continue"] = "require"
) -> None:
    """Record in `session` what memory and which layers the next turn's prompt carries."""
    block = prompt.block
    session.append(
        MemoryUsed(
            memory=block.journal,
            seq=block.seq,
            digest=block.digest,
            block_sha256=block.sha256,
            layers=tuple((layer.name, layer.authority, layer.sha256) for layer in prompt.layers),
            policy=policy,
        )
    )
