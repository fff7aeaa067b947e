"""Events keep their input as given, or refuse it naming the event and the field: offsets are
converted to UTC (never dropped), names and ids hold no control characters, ids are no paths,
metadata holds only numbers JSON can write back."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.errors import InvalidEventError
from memory.models import EARLIEST, LATEST, Event, as_events, parse_event, parse_timestamp
from memory.store import MemoryStore
from tests.support.embedders import HashEmbedder

BASE = {
    "event_id": "e1",
    "timestamp": "2026-05-20T10:00:00",
    "device": "cam",
    "modality": "vision",
    "description": "the cat sat on the mat",
}
NAME_FIELDS = ("event_id", "device", "location", "owner", "characters")
NAME_CONTROLS = [chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]]
TEXT_CONTROLS = [chr(c) for c in [*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]]


def refusal(**changes: object) -> InvalidEventError:
    with pytest.raises(InvalidEventError) as info:
        parse_event({**BASE, **changes}, 1)
    assert "\n" not in str(info.value)
    return info.value


# --- timestamps --------------------------------------------------------------------------


def test_offsets_are_converted_to_utc_not_dropped() -> None:
    east = parse_event({**BASE, "timestamp": "2026-05-20T10:00:00+05:00"})
    west = parse_event({**BASE, "timestamp": "2026-05-20T10:00:00-08:00"})
    assert east.timestamp == datetime(2026, 5, 20, 5, 0)
    assert west.timestamp == datetime(2026, 5, 20, 18, 0)
    assert west.timestamp - east.timestamp == timedelta(hours=13)
    assert parse_timestamp("2026-05-20T10:00:00Z") == datetime(2026, 5, 20, 10, 0)
    assert parse_timestamp("2026-05-20 10:00") == datetime(2026, 5, 20, 10, 0)  # naive: as given
    aware = datetime(2026, 5, 20, 10, tzinfo=timezone(timedelta(hours=2)))
    assert parse_timestamp(aware) == datetime(2026, 5, 20, 8, 0)


@pytest.mark.parametrize("text", ["0002-01-01T00:00:00+05:00", "9998-12-31T23:59:59-01:00"])
def test_an_offset_that_leaves_the_range_is_refused(text: str) -> None:
    assert "supported range" in refusal(timestamp=text).problem


@given(
    moment=st.datetimes(
        min_value=EARLIEST + timedelta(days=2), max_value=LATEST - timedelta(days=2)
    ),
    minutes=st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1),
)
def test_any_aware_timestamp_round_trips_to_the_same_instant(
    moment: datetime, minutes: int
) -> None:
    aware = moment.replace(tzinfo=timezone(timedelta(minutes=minutes)))
    event = parse_event({**BASE, "timestamp": aware.isoformat()})
    assert event.timestamp.tzinfo is None
    assert event.timestamp.replace(tzinfo=UTC) == aware  # the same instant
    again = parse_event(json.loads(json.dumps(event.model_dump(mode="json"))))
    assert again == event  # what an export writes reads back unchanged


# --- control characters and path-like ids -------------------------------------------------


def test_the_issue_probes_are_refused_naming_event_and_field() -> None:
    bad_id = refusal(event_id="a/../b\nc")
    assert bad_id.field == "event_id" and "a/../b\\nc" in str(bad_id)
    assert refusal(device="watch\nTom").field == "device"
    for char in ("\x00", "\x07", "\x1b", "\x7f"):
        error = refusal(description=f"before{char}after")
        assert error.field == "description" and f"U+{ord(char):04X}" in error.problem


@pytest.mark.parametrize("event_id", ["a/b", "a\\b", "..", ".", "../etc"])
def test_path_like_ids_are_refused(event_id: str) -> None:
    assert refusal(event_id=event_id).field == "event_id"


def test_descriptions_keep_tabs_and_line_breaks_and_names_keep_unicode() -> None:
    event = parse_event(
        {**BASE, "description": "line one\n\tline two\r\n", "device": "Zoë's wätch",
         "characters": ["José", "Anna"], "owner": "José", "location": "Küche"}
    )  # fmt: skip
    assert event.description == "line one\n\tline two"
    assert event.device == "Zoë's wätch" and event.characters == ("José", "Anna")


def _with_control(field: str, text: str) -> dict[str, object]:
    value: object = [text] if field == "characters" else text
    return {**BASE, field: value}


@settings(max_examples=150)
@given(
    field=st.sampled_from(NAME_FIELDS),
    control=st.sampled_from(NAME_CONTROLS),
    before=st.text(alphabet="abcXYZ_09 ", max_size=6),
    after=st.text(alphabet="abcXYZ_09 ", max_size=6),
)
def test_any_control_character_in_any_name_field_is_refused(
    field: str, control: str, before: str, after: str
) -> None:
    with pytest.raises(InvalidEventError) as info:
        parse_event(_with_control(field, f"x{before}{control}{after}"), 1)
    assert info.value.field == field and info.value.event_id is not None


@given(control=st.sampled_from(TEXT_CONTROLS), text=st.text(min_size=1, max_size=20))
def test_any_forbidden_control_in_a_description_is_refused(control: str, text: str) -> None:
    with pytest.raises(InvalidEventError) as info:
        parse_event({**BASE, "description": f"x{text}{control}{text}"}, 1)
    assert info.value.field == "description"


def test_a_batch_with_one_control_character_stores_nothing(tmp_path: Path) -> None:
    good = [{**BASE, "event_id": f"g{i}", "description": f"event {i}"} for i in range(4)]
    with MemoryStore.open(tmp_path / "data", embedder=HashEmbedder()) as store:

        @settings(max_examples=60, deadline=None)
        @given(
            field=st.sampled_from([*NAME_FIELDS, "description"]),
            control=st.sampled_from(TEXT_CONTROLS),
            position=st.integers(min_value=0, max_value=4),
        )
        def check(field: str, control: str, position: int) -> None:
            bad = {**_with_control(field, f"a{control}b"), "event_id": "bad"}
            if field == "event_id":
                bad["event_id"] = f"a{control}b"
            batch = [*good[:position], bad, *good[position:]]
            with pytest.raises(InvalidEventError) as info:
                store.add_events(as_events(batch))
            assert info.value.field == field
            assert store.stats().events == 0 and store.all_events() == []

        check()


# --- metadata ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "key"),
    [
        ({"reading": float("nan")}, "reading"),
        ({"metadata": {"reading": float("inf")}}, "reading"),
        ({"metadata": {"a": {"b": [1, float("-inf")]}}}, "a.b[1]"),
        ({"big": json.loads("1e400")}, "big"),
    ],
)
def test_non_finite_metadata_is_refused(record: dict[str, object], key: str) -> None:
    error = refusal(**record)
    assert error.field == "metadata" and repr(key) in error.problem


JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
    allow_infinity=False) | st.text(max_size=5)  # fmt: skip
FINITE_JSON = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(
    finite=st.dictionaries(st.text(min_size=1, max_size=4), FINITE_JSON, max_size=4),
    key=st.text(min_size=1, max_size=4),
    bad=st.sampled_from([float("nan"), float("inf"), float("-inf")]),
)
def test_finite_metadata_is_kept_and_any_non_finite_number_is_refused(
    finite: dict[str, object], key: str, bad: float
) -> None:
    assert parse_event({**BASE, "metadata": finite}).metadata == finite
    with pytest.raises(InvalidEventError, match="not a finite number") as info:
        parse_event({**BASE, "metadata": {**finite, key: [finite, {"x": bad}]}}, 1)
    assert info.value.field == "metadata"


def test_finite_metadata_is_kept_as_given_and_depth_is_bounded() -> None:
    kept = {"n": 1.5, "big": 1e300, "list": [1, "two", None, {"three": 3}]}
    assert parse_event({**BASE, "metadata": kept}).metadata == kept
    deep: object = 1
    for _ in range(80):
        deep = [deep]
    assert "deeper than 64" in refusal(metadata={"deep": deep}).problem
    with pytest.raises(ValueError, match="not a finite number"):
        Event(**{**BASE, "metadata": {"x": float("nan")}})  # type: ignore[arg-type]
