"""Encoding fails closed at every depth (issue 41): a body field holds plain JSON data or registered
values, nothing else, however deep; NaN and infinities are refused; the path to the offence is named;
nothing is written; and the codec library's own errors never reach the caller."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import fractions
import hashlib
import math
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import attrs
import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from waybook import AsyncSession, InMemoryJournal, Session
from waybook.codecs import (
    NotJsonDataError,
    UnregisteredValueError,
    ValueRegistry,
    decode_value,
    register_value,
)
from waybook.journal import SessionJournal
from waybook.model import GENESIS, InvalidRecordError, NewRecord, TextBlock
from waybook.testing._records import AT, FREE_FIELDS, header, user


@attrs.frozen
class Step:
    name: str


@attrs.frozen
class PlanWithSteps:
    goal: str
    steps: list[Step] = attrs.field(factory=list)


@attrs.frozen
class RegisteredStep:
    name: str


@attrs.frozen
class PlanWithRegisteredSteps:
    goal: str
    steps: list[RegisteredStep] = attrs.field(factory=list)


@attrs.frozen
class Holder:
    """An attribute typed `object`: today `register_value` raised cattrs' own error for it."""

    anything: object
    note: Any = None


class Stamp(datetime.datetime):
    """A datetime the application gives a codec (a subclass, so no other test sees a datetime codec)."""


register_value(PlanWithSteps, "failclosed.plan/1")
register_value(PlanWithRegisteredSteps, "failclosed.plan_registered/1")
register_value(RegisteredStep, "failclosed.step/1", fields={"title": "name"})
register_value(
    Stamp,
    "failclosed.stamp/1",
    unstructure=lambda when: {"iso": when.isoformat()},
    structure=lambda fields: Stamp.fromisoformat(fields["iso"]),
)


def session_at_a_node() -> Session:
    session = Session.create(InMemoryJournal("fail-closed"), journal_id="fail-closed")
    session.user("hello")
    return session


def refused(journal: SessionJournal, action: Callable[[], object]) -> NotJsonDataError:
    """Run `action`, which must be refused with a NotJsonDataError that wrote nothing."""
    before = list(journal.read_lines())
    head = journal.head()
    with pytest.raises(NotJsonDataError) as caught:
        action()
    assert list(journal.read_lines()) == before
    assert journal.head() == head
    assert isinstance(caught.value, InvalidRecordError)
    return caught.value


# --- the findings ---------------------------------------------------------------------------------


def test_an_unregistered_class_inside_custom_data_is_refused_naming_its_path() -> None:
    session = session_at_a_node()
    error = refused(session.journal, lambda: session.custom("tests.plan", {"steps": [Step("x")]}))
    assert isinstance(error, UnregisteredValueError)
    assert error.path == "data.steps[0]"
    assert "data.steps[0] is a Step" in str(error)
    assert "fail-closed" in str(error), "the message names the journal"
    assert "register_value(Step" in str(error)
    refused(session.journal, lambda: session.custom("tests.plan", [Step("x")]))


def test_a_registered_value_holding_an_unregistered_class_is_refused_not_reflected() -> None:
    session = session_at_a_node()
    error = refused(session.journal, lambda: session.custom("tests.plan", PlanWithSteps("g", [Step("x")])))
    assert isinstance(error, UnregisteredValueError)
    assert error.path == "data"
    assert "steps[0]" in str(error)
    assert "register it too" in str(error)
    with pytest.raises(UnregisteredValueError, match=r"steps\[0\]") as caught:
        waybook_encode(PlanWithSteps("g", [Step("x")]))
    assert caught.value.path == "steps[0]"


def waybook_encode(value: object) -> object:
    from waybook.codecs import encode_value

    return encode_value(value)


def test_a_registered_value_nests_registered_classes_by_their_own_wire_names() -> None:
    session = session_at_a_node()
    plan = PlanWithRegisteredSteps("g", [RegisteredStep("a")])
    record = session.custom("tests.plan", plan)
    assert record.body.data == {
        "$value": "failclosed.plan_registered/1",
        "fields": {"goal": "g", "steps": [{"title": "a"}]},
    }
    assert decode_value(record.body.data) == plan


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("field", sorted(FREE_FIELDS))
def test_nan_and_infinities_are_refused_in_every_free_field(field: str, value: float) -> None:
    build, path = FREE_FIELDS[field]
    journal = InMemoryJournal("fail-closed")
    if field != "header metadata":
        journal.append([header(), user("u1", None)], expected=GENESIS)
    body = build(value, "u1")
    new = NewRecord(id="x", at=AT, body=body)
    error = refused(journal, lambda: journal.append([new], expected=journal.head()))
    assert error.path == path
    assert "NaN or infinity" in str(error)


