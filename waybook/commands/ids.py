"""Ids on the command line: a full id, or a unique prefix of one (as git takes short hashes)."""

from __future__ import annotations

from pathlib import Path

from waybook.commands.exits import UsageError
from waybook.projections import TreeState

SHOWN_MATCHES = 10


def resolve_id(tree: TreeState, given: str, *, what: str, path: Path | str) -> str:
    """The node id `given` names in `tree`: itself, or the one node id it is a prefix of.

    No match and an ambiguous prefix are usage errors; the latter lists the matches.
    """
    if given in tree.index:
        return given
    matches = sorted(node for node in tree.index if node.startswith(given)) if given else []
    if len(matches) == 1:
        return matches[0]
    at = f" at seq {tree.seq}"
    if not matches:
        msg = f"{what} {given!r} is not a node of {path}{at}, nor the start of a node's id"
        raise UsageError(msg)
    shown = ", ".join(matches[:SHOWN_MATCHES]) + (" ..." if len(matches) > SHOWN_MATCHES else "")
    msg = f"{what} {given!r} is ambiguous: {len(matches)} nodes start with it ({shown}); give more characters"
    raise UsageError(msg)


def check_at(at: int | None, head: int, *, path: Path | str) -> None:
    """`--at SEQ` must name a seq the journal has (0 is the empty session before the first record)."""
    if at is not None and at > head:
        msg = f"--at {at}: {path} has only {head} records; give a seq from 0 to {head}"
        raise UsageError(msg)


def short_ids(ids: list[str], *, minimum: int = 8) -> dict[str, str]:
    """Each id's shortest prefix (at least `minimum` characters) that no other id in `ids` shares.

    Sorted neighbours share the longest prefixes, so one pass over the sorted ids finds them all.
    """
    ordered = sorted(set(ids))
    shortest: dict[str, str] = {}
    for i, current in enumerate(ordered):
        need = minimum
        for other in (ordered[i - 1] if i else None, ordered[i + 1] if i + 1 < len(ordered) else None):
            if other is not None:
                common = next(
                    (k for k, (a, b) in enumerate(zip(current, other, strict=False)) if a != b),
                    min(len(current), len(other)),
                )
                need = max(need, common + 1)
        shortest[current] = current[:need]
    return shortest
