"""Timestamps and ids for new records: their formats, a clock that never goes back, ids unique."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest

import waybook
from waybook import InMemoryJournal, Session
from waybook.journal import _clock as clock
from waybook.journal._clock import SessionClock, new_id, utc_now
from waybook.journal._roles.session import ID_PATTERN, TIMESTAMP_PATTERN


def test_utc_now_is_rfc3339_utc_with_milliseconds_and_agrees_with_datetime() -> None:
    before = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    now = utc_now()
    after = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    assert TIMESTAMP_PATTERN.fullmatch(now)
    assert len(now) == 24
    assert before <= now <= after


def test_utc_now_formats_every_second_and_millisecond_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    for ns in (0, 999_999_999, 1_000_000_000, 1_764_581_400_123_456_789, 4_102_444_799_999_000_000):
        monkeypatch.setattr(clock, "time_ns", lambda ns=ns: ns)
        expected = datetime.fromtimestamp(ns // 1_000_000 / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
        assert utc_now() == expected[:-3] + "Z"


def test_the_package_still_exports_utc_now_and_new_id() -> None:
    assert waybook.utc_now is utc_now
    assert waybook.new_id is new_id


def test_a_session_clock_never_goes_backwards_when_the_wall_clock_is_stepped_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ticking = SessionClock()
    monkeypatch.setattr(clock, "time_ns", lambda: 1_764_581_400_500_000_000)
    late = ticking()
    monkeypatch.setattr(clock, "time_ns", lambda: 1_764_581_300_000_000_000)  # stepped back 100 s
    assert ticking() == late
    monkeypatch.setattr(clock, "time_ns", lambda: 1_764_581_400_501_000_000)
    assert ticking() > late


def test_a_session_never_stamps_a_record_before_one_it_has_read(monkeypatch: pytest.MonkeyPatch) -> None:
    journal = InMemoryJournal()
    Session.create(journal, clock=lambda: "2099-01-01T00:00:00.000Z")  # a writer whose clock runs ahead
    monkeypatch.setattr(clock, "time_ns", lambda: 1_764_581_400_500_000_000)
    later = Session(journal).user("hello")
    assert later.at == "2099-01-01T00:00:00.000Z"


def test_ids_are_16_hex_characters_and_do_not_repeat() -> None:
    ids = [new_id() for _ in range(5_000)]
    assert all(len(i) == 16 and ID_PATTERN.fullmatch(i) and int(i, 16) >= 0 for i in ids)
    assert len(set(ids)) == len(ids)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_hand_out_its_parents_ids() -> None:
    new_id()  # the pool is filled and now shared with any child forked from here
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.write(write, "".join(new_id() for _ in range(20)).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 1 << 16).decode()
    os.close(read)
    theirs = {child[i : i + 16] for i in range(0, len(child), 16)}
    ours = {new_id() for _ in range(20)}
    assert len(theirs) == 20
    assert not theirs & ours