NOT_JSON: dict[str, object] = {
    "datetime": datetime.datetime(2026, 12, 1, 9, 0, tzinfo=datetime.UTC),
    "date": datetime.date(2026, 12, 1),
    "uuid": uuid.UUID(int=7),
    "decimal": decimal.Decimal("1.5"),
    "set": {1, 2},
    "frozenset": frozenset(),
    "bytes": b"\x00",
    "attrs instance": Step("x"),
    "dataclass": dataclasses.make_dataclass("Point", ["x"])(1),
    "msgspec struct": TextBlock(text="x"),
    "plain enum": enum.Enum("Color", "RED").RED,
    "object": object(),
    "complex": 1j,
    "fraction": fractions.Fraction(1, 3),
}


@pytest.mark.parametrize("kind", sorted(NOT_JSON))
@pytest.mark.parametrize("field", sorted(FREE_FIELDS))
def test_an_object_that_is_not_json_data_is_refused_in_every_free_field(field: str, kind: str) -> None:
    build, path = FREE_FIELDS[field]
    journal = InMemoryJournal("fail-closed")
    if field != "header metadata":
        journal.append([header(), user("u1", None)], expected=GENESIS)
    body = build(NOT_JSON[kind], "u1")
    new = NewRecord(id="x", at=AT, body=body)
    error = refused(journal, lambda: journal.append([new], expected=journal.head()))
    assert isinstance(error, UnregisteredValueError)
    assert error.path == path


def test_a_dict_key_that_is_not_a_string_is_refused() -> None:
    session = session_at_a_node()
    error = refused(session.journal, lambda: session.custom("tests.note", {"ok": {1: "one"}}))
    assert error.path == "data.ok"
    assert "key 1" in str(error)


def test_the_session_refuses_nan_and_datetimes_in_its_own_fields() -> None:
    session = session_at_a_node()
    journal = session.journal
    when = datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC)
    refused(journal, lambda: session.tool_result("c1", "out", details={"score": math.nan}))
    refused(journal, lambda: session.custom("tests.note", {"when": when}))
    fresh = InMemoryJournal("meta")
    error = refused(fresh, lambda: Session.create(fresh, metadata={"created": when}))
    assert error.path == "metadata.created"


def test_the_async_session_refuses_nested_objects_too() -> None:
    import asyncio

    journal = InMemoryJournal("fail-closed-async")

    async def write() -> None:
        session = await AsyncSession.create(journal, journal_id="fail-closed-async")
        await session.user("hi")
        with pytest.raises(UnregisteredValueError, match=r"data\.steps\[0\]"):
            await session.custom("tests.plan", {"steps": [Step("x")]})

    asyncio.run(write())
    assert journal.head().seq == 2


def test_a_registered_codec_carries_a_datetime_and_an_unregistered_one_is_refused() -> None:
    session = session_at_a_node()
    when = Stamp(2026, 12, 1, 9, 30)
    record = session.custom("tests.note", {"when": when, "steps": [RegisteredStep("a")]})
    assert record.body.data == {
        "when": {"$value": "failclosed.stamp/1", "fields": {"iso": "2026-12-01T09:30:00"}},
        "steps": [{"$value": "failclosed.step/1", "fields": {"title": "a"}}],
    }
    assert decode_value(record.body.data["when"]) == when
    refused(session.journal, lambda: session.custom("tests.note", {"when": datetime.datetime(2026, 1, 1)}))


def test_an_object_attribute_registers_and_round_trips_json_and_registered_values() -> None:
    register_value(Holder, "failclosed.holder/1")  # today: cattrs' StructureHandlerNotFoundError
    session = session_at_a_node()
    holder = Holder({"a": [1, "two", None]}, note=RegisteredStep("inner"))
    record = session.custom("tests.holder", holder)
    assert record.body.data["fields"]["note"] == {"$value": "failclosed.step/1", "fields": {"title": "inner"}}
    assert decode_value(record.body.data) == holder
    error = refused(session.journal, lambda: session.custom("tests.holder", Holder(math.nan)))
    assert error.path == "data.fields.anything"
    refused(session.journal, lambda: session.custom("tests.holder", Holder([Step("x")])))


def test_a_field_type_no_codec_maps_is_a_waybook_error_at_registration() -> None:
    @attrs.frozen
    class Meeting:
        at: datetime.datetime

    with pytest.raises(InvalidRecordError, match=r"'at' has type datetime") as caught:
        ValueRegistry().register(Meeting, "tests.meeting/1")
    assert "register a codec for that type first" in str(caught.value)


def test_a_codec_that_fails_is_a_waybook_error() -> None:
    registry = ValueRegistry()

    class Broken:
        pass

    registry.register(
        Broken, "tests.broken/1", unstructure=lambda _v: {}["missing"], structure=lambda _d: Broken()
    )
    with pytest.raises(InvalidRecordError, match="could not encode"):
        registry.encode(Broken())


# --- what still passes ----------------------------------------------------------------------------


class Level(enum.IntEnum):
    LOW = 1


class Mode(enum.StrEnum):
    FAST = "fast"


