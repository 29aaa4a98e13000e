"""A sealed session that used a tool, and the erasures the placeholder tests make of it (docs/erasure.md)."""

from __future__ import annotations

from collections.abc import Sequence

from waybook import InMemoryJournal, Session
from waybook.journal import SessionJournal, erase
from waybook.model import TextBlock, ToolCallBlock

SECRET = "vault-secret-4f1a"
REASON = "GDPR request"
NEIGHBOURS = ("Look in the vault.", "Done: the vault is open.", "Thanks.", "You're welcome.")
"""The texts around the erased records, which every reader must keep as written."""

SYSTEM, ASK, CALL, RESULT, ANSWER, THANKS, WELCOME = range(2, 9)
"""The seqs of `tool_session`'s records (its header is seq 1); the first erasure is seq 9."""
ERASURE = 9


def tool_session(journal: SessionJournal) -> SessionJournal:
    """A system prompt, a question, an assistant turn whose call reads the secret, its result holding
    it, an answer, and one more exchange."""
    session = Session.create(journal, journal_id="vault")
    session.system("Be brief.")
    session.user(NEIGHBOURS[0])
    call = ToolCallBlock(call_id="c1", name="bash", arguments={"cmd": f"cat {SECRET}"})
    session.assistant([TextBlock(text=f"Opening {SECRET}."), call], stop_reason="tool_use")
    session.tool_result("c1", f"the vault holds {SECRET}", tool_name="bash")
    session.assistant(NEIGHBOURS[1])
    session.user(NEIGHBOURS[2])
    session.assistant(NEIGHBOURS[3])
    return journal


def erased_session(journal: SessionJournal, seqs: Sequence[int] = (CALL, RESULT)) -> SessionJournal:
    """`tool_session` with the content of `seqs` erased for `REASON` (the erasure record is seq 9)."""
    tool_session(journal)
    erase(journal, seqs, reason=REASON)
    return journal


def placeholder(by: int = ERASURE, reason: str = REASON) -> str:
    return f"[erased by #{by}: {reason}]"


def split_turn_session() -> InMemoryJournal:
    """One assistant turn recorded as one message per tool call, its results after them all (as Claude
    Code's transcripts and the OpenAI Agents SDK's items record parallel calls): seqs 3 and 4 make calls
    c1 and c2, seqs 5 and 6 answer them."""
    journal = InMemoryJournal("split")
    session = Session.create(journal)
    session.user("read both")
    session.assistant(
        [ToolCallBlock(call_id="c1", name="read", arguments={"p": "a"})], stop_reason="tool_use"
    )
    session.assistant(
        [ToolCallBlock(call_id="c2", name="read", arguments={"p": "b"})], stop_reason="tool_use"
    )
    session.tool_result("c1", "out-one", tool_name="read")
    session.tool_result("c2", "out-two", tool_name="read")
    session.assistant("both read")
    return journal


SPLIT_TEXTS = {2: "read both", 5: "out-one", 6: "out-two", 7: "both read"}
"""The text of each record of `split_turn_session` that holds one."""
