"""Which branch ends a fork's preference pairs take, found without walking every branch below every fork.

A branch end's verdict at a fork comes from the labels on its path strictly after the fork: "rejected"
wins over "chosen"; with neither it is unlabelled (`TrajectoryExporter.pairs`). Below the fork's child
`c` that is the verdict of the labels on the path from `c` to the end. `ForkEnds` counts, for every
node, the ends below it of each verdict from its own labels down (one pass, children before parents),
so a fork whose children hold no chosen end is passed over in O(children), and the ends a fork pairs
are found by a walk that enters a node only when an end it reports lies below it: the walk costs at
most the paths of the ends it returns, which the rows they make hold anyway. A deep session that
branches at every level (issue 50) no longer walks every subtree from every fork.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from waybook.projections import TreeState
from waybook.projections._tree import NONE

CHOSEN: Final = 1
REJECTED: Final = 2
NO_VERDICT: Final = 0


def _verdict(label: str | None) -> int:
    return REJECTED if label == "rejected" else CHOSEN if label == "chosen" else NO_VERDICT


def _combine(above: int, own: int) -> int:
    """The verdict of labels `above` on a path, then a node labelled `own`: rejected wins."""
    if REJECTED in (above, own):
        return REJECTED
    return CHOSEN if CHOSEN in (above, own) else NO_VERDICT


class ForkEnds:
    """The branch ends below each node by verdict, for the preference pairs of `tree` under `labels`."""

    def __init__(self, tree: TreeState, labels: Mapping[str, str]) -> None:
        self.tree = tree
        n = tree.node_count
        self.own = [_verdict(labels.get(node_id)) for node_id in tree.ids]
        self.ends = {tree.index[end] for end in tree.leaves()}
        chosen, rejected, unlabelled = [0] * n, [0] * n, [0] * n
        parents = tree.parents
        for position in range(n - 1, -1, -1):  # a parent precedes its children: they are all summed
            c, r, u = chosen[position], rejected[position], unlabelled[position]
            if position in self.ends:
                u += 1
            own = self.own[position]
            if own == REJECTED:
                c, r, u = 0, c + r + u, 0
            elif own == CHOSEN:
                c, u = c + u, 0
            chosen[position], rejected[position], unlabelled[position] = c, r, u
            parent = parents[position]
            if parent != NONE:
                chosen[parent] += c
                rejected[parent] += r
                unlabelled[parent] += u
        self.chosen, self.rejected, self.unlabelled = chosen, rejected, unlabelled
        self._span: tuple[list[int], list[int]] | None = None
        self._by_target: dict[int, list[int]] | None = None

    def holds_chosen(self, child: int) -> bool:
        """Whether an end below `child` is chosen by the labels from `child` down."""
        return self.chosen[child] > 0

    def chosen_ends(self, child: int) -> list[int]:
        """The ends below `child` (in append order) whose labels from `child` down choose them."""
        return self._walk(child, want_chosen=True)

    def other_ends(self, child: int) -> list[int]:
        """The ends below `child` (in append order) whose labels from `child` down do not choose them."""
        return self._walk(child, want_chosen=False)

    def _leads_to(self, position: int, above: int, *, want_chosen: bool) -> bool:
        """Whether an end below `position` has the wanted verdict, given the labels `above` it."""
        if want_chosen:
            if above == REJECTED:
                return False
            found = self.chosen[position] + (self.unlabelled[position] if above == CHOSEN else 0)
        else:
            if above == REJECTED:
                return True
            found = self.rejected[position] + (self.unlabelled[position] if above == NO_VERDICT else 0)
        return found > 0

    def _walk(self, start: int, *, want_chosen: bool) -> list[int]:
        found: list[int] = []
        if not self._leads_to(start, NO_VERDICT, want_chosen=want_chosen):
            return found
        tree, stack = self.tree, [(start, NO_VERDICT)]
        while stack:
            position, above = stack.pop()
            verdict = _combine(above, self.own[position])
            if position in self.ends and (verdict == CHOSEN) == want_chosen:
                found.append(position)
            stack.extend(
                (child, verdict)
                for child in tree.children_positions(position)
                if self._leads_to(child, verdict, want_chosen=want_chosen)
            )
        found.sort()
        return found

    def prompt_exclusions(self, fork: int, path: list[int]) -> set[int]:
        """The entries of `path` (the root-to-`fork` path) that an exclusion on any branch through
        `fork` takes back: one on the path itself, or anywhere below the fork (every node below a fork
        is on one of its branches)."""
        tin, tout = self._euler()
        by_target = self._targets()
        start, stop = tin[fork], tout[fork]
        excluded = set()
        for target in path:
            for exclusion in by_target.get(target, ()):
                here = tin[exclusion]
                if start <= here <= stop or here <= start <= tout[exclusion]:  # below, or on the path
                    excluded.add(target)
                    break
        return excluded

    def _targets(self) -> dict[int, list[int]]:
        if self._by_target is None:
            self._by_target = {}
            for exclusion, target in self.tree.exclusions.items():
                self._by_target.setdefault(target, []).append(exclusion)
        return self._by_target

    def _euler(self) -> tuple[list[int], list[int]]:
        """Each node's place in a depth-first order, and the last place below it: `x` is below `f`
        exactly when tin[f] <= tin[x] <= tout[f]."""
        if self._span is None:
            tree = self.tree
            n = tree.node_count
            tin, tout = [0] * n, [0] * n
            clock = 0
            for root in range(n):
                if tree.parents[root] != NONE:
                    continue
                stack = [(root, False)]
                while stack:
                    position, done = stack.pop()
                    if done:
                        tout[position] = clock - 1
                        continue
                    tin[position] = clock
                    clock += 1
                    stack.append((position, True))
                    stack.extend((child, False) for child in tree.children_positions(position))
            self._span = tin, tout
        return self._span