def test_plain_data_of_every_json_type_is_stored_and_tuples_read_as_lists() -> None:
    session = session_at_a_node()
    data = {
        "none": None,
        "bool": True,
        "int": -(2**63),
        "big": 2**64 - 1,
        "float": -0.0,
        "str": "é",
        "tuple": (1, (2,)),
        "dict": collections.OrderedDict(a=1),
        "int enum": Level.LOW,
        "str enum": Mode.FAST,
        "nested": [[[{}]]],
    }
    record = session.custom("tests.note", data)
    assert record.body.data["tuple"] == [1, [2]]
    assert record.body.data["int enum"] == 1
    assert record.body.data["str enum"] == "fast"
    assert list(session.journal.read())[-1].body == record.body


# --- arbitrary objects at every body field --------------------------------------------------------


def made_class(name: str, kind: str) -> type:
    if kind == "attrs":
        return attrs.make_class(name, ["x"], frozen=True)
    if kind == "dataclass":
        return dataclasses.make_dataclass(name, ["x"])
    if kind == "namedtuple":
        return NamedTuple(name, [("x", int)])  # type: ignore[return-value]  # a tuple: stored as an array
    return type(name, (), {"__init__": lambda self, x: setattr(self, "x", x)})


classes = st.builds(
    made_class,
    st.from_regex(r"[A-Z][a-z]{1,8}", fullmatch=True),
    st.sampled_from(["attrs", "dataclass", "namedtuple", "plain"]),
)
scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(max_size=8)
odd = st.one_of(
    st.datetimes(),
    st.dates(),
    st.times(),
    st.timedeltas(),
    st.uuids(),
    st.decimals(allow_nan=True),
    st.fractions(),
    st.complex_numbers(),
    st.binary(max_size=4),
    st.sets(st.integers(), max_size=2),
    st.frozensets(st.text(max_size=2), max_size=2),
    st.builds(object),
    st.builds(TextBlock, text=st.text(max_size=4)),
    st.sampled_from([Level.LOW, Mode.FAST, enum.Enum("Color", "RED").RED]),
    st.tuples(classes, st.integers()).map(lambda c: c[0](c[1])),
    st.from_type(type).flatmap(st.from_type).filter(lambda v: not isinstance(v, type)),
)
values = st.recursive(
    scalars | odd,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3)
        | st.dictionaries(st.integers() | st.text(max_size=2), inner, max_size=2)
    ),
    max_leaves=8,
)


def is_plain(value: object) -> bool:
    """The oracle, written from the rule: JSON data is None, bool, int, str, a finite float, a list or
    tuple of JSON data, a dict of str keys to JSON data."""
    if value is None or isinstance(value, str | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(is_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and is_plain(item) for key, item in value.items())
    return False


def as_json(value: object) -> object:
    if isinstance(value, list | tuple):
        return [as_json(item) for item in value]
    if isinstance(value, dict):
        return {key: as_json(item) for key, item in value.items()}
    return value


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(sorted(FREE_FIELDS)), value=values)
@example(field="custom data", value=[Step("x")])
@example(field="tool call arguments", value={"steps": [math.nan]})
@example(field="header metadata", value=datetime.datetime(2026, 1, 1))
@example(field="user details", value={"s": {1, 2}})
def test_arbitrary_python_objects_in_any_body_field_are_stored_only_if_json_data(
    field: str, value: object
) -> None:
    build, _path = FREE_FIELDS[field]
    journal = InMemoryJournal("arbitrary")
    if field != "header metadata":
        journal.append([header(), user("u1", None)], expected=GENESIS)
    before = list(journal.read_lines())
    head = journal.head()
    body = build(value, "u1")
    if not is_plain(value):
        with pytest.raises(NotJsonDataError):
            journal.append([NewRecord(id="x", at=AT, body=body)], expected=head)
        assert list(journal.read_lines()) == before
        assert journal.head() == head
        return
    (record,) = journal.append([NewRecord(id="x", at=AT, body=body)], expected=head).records
    assert list(journal.read())[-1] == record
    stored = build(as_json(value), "u1")
    assert record.body == msgspec.json.decode(msgspec.json.encode(stored), type=type(stored))


def test_a_refused_custom_entry_whose_content_goes_to_the_blobs_stores_no_blob(tmp_path: Path) -> None:
    from waybook.stores import open_store

    with open_store(f"file:{tmp_path}/store") as store:
        session = Session.create(
            store.create("s", header=False), journal_id="s", blobs=store.blobs, inline_limit=64
        )
        session.user("hello")
        before = list(session.journal.read_lines())
        big = "x" * 1000  # over the inline limit: it would go to the blobs first
        with pytest.raises(UnregisteredValueError, match=r"data\.steps\[0\]"):
            session.custom("tests.note", {"steps": [Step("x")]}, content=big)
        assert list(session.journal.read_lines()) == before
        assert not store.blobs.exists(hashlib.sha256(big.encode()).hexdigest())
