"""Old wire versions and the pure upcasters that lift them to the current types on read.

Rule: a tag is never reused and a field never changes meaning. When a record type must change
incompatibly, its tag's version goes up, the old type moves here (frozen, as it was), and an upcaster
maps old to new. Golden fixtures of the old version live in fixtures/wire/legacy/.
"""

from __future__ import annotations

from typing import ClassVar

from msgspec import field

from waybook.model import Body, TextBlock, UserMessage


class UserMessageV1(Body, tag_field="kind", tag="waybook.user/1", frozen=True):
    """waybook.user/1: a user message was one plain string. Replaced by user/2 (typed content blocks)."""

    KIND: ClassVar[str] = "waybook.user/1"
    parent: str | None = field(name="parent")
    text: str = field(name="text")


def upcast_user_v1(old: UserMessageV1) -> UserMessage:
    return UserMessage(parent=old.parent, content=(TextBlock(text=old.text),))
