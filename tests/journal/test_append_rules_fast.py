"""The append's fast rule tests (issue 29) give the same answers as the full ones: an id made of
letters and digits alone is accepted without the regex, and a timestamp in the second last accepted
without the regex and the date arithmetic; everything else goes the full way."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from waybook.journal._roles.session import ID_PATTERN, is_recent_timestamp, is_timestamp, is_valid_id

digits = st.integers(0, 99)
stamps = st.builds(
    lambda y, mo, d, h, mi, s, ms, tail: f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{ms}{tail}",
    st.integers(1999, 2101),
    st.integers(0, 13),
    st.integers(0, 32),
    st.integers(0, 24),
    st.integers(0, 60),
    st.integers(0, 61),
    st.sampled_from(["", ".1", ".12", ".123", ".1234", ".12a", ".\u0661\u0662\u0663", "."]),
    st.sampled_from(["Z", "z", "", "Z\n", "+00:00"]),
)
timestamp_like = stamps | st.text(max_size=30) | st.just("-" * 25) | st.just("-" * 20 + "123Z")


@given(st.lists(timestamp_like, min_size=1, max_size=20))
def test_the_recent_timestamp_test_answers_as_the_full_one_whatever_came_before(values: list[str]) -> None:
    for value in values:  # each answer may change the second the fast test remembers
        assert is_recent_timestamp(value) == is_timestamp(value), value


@given(st.text(max_size=140) | st.text(alphabet="abcXYZ019_.:-\u00b2\u0663", max_size=130))
def test_the_id_test_answers_as_the_pattern(value: str) -> None:
    assert is_valid_id(value) == (ID_PATTERN.fullmatch(value) is not None)


def test_a_timestamp_in_the_remembered_second_needs_three_ascii_digits_and_z() -> None:
    assert is_recent_timestamp("2026-12-01T09:30:00.123Z")
    assert is_recent_timestamp("2026-12-01T09:30:00.999Z")
    assert not is_recent_timestamp("2026-12-01T09:30:00.12xZ")
    assert not is_recent_timestamp("2026-12-01T09:30:00.\u0661\u0662\u0663Z")
    assert not is_recent_timestamp("2026-12-01T09:30:00.123Z\n")
    assert not is_recent_timestamp("2026-02-30T09:30:00.123Z")  # a day February never has
