"""Application value codecs: stable tags and wire names, renames without migration, fail-closed reads."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import waybook.codecs
from tests.helpers.value_samples import PLAN_V1, PlanAsFirstWritten, plan_v1_lines
from waybook import InMemoryJournal, JsonlJournal, Session
from waybook.codecs import (
    OpaqueValue,
    UnknownValueTagError,
    UnregisteredValueError,
    ValueRegistry,
    decode_record,
    decode_value,
    register_value,
)
from waybook.model import CustomEntry, InvalidRecordError, UnknownTagError, WrongTypeError


@attrs.frozen
class Plan:
    """The application's class today: `value` was renamed to `current_value`; the wire name stays."""

    goal: str
    current_value: int
    steps: tuple[str, ...] = ()


def stored_values(path: Path = PLAN_V1) -> list[Any]:
    with JsonlJournal(path, readonly=True) as journal:
        return [r.body.data for r in journal.read() if isinstance(r.body, CustomEntry)]


def test_todays_writer_still_writes_the_golden_value_bytes() -> None:
    """The values' bytes: today's journals seal them after a fresh salt (docs/erasure.md), so the lines
    differ from the golden schema-1 journal's, but each value is the same JSON member, byte for byte."""
    written = [decode_record(line).body for line in plan_v1_lines()]
    golden = [decode_record(line).body for line in PLAN_V1.read_bytes().splitlines()]
    values = [msgspec.json.encode(b.data) for b in written[1:]]  # type: ignore[union-attr]
    assert values == [msgspec.json.encode(b.data) for b in golden[1:]]  # type: ignore[union-attr]
    assert written[1:] == golden[1:]


def test_a_wire_field_decodes_into_its_renamed_attribute_without_a_migration() -> None:
    registry = ValueRegistry()
    registry.register(Plan, "myapp.plan/1", fields={"value": "current_value"})
    plans = [registry.decode(data) for data in stored_values()]
    assert plans == [Plan("ship it", 3, ("build", "test")), Plan("rest", 0)]
    # and a value written today is the same bytes the old class wrote
    assert registry.encode(plans[0]) == stored_values()[0]


def test_an_upcaster_lifts_an_earlier_version_to_the_current_class() -> None:
    @attrs.frozen
    class PlanV2:
        goal: str
        current_value: int
        steps: tuple[str, ...] = ()
        owner: str = "nobody"

    def lift(fields: dict[str, Any]) -> dict[str, Any]:
        return {**fields, "owner": "legacy"}

    registry = ValueRegistry()
    registry.register(
        PlanV2, "myapp.plan/2", fields={"value": "current_value"}, upcasters={"myapp.plan/1": lift}
    )
    assert registry.decode(stored_values()[1]) == PlanV2("rest", 0, (), "legacy")
    assert registry.encode(PlanV2("x", 1))["$value"] == "myapp.plan/2"


def test_a_missing_upcaster_is_a_typed_error_naming_the_versions() -> None:
    registry = ValueRegistry()
    registry.register(Plan, "myapp.plan/3", fields={"value": "current_value"})
    with pytest.raises(UnknownValueTagError, match="from version 1 to 2"):
        registry.decode(stored_values()[0])


def test_session_custom_stores_a_registered_value_and_reading_decodes_the_current_class() -> None:
    @attrs.frozen
    class TaskState:
        task: str
        done: bool = False

    register_value(TaskState, "tests.task_state/1", fields={"state_done": "done"})
    journal = InMemoryJournal("values")
    session = Session.create(journal, journal_id="values")
    record = session.custom("tests.task", TaskState("write docs", done=True))
    assert record.body.data == {
        "$value": "tests.task_state/1",
        "fields": {"state_done": True, "task": "write docs"},
    }
    (read,) = [r for r in journal.read() if isinstance(r.body, CustomEntry)]
    assert decode_value(read.body.data) == TaskState("write docs", done=True)
    session.custom("tests.note", {"plain": "json"})  # existing calls with JSON data work as before
    assert list(journal.read())[-1].body.data == {"plain": "json"}


def test_an_unregistered_object_is_refused_before_anything_is_written() -> None:
    @attrs.frozen
    class Unknown:
        x: int

    journal = InMemoryJournal("refused")
    session = Session.create(journal, journal_id="refused")
    before = list(journal.read_lines())
    with pytest.raises(UnregisteredValueError, match="register_value") as caught:
        session.custom("tests.unknown", Unknown(1))
    assert isinstance(caught.value, InvalidRecordError)
    assert list(journal.read_lines()) == before
    assert session.head == journal.head()


def test_the_async_session_refuses_an_unregistered_object_too() -> None:
    from waybook import AsyncSession

    async def write() -> None:
        session = await AsyncSession.create(journal, journal_id="refused-async")
        with pytest.raises(UnregisteredValueError):
            await session.custom("tests.unknown", object())

    journal = InMemoryJournal("refused-async")
    asyncio.run(write())
    assert journal.head().seq == 1


def test_an_unknown_tag_is_a_typed_error_for_code_and_an_opaque_value_for_tools() -> None:
    registry = ValueRegistry()  # knows nothing
    data = stored_values()[0]
    with pytest.raises(UnknownValueTagError, match=r"myapp\.plan/1") as caught:
        registry.decode(data)
    assert isinstance(caught.value, UnknownTagError)
    assert isinstance(caught.value, UnregisteredValueError)
    assert caught.value.tag == "myapp.plan/1"
    shown = registry.read(data)
    assert shown == OpaqueValue("myapp.plan/1", {"goal": "ship it", "steps": ["build", "test"], "value": 3})


