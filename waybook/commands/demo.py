"""`waybook demo [DIR]`: write a demo session journal and show it.

Write a small realistic session (a debugging task with tool calls and results, a retry that branches, a
compaction) into DIR/session.jsonl, then print its tree and verify its chain.

Example: waybook demo && waybook show waybook-demo/session.jsonl --context
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waybook._session import Session
from waybook.commands.exits import OK, PROBLEM, UsageError
from waybook.commands.subcommand import add_command
from waybook.journal import JsonlJournal, verify_file
from waybook.memory import Memory
from waybook.model import TextBlock, ThinkingBlock, ToolCallBlock

TOOLS = [
    {
        "name": "bash",
        "description": "Run a shell command in the repository",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
    },
    {
        "name": "edit",
        "description": "Replace text in a file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}},
            "required": ["path", "old", "new"],
        },
    },
]


DURABILITY_MEANS = {
    "group": "every append was on disk (fsynced) before it returned, the default",
    "fsync": "every append was fsynced before it returned",
    "flush": "appends were fsynced when the journal was flushed or closed",
    "none": "the operating system wrote the appends when it chose to",
}
"""What each durability policy promised, for the line the demo prints (docs/jsonl.md, "Durability")."""


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "demo", __doc__)
    parser.add_argument(
        "dir", nargs="?", type=Path, metavar="DIR", help="default: a new ./waybook-demo folder"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    directory = args.dir or _new_folder(Path.cwd() / "waybook-demo")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "session.jsonl"
    memory_path = directory / "memory.jsonl"
    for existing in (path, memory_path):
        if existing.exists():
            msg = f"{existing} already exists; choose another DIR"
            raise UsageError(msg)
    metadata = {"cwd": "/srv/shop", "tools": TOOLS}
    with (
        JsonlJournal.create(path, journal_id="demo-session", metadata=metadata) as journal,
        JsonlJournal(memory_path) as memory_journal,
    ):
        write_demo_session(Session(journal, actor="demo"), Memory(memory_journal, scope="demo-agent"))
        durability = journal.durability
    from waybook.commands import tree

    tree.run(argparse.Namespace(path=path, store=None, at=None, json=False))
    report = verify_file(path)
    print(report)
    print(f"durability: {durability}: {DURABILITY_MEANS.get(durability, durability)}")
    print(
        f"\nnext: waybook show {path} --context\n"
        f"      waybook memory {memory_path} --history /memories/payments.md\n"
        f"      waybook export {path} --format openai --branches all --redact -o train.jsonl"
    )
    return OK if report.ok else PROBLEM


def write_demo_session(session: Session, memory: Memory) -> None:
    """A debugging task: run the tests, read the code, a fix that is rejected, a better fix, a compaction.

    The agent also notes what it learned in working memory; each memory write's receipt goes into the
    tool result that reports it.
    """
    session.system("You are a careful coding agent. Use tools; keep public APIs stable.")
    session.user("The tests in payments/ fail since this morning. Can you find out why?")
    session.assistant(
        [
            ThinkingBlock(thinking="Run the failing tests first to see the error."),
            TextBlock(text="I'll run the payment tests."),
            ToolCallBlock(call_id="call-1", name="bash", arguments={"cmd": "pytest payments -x -q"}),
        ],
        stop_reason="tool_use",
        model="demo-model",
    )
    session.tool_result(
        "call-1",
        "FAILED payments/test_totals.py::test_vat - assert 10.99 == 11.0\n"
        "env: STRIPE_KEY=sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        tool_name="bash",
        is_error=True,
    )
    session.assistant(
        [ToolCallBlock(call_id="call-2", name="bash", arguments={"cmd": "git log -1 -p payments/totals.py"})],
        stop_reason="tool_use",
        model="demo-model",
    )
    session.tool_result(
        "call-2", "-    return round(net * 1.1, 2)\n+    return int(net * 110) / 100", tool_name="bash"
    )
    diagnosis = session.assistant(
        "This morning's commit replaced round() with truncation, so 10.995 becomes 10.99.", model="demo-model"
    )
    ask_fix = session.user("Can you fix it?")
    _edit_totals(session, "call-3", "def total(net)", "def total(net, ndigits=2)")
    session.assistant("Fixed by adding an ndigits parameter.", model="demo-model")
    # The user rejects that fix: go back to the request and try again. Nothing is erased.
    session.branch_from(ask_fix.id, reason="rejected: the fix changed a public signature")
    _edit_totals(session, "call-4", "int(net * 110) / 100", "round(net * 1.1, 2)")
    session.assistant(
        [
            TextBlock(text="Restored rounding without changing the signature; the tests pass."),
            ToolCallBlock(
                call_id="call-5",
                name="memory",
                arguments={"command": "create", "path": "/memories/payments.md", "file_text": NOTE},
            ),
        ],
        stop_reason="tool_use",
        model="demo-model",
    )
    note = memory.execute(
        {"command": "create", "path": "/memories/payments.md", "text": NOTE}, call_id="call-5"
    )
    assert note.receipt is not None
    session.tool_result(
        "call-5", "saved /memories/payments.md", tool_name="memory", details=note.receipt.as_details()
    )
    thanks = session.user("Thanks. Summarise what changed for the changelog.")
    session.compact(
        f"The payment tests failed because truncation replaced rounding ({diagnosis.id}). "
        "The first fix changed a public signature and was rejected; rounding was restored instead.",
        first_kept=thanks.id,
        tokens_before=5200,
    )
    session.assistant(
        "Fix VAT totals: restore rounding to 2 decimals (regression from truncation).", model="demo-model"
    )


NOTE = (
    "---\ndescription: lessons from the payments module\n---\n"
    "- totals must round to 2 decimals; never truncate\n"
    "- keep public signatures stable (the user rejects API changes)\n"
)


def _new_folder(base: Path) -> Path:
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


def _edit_totals(session: Session, call_id: str, old: str, new: str) -> None:
    """The agent edits payments/totals.py: the call, then its result."""
    arguments = {"path": "payments/totals.py", "old": old, "new": new}
    call = ToolCallBlock(call_id=call_id, name="edit", arguments=arguments)
    session.assistant([call], stop_reason="tool_use", model="demo-model")
    session.tool_result(call_id, "edited payments/totals.py", tool_name="edit")
