"""Decide when to compact from a token count that knows which request it measured."""

from waybook import InMemoryJournal, Session
from waybook.projections import RequestContext, context_usage

LIMIT = 1_000
tools = [{"name": "bash", "description": "run a shell command"}]
plan = RequestContext(model="m-1", system="You are terse.", tools=tools)

session = Session.create(InMemoryJournal("budget"), journal_id="budget")
session.user("Summarize the log.")
session.assistant("It is mostly retries.", usage={"input": 950, "output": 30}, request=plan)
session.user("Which service?")

usage = context_usage(session.journal.read(), plan=plan)
print(f"tokens {usage.tokens}, valid {usage.valid}, appended {len(usage.appended)}")
with_web = RequestContext(model="m-1", system="You are terse.", tools=[*tools, {"name": "web"}])
print("with another tool:", context_usage(session.journal.read(), plan=with_web).reason)

if usage.valid and usage.tokens is not None and usage.tokens > LIMIT * 0.9:
    compaction = session.compact("The user asked about a log of retries.", first_kept=usage.appended[0])
    assert compaction.body.details == {"summarized_revision": usage.revision}
    print("compacted; now:", context_usage(session.journal.read(), plan=plan).reason)
