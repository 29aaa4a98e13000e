"""`waybook tree PATH [--at SEQ]`: show the branch tree and every leaf move.

Show the session tree. Straight runs of entries are folded into one line, summed up by their last message that
is not a harness entry and cut to the terminal's width (120 columns into a pipe); node ids are the shortest
prefixes unique in the journal. The active branch is marked with *, abandoned branches are dimmed, and every
leaf move is listed with its reason (a run of moves of one action as one, with its count).

Example: waybook tree session.jsonl --at 5
"""

from __future__ import annotations

import argparse
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.text import Text
from rich.tree import Tree

from waybook import stores
from waybook.commands.common import (
    emit_json_streamed,
    open_journal,
    replay_with_progress,
    seq_arg,
    short_kind,
    summary,
)
from waybook.commands.ids import check_at, short_ids
from waybook.commands.journal_files import damage_status, subagent_file
from waybook.commands.layout import fitted
from waybook.commands.plain_print import print_lines
from waybook.commands.store_option import connect_store
from waybook.commands.subcommand import add_journal_command, add_json_option
from waybook.commands.terminal import plural, visible
from waybook.journal import JsonlJournal, SessionJournal, read_seqs, shown_records
from waybook.projections import LinkRef, TreeProjection, TreeState, is_harness, move_runs, subagent_links
from waybook.projections._tree import NONE

