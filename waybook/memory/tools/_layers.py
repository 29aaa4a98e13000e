"""Prompt layers: the base prompt, the stable extension orientation and the dynamic memory layer.

Kept apart, in that order, each with its authority label and the SHA-256 of its bytes, so a runtime can
cache the stable prefix (base + orientation) and an auditor can tell which text came from whom: the
operator's base prompt, the extensions' orientation, and memory the agent wrote (data, not instructions).
`record_prompt(session, layers)` records the digests with the turn (`waybook.memory.used/1`).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Final, Literal

import attrs

from waybook.memory.tools._block import MemoryBlock
from waybook.model._records import MemoryUsed

if TYPE_CHECKING:
    from waybook._session import Session

Authority = Literal["operator", "extension", "memory"]
LAYER_ORDER: Final = ("base", "orientation", "memory")
AUTHORITY: Final[dict[str, Authority]] = {"base": "operator", "orientation": "extension", "memory": "memory"}


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
        return "".join(layer.text for layer in self.layers if layer.name != "memory")


def prompt_layers(base: str, orientation: str, block: MemoryBlock) -> PromptLayers:
    """The three layers of one turn's prompt, in their fixed order, each labelled and digested."""
    texts = {"base": base, "orientation": orientation, "memory": block.text}
    layers = tuple(PromptLayer(n, AUTHORITY[n], texts[n], sha256_text(texts[n])) for n in LAYER_ORDER)
    return PromptLayers(layers, block)


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
