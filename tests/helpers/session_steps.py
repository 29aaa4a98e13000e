"""Random sessions for property tests: hypothesis draws a list of steps, `build_session` writes them."""

from __future__ import annotations

from hypothesis import strategies as st

from waybook import Session
from waybook.journal import InMemoryJournal
from waybook.model import TextBlock, ThinkingBlock, ToolCallBlock
from waybook.projections import TreeProjection, replay

_STEPS = (
    st.tuples(st.just("user"), st.text(max_size=8)),
    st.tuples(st.just("assistant"), st.text(max_size=8)),
    st.tuples(st.just("branch"), st.integers(0, 50)),
    st.tuples(st.just("compact"), st.integers(0, 50)),
    st.tuples(st.just("exclude"), st.integers(0, 50)),
    st.tuples(st.just("custom"), st.booleans()),
    st.tuples(st.just("reset"), st.none()),
)
actions = st.lists(st.one_of(*_STEPS), max_size=40)
tool_actions = st.lists(
    st.one_of(
        *_STEPS,
        st.tuples(st.just("calls"), st.integers(1, 3)),  # an assistant turn with N tool calls
        st.tuples(st.just("result"), st.integers(0, 50)),  # a result for some call made so far
        st.tuples(st.just("stray"), st.none()),  # a result whose call was never made
        st.tuples(st.just("thinking"), st.booleans()),  # an assistant turn thinking first (signed or not)
        st.tuples(st.just("system"), st.text(max_size=8)),
    ),
    max_size=40,
)
"""Steps of sessions that use tools and crash: calls left without a result (a crash or a cancel), results
out of place or for calls never made, thinking, system messages, on top of `actions`' branches,
compactions, exclusions and resets."""


def build_session(steps: list[tuple[str, object]]) -> InMemoryJournal:
    journal = InMemoryJournal()
    session = Session.create(journal)
    nodes: list[str] = []
    calls: list[str] = []
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
        elif action == "calls":
            made = [f"c{len(calls) + i}" for i in range(int(arg))]  # type: ignore[call-overload]
            calls += made
            blocks = [ToolCallBlock(call_id=c, name="bash", arguments={"n": i}) for i, c in enumerate(made)]
            record = session.assistant([TextBlock(text="run"), *blocks], stop_reason="tool_use")
        elif action == "result" and calls:
            record = session.tool_result(calls[int(arg) % len(calls)], "out")  # type: ignore[call-overload]
        elif action == "stray":
            record = session.tool_result("never-made", "out")
        elif action == "thinking":
            signature = "sig" if arg else None
            record = session.assistant(
                [ThinkingBlock(thinking="hmm", signature=signature), TextBlock(text="ok")], model="claude-x"
            )
        elif action == "system":
            record = session.system(str(arg))
        else:
            continue
        if record.body.IS_NODE:
            nodes.append(record.id)
    return journal