def test_a_newer_version_than_the_registered_one_is_unknown() -> None:
    registry = ValueRegistry()
    registry.register(Plan, "myapp.plan/1", fields={"value": "current_value"})
    newer = {"$value": "myapp.plan/2", "fields": {"goal": "g", "value": 1}}
    with pytest.raises(UnknownValueTagError, match=r"knows .myapp\.plan/1."):
        registry.decode(newer)
    assert isinstance(registry.read(newer), OpaqueValue)


@pytest.mark.parametrize(
    "fields",
    [
        {"goal": "g"},  # a missing field
        {"goal": "g", "value": 1, "extra": 2},  # a field this class does not know
        {"goal": "g", "value": "three"},  # a wrong type
    ],
    ids=["missing", "unknown", "wrong-type"],
)
def test_fields_that_do_not_fit_the_class_fail_closed(fields: dict[str, Any]) -> None:
    registry = ValueRegistry()
    registry.register(Plan, "myapp.plan/1", fields={"value": "current_value"})
    with pytest.raises(WrongTypeError, match="does not fit Plan"):
        registry.decode({"$value": "myapp.plan/1", "fields": fields})


@pytest.mark.parametrize(
    "data", [None, 3, {"$value": "myapp.plan/1"}, {"goal": "g"}, {"$value": 1, "fields": {}}]
)
def test_data_that_is_not_a_stored_value_is_a_typed_error(data: object) -> None:
    with pytest.raises(UnknownValueTagError, match="not a stored value"):
        ValueRegistry().decode(data)


@pytest.mark.parametrize(
    ("tag", "fields", "message"),
    [
        ("plan", None, "namespace.name/version"),
        ("myapp.plan/0", None, "namespace.name/version"),
        ("waybook.plan/1", None, "waybook's own"),
        ("myapp.plan/1", {"value": "no_such_attribute"}, "is not one"),
        ("myapp.plan/1", {"goal": "current_value"}, "given to two attributes"),
    ],
)
def test_a_registration_that_would_make_the_wire_ambiguous_is_refused(
    tag: str, fields: dict[str, str] | None, message: str
) -> None:
    with pytest.raises(InvalidRecordError, match=message):
        ValueRegistry().register(Plan, tag, fields=fields)


def test_a_tag_name_and_a_class_each_have_one_codec() -> None:
    registry = ValueRegistry()
    registry.register(Plan, "myapp.plan/1", fields={"value": "current_value"})
    registry.register(Plan, "myapp.plan/1", fields={"value": "current_value"})  # the same again: fine
    with pytest.raises(InvalidRecordError, match="already registered"):
        registry.register(PlanAsFirstWritten, "myapp.plan/2")
    with pytest.raises(InvalidRecordError, match="one class, one tag"):
        registry.register(Plan, "myapp.other/1")
    with pytest.raises(InvalidRecordError, match="attrs class"):
        registry.register(dict, "myapp.dict/1")


@given(goal=st.text(), value=st.integers(min_value=-(2**63), max_value=2**63 - 1), steps=st.lists(st.text()))
def test_every_value_round_trips_through_a_journal(goal: str, value: int, steps: list[str]) -> None:
    registry = ValueRegistry()
    registry.register(Plan, "myapp.plan/1", fields={"value": "current_value"})
    plan = Plan(goal, value, tuple(steps))
    journal = InMemoryJournal("rt")
    session = Session.create(journal, journal_id="rt")
    session.custom("myapp.plan", registry.encode(plan))
    assert registry.decode(list(journal.read())[-1].body.data) == plan


@pytest.mark.parametrize("command", ["show", "log"])
def test_the_cli_shows_a_value_whose_class_it_does_not_know(command: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "waybook.cli", command, str(PLAN_V1)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "myapp.plan/1" in run.stdout


def test_the_face_exports_the_registry_names() -> None:
    for name in ("register_value", "decode_value", "UnregisteredValueError", "read_value", "OpaqueValue"):
        assert name in waybook.codecs.__all__


def test_a_class_that_is_not_attrs_registers_with_its_own_hook_pair() -> None:
    class Money:
        def __init__(self, cents: int, currency: str) -> None:
            self.cents, self.currency = cents, currency

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Money) and (self.cents, self.currency) == (other.cents, other.currency)

        __hash__ = None  # type: ignore[assignment]

    registry = ValueRegistry()
    registry.register(
        Money,
        "shop.money/1",
        unstructure=lambda m: {"amount": m.cents, "cur": m.currency},
        structure=lambda d: Money(d["amount"], d["cur"]),
    )
    data = registry.encode(Money(250, "EUR"))
    assert data == {"$value": "shop.money/1", "fields": {"amount": 250, "cur": "EUR"}}
    assert registry.decode(data) == Money(250, "EUR")
    with pytest.raises(InvalidRecordError, match="both unstructure= and structure="):
        ValueRegistry().register(Money, "shop.money/1", unstructure=lambda m: {})
    with pytest.raises(InvalidRecordError, match="attrs class"):
        ValueRegistry().register(Money, "shop.money/1")
