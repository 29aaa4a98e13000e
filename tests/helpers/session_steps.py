"""Random sessions for property tests: hypothesis draws a list of steps, `build_session` writes them."""

from __future__ import annotations

from hypothesis import strategies as st

from waybook import Session
from waybook.journal import InMemoryJournal
from waybook.projections import TreeProjection, replay

actions = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.text(max_size=8)),
        st.tuples(st.just("assistant"), st.text(max_size=8)),
        st.tuples(st.just("branch"), st.integers(0, 50)),
        st.tuples(st.just("compact"), st.integers(0, 50)),
        st.tuples(st.just("exclude"), st.integers(0, 50)),
        st.tuples(st.just("custom"), st.booleans()),
        st.tuples(st.just("reset"), st.none()),
    ),
    max_size=40,
)


def build_session(steps: list[tuple[str, object]]) -> InMemoryJournal:
    journal = InMemoryJournal()
    session = Session.create(journal)
    nodes: list[str] = []
    for action, arg in steps:
        tree = replay(TreeProjection(), journal)
        path = list(tree.path_to(session.leaf))
        if action in ("user", "assistant"):
            record = getattr(session, action)(str(arg))
        elif action == "branch" and nodes:
            record = session.branch_from(nodes[int(arg) % len(nodes)], reason="r")  # type: ignore[call-overload]
        elif action == "compact" and path:
            record = session.compact("s", first_kept=path[int(arg) % len(path)])  # type: ignore[call-overload]
        elif action == "exclude" and path:
            record = session.exclude(path[int(arg) % len(path)])  # type: ignore[call-overload]
        elif action == "custom":
            record = session.custom("t.x", None, in_context=bool(arg), content="c")
        elif action == "reset":
            record = session.reset()
        else:
            continue
        if record.body.IS_NODE:
            nodes.append(record.id)
    return journal
