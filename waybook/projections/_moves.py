"""Leaf moves as a reader takes them: consecutive moves that are one action shown as one.

A runtime that rewinds by popping one item at a time (the OpenAI Agents SDK's `pop_item`) writes one
leaf move per item: a six-turn rewind is 24 moves. Each stays in the journal; `tree` and the viewer
show a run of them as one move with its count. Pure: leaf moves in, runs out.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from waybook.projections._tree import LeafMove


@attrs.frozen
class MoveRun:
    """Leaf moves one after another (adjacent seqs), each from where the one before went, with one reason
    and actor: `first` and `last`, and how many. A run of one is a plain move."""

    first: LeafMove
    last: LeafMove
    count: int

    @property
    def from_leaf(self) -> str | None:
        return self.first.from_leaf

    @property
    def to_leaf(self) -> str | None:
        return self.last.to_leaf


def move_runs(moves: Iterable[LeafMove]) -> list[MoveRun]:
    """`moves` (in seq order) with each run of consecutive moves of one action as one `MoveRun`."""
    runs: list[MoveRun] = []
    for move in moves:
        if runs and _continues(runs[-1].last, move):
            runs[-1] = MoveRun(runs[-1].first, move, runs[-1].count + 1)
        else:
            runs.append(MoveRun(move, move, 1))
    return runs


def _continues(before: LeafMove, move: LeafMove) -> bool:
    return (
        move.seq == before.seq + 1
        and not move.reset
        and not before.reset
        and move.from_leaf == before.to_leaf
        and move.reason == before.reason
        and move.actor == before.actor
    )