LABEL_CHARS = 200
"""The longest summary a label holds before the console cuts it to the width with `…`."""


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_journal_command(commands, "tree", __doc__)
    parser.add_argument("--at", type=seq_arg, metavar="SEQ", help="show the tree as it was at this seq")
    add_json_option(parser, "machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with open_journal(args.path, args.store) as journal:
        check_at(args.at, journal.head().seq, path=args.path)
        tree = replay_with_progress(TreeProjection(), journal, at=args.at)
        links = subagent_links(journal.read(limit=args.at))
        if args.json:
            emit_json_streamed(
                tree_json(tree) | {"subagents": [_link_json(link, args.path, args.store) for link in links]}
            )
            return damage_status(journal)
        console = fitted()
        deepest = _deepest(console.width)
        labels, harness = _labels(journal, tree, deepest)
    names = short_ids(list(tree.ids))
    console.print(
        f"{escape(visible(str(args.path)))}  seq {tree.seq}  {plural(tree.node_count, 'node')}  "
        f"leaf {names.get(tree.leaf_id or '', tree.leaf_id) or '(none)'}"
    )
    active = set(tree.path_to(tree.leaf_id))
    for root in tree.roots():
        console.print(_segment_tree(tree, root, active, labels, names, deepest, harness))
    if tree.moves:
        print_lines(console, _move_lines(tree, names))
    if links:
        console.print("sub-agents:")
        for link in links:
            found = _link_json(link, args.path, args.store)
            where = (
                f"{found['file']} ({found['records']} records)"
                if found["file"]
                else "(not in this store)"
                if args.store
                else "(not beside this journal)"
            )
            call = f" call {link.call_id}" if link.call_id else ""
            node = names.get(link.node, link.node)
            console.print(f"  {escape(node)}{escape(call)} -> {escape(link.journal)}")
            console.print(f"    {escape(where)}")
            if link.reason:
                console.print(f"    {escape(visible(link.reason, one_line=True))}")
    return damage_status(journal)


def _move_lines(tree: TreeState, names: dict[str, str]) -> Iterator[str]:
    """The leaf moves' lines (text, not markup): each run of moves, then its reason on a line of its
    own. A rewind of many pops is one run, with its count."""
    yield "leaf moves:"
    for run in move_runs(tree.moves):
        move = run.first
        ends = (names.get(run.from_leaf or "", run.from_leaf), names.get(run.to_leaf or "", run.to_leaf))
        what = "reset" if move.reset else f"{ends[0]} -> {ends[1]}"
        who = f" by {move.actor}" if move.actor else ""
        many = f" ({run.count} moves, one after another)" if run.count > 1 else ""
        seqs = f"{move.seq}-{run.last.seq}" if run.count > 1 else str(move.seq)
        yield f"  seq {seqs}: {visible(what + who + many, one_line=True)}"
        if move.reason:
            yield f"    {visible(move.reason)}"


def _in_store(store: stores.JournalStore, journal_id: str) -> bool:
    """Whether the store holds `journal_id`, a link's text: an id the store refuses names none of its
    journals, and never stops the command."""
    try:
        return store.exists(journal_id)
    except stores.InvalidJournalIdError:
        return False


def _link_json(link: LinkRef, path: Path, store: str | None) -> dict[str, Any]:
    """A link, and where its journal is: in the same store, or beside `path` (`<journal id>.jsonl`)."""
    where: str | None = None
    records = None
    if store is not None:
        with connect_store(store) as opened:
            if _in_store(opened, link.journal):
                with stores.open_journal(opened, link.journal) as linked:
                    where, records = f"{store} {link.journal}", linked.head().seq
    else:
        beside = subagent_file(path, link.journal)  # None for an id that would lead out of the folder
        if beside is not None:
            with JsonlJournal(beside, readonly=True) as linked:
                where, records = str(beside), linked.head().seq
    return {
        "seq": link.seq,
        "node": link.node,
        "call_id": link.call_id,
        "journal": link.journal,
        "agent": link.agent,
        "reason": link.reason,
        "file": where,
        "records": records,
    }


GUIDE_CELLS = 4
"""The cells each level of Rich's tree guides takes (every guide style, ASCII too)."""


def _deepest(width: int) -> int:
    """The deepest level of the tree whose labels Rich shows at `width` columns.

    Rich lays out a label at depth d in `width - 4 d` cells, and one of 0 cells prints no line at all,
    nor does anything below it: a tree deeper than that (a session that branches at every level) is
    built only down to there, so its layout costs the lines shown, not depth times nodes.
    """
    return (width - 1) // GUIDE_CELLS


def _segment_end(tree: TreeState, start: int) -> tuple[int, int]:
    """The last node of the straight run beginning at `start` (stops at a fork or a childless node), and
    how many nodes the run holds."""
    first_child, next_sibling = tree.first_child, tree.next_sibling
    node, count = start, 1
    while True:
        child = first_child[node]
        if child == NONE or next_sibling[child] != NONE or node == tree.leaf:
            return node, count
        node, count = child, count + 1


MESSAGES = frozenset({"user", "assistant", "tool_result", "system", "compaction"})
"""The kinds a run's summary is taken from: its last message, not the bookkeeping after it."""


def _told(tree: TreeState, start: int, end: int, harness: Container[int] = ()) -> int:
    """The position whose record sums up the run `start`..`end`: its last message that is not a harness
    entry (a position in `harness`), else its end."""
    node = end
    while True:
        if short_kind(tree.kinds[node]) in MESSAGES and node not in harness:
            return node
        if node == start:
            return end
        parent = tree.parents[node]
        if parent == NONE:
            return end
        node = parent


def _shown_seqs(tree: TreeState, deepest: int, harness: Container[int] = ()) -> set[int]:
    """The seqs of the records the labels of the runs down to depth `deepest` are made from."""
    seqs = set()
    starts = [(tree.index[r], 0) for r in tree.roots()]
    while starts:
        start, depth = starts.pop()
        end, _ = _segment_end(tree, start)
        seqs.update({tree.seqs[start], tree.seqs[end], tree.seqs[_told(tree, start, end, harness)]})
        if depth < deepest:
            starts.extend((child, depth + 1) for child in tree.children_positions(end))
    return seqs


def _labels(journal: SessionJournal, tree: TreeState, deepest: int) -> tuple[dict[str, Any], set[int]]:
    """The records the labels show, by id, and the positions found to be harness entries: a run is
    labelled by its last message that is not one (a caveat or injected context), read as they are met."""
    labels: dict[str, Any] = {}
    harness: set[int] = set()
    read: set[int] = set()
    while wanted := _shown_seqs(tree, deepest, harness) - read:
        found = shown_records(journal, read_seqs(journal, sorted(wanted)), pair_calls=False)
        read |= wanted
        labels.update({r.id: r for r in found})
        harness |= {tree.index[r.id] for r in found if r.id in tree.index and is_harness(r.body)}
    return labels, harness


def _segment_tree(
    tree: TreeState,
    root: str,
    active: set[str],
    labels: dict[str, Any],
    names: dict[str, str],
    deepest: int,
    harness: Container[int] = (),
) -> Tree:
    """Rich's tree of the runs from `root`, down to depth `deepest` (Rich shows nothing deeper)."""

    def label(start: int) -> tuple[Text, int]:
        end, count = _segment_end(tree, start)
        first, last = tree.ids[start], tree.ids[end]
        is_active = last in active
        mark = "* " if is_active else "  "
        run = names[first] if start == end else f"{names[first]} .. {names[last]} ({count} entries)"
        record = labels[tree.ids[_told(tree, start, end, harness)]]
        said = escape(summary(record, LABEL_CHARS))
        leaf = "  <- leaf" if tree.leaf_id == last else ""  # before the summary, which may be cut
        text = f"{mark}{escape(visible(run, one_line=True))}{leaf}  {escape(short_kind(record.kind))}: {said}"
        markup = text if is_active else f"[dim]{text}[/dim]"
        label_text = Text.from_markup(markup, overflow="ellipsis")
        label_text.no_wrap = True
        return label_text, end  # cut to the width, never wrapped

    text, end = label(tree.index[root])
    top = Tree(text, guide_style="dim")
    stack = [(top, end, 0)]
    while stack:
        node, end, depth = stack.pop()
        if depth == deepest:
            continue
        for child in tree.children_positions(end):
            text, child_end = label(child)
            stack.append((node.add(text), child_end, depth + 1))
    return top


def tree_json(tree: TreeState) -> dict[str, Any]:
    """The tree as `tree --json` writes it (with `emit_json_streamed`). Its nodes, branches and moves are
    iterators, made as they are written: the branches' paths together can be far larger than the
    session (a deep tree that branches at every level has as many paths as levels, each as long as its
    depth), so each path is walked when its branch is written and let go after."""
    leaf = tree.leaf_id
    return {
        "seq": tree.seq,
        "digest": tree.digest,
        "leaf": leaf,
        "nodes": (
            {
                "id": tree.ids[i],
                "kind": tree.kinds[i],
                "seq": tree.seqs[i],
                "parent": None if tree.parents[i] == NONE else tree.ids[tree.parents[i]],
            }
            for i in range(tree.node_count)
        ),
        "branches": (
            {"end": end, "active": end == leaf, "path": list(tree.path_to(end))} for end in tree.leaves()
        ),
        "moves": (
            {
                "seq": m.seq,
                "id": m.record_id,
                "from": m.from_leaf,
                "to": m.to_leaf,
                "reason": m.reason,
                "actor": m.actor,
                "at": m.at,
                "reset": m.reset,
            }
            for m in tree.moves
        ),
    }
