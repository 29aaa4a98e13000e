"""An application stores its own typed values in a session and renames an attribute without a migration."""

import attrs

from waybook import InMemoryJournal, Session
from waybook.codecs import ValueRegistry, decode_value, register_value


@attrs.frozen
class Plan:  # version 1 of the application's class
    goal: str
    value: int


register_value(Plan, "example.plan/1")
journal = InMemoryJournal("plans")
session = Session.create(journal, journal_id="plans")
record = session.custom("example.plan", Plan("ship the release", 3))
print("stored:", record.body.data)
print("read:", decode_value(record.body.data))


@attrs.frozen
class RenamedPlan:  # a later release renamed `value`; the wire name stays "value"
    goal: str
    current_value: int


later = ValueRegistry()  # a new process registers today's class (here: a registry of its own)
later.register(RenamedPlan, "example.plan/1", fields={"value": "current_value"})
print("after the rename:", later.decode(record.body.data))
print("without a codec:", ValueRegistry().read(record.body.data))
