"""The README quickstart: a session with a tool call, a retry on a new branch, and a verified chain."""

from waybook import InMemoryJournal, Session, verify
from waybook.model import ToolCallBlock

journal = InMemoryJournal("quickstart")
session = Session.create(journal, journal_id="quickstart")
question = session.user("How many rows are in data.csv?")
call = ToolCallBlock(call_id="c1", name="bash", arguments={"cmd": "wc -l data.csv"})
session.assistant([call], stop_reason="tool_use")
session.tool_result("c1", "3 data.csv", tool_name="bash")
session.assistant("It has 3 lines: a header and 2 rows.")
session.branch_from(question.id, reason="regenerate without tools")  # nothing is erased
session.assistant("I cannot read files without a tool.")
print(verify(journal))
for record in journal.read():
    print(record.seq, record.kind, record.id)
