"""The LoCoMo loader against the hand-written fixture (values checked by hand)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

import pytest

from memory.errors import InputFormatError
from memory.formats.loader import load_dataset
from memory.formats.locomo import parse_session_time, split_evidence
from memory.models import Modality

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_small.json"


@pytest.fixture(scope="module")
def dataset():
    return load_dataset(FIXTURE)


def test_detects_locomo_and_hashes_the_bytes(dataset):
    assert dataset.format == "locomo"
    assert dataset.name == "locomo_small"
    assert dataset.content_hash == hashlib.sha256(FIXTURE.read_bytes()).hexdigest()
    assert [s.scenario_id for s in dataset.scenarios] == ["conv-26", "conv-30"]
    assert dataset.n_events() == 48  # 2 samples x 3 sessions x 8 turns
    assert dataset.apart_categories == ["adversarial"]


def test_turns_become_chat_events_with_verbatim_ids_and_spaced_times(dataset):
    events = dataset.scenarios[0].events
    first, second = events[0], events[1]
    assert first.event_id == "conv-26_D1:1"
    assert first.timestamp == datetime(2023, 5, 8, 13, 56, 0)
    assert second.timestamp == datetime(2023, 5, 8, 13, 56, 30)  # +30 s per turn
    assert first.device == "chat_caroline" and second.device == "chat_melanie"
    assert first.modality == Modality.DIALOGUE and first.location == "chat"
    assert first.characters == ("Caroline",)
    assert first.description == "Caroline said: Hey Mel! Good to see you. How have you been?"
    session3 = [e for e in events if e.event_id.startswith("conv-26_D3:")]
    assert session3[0].timestamp == datetime(2023, 6, 9, 19, 55, 0)
    assert session3[-1].timestamp == datetime(2023, 6, 9, 19, 58, 30)


def test_photo_caption_is_appended(dataset):
    photo = next(e for e in dataset.scenarios[0].events if e.event_id == "conv-26_D2:7")
    assert photo.description == (
        "Melanie said: Here is the pottery bowl my kids and I made at the workshop. "
        "[shared a photo: a photo of a handmade clay bowl with blue glaze]"
    )
    assert photo.timestamp == datetime(2023, 5, 25, 13, 17, 0)  # 13:14 + 6 x 30 s


def test_questions_categories_answers_and_time(dataset):
    conv26 = dataset.scenarios[0].questions
    assert [q.category for q in conv26] == [
        "temporal",
        "single_hop",
        "multi_hop",
        "open_domain",
        "adversarial",
        "single_hop",
    ]
    assert conv26[0].question_id == "conv-26_q1"
    assert conv26[4].answer == "Not mentioned in the conversation"  # adversarial_answer
    assert conv26[5].answer == "4"  # int answer in the file
    assert all(q.time == datetime(2023, 6, 9, 19, 59, 30) for q in conv26)  # last turn + 1 min
    assert all(q.user is None and q.checklist is None for q in conv26)
    conv30 = dataset.scenarios[1].questions
    assert conv30[0].time == datetime(2023, 2, 1, 0, 52, 30)  # "12:48 am" session + 7 turns + 1 min


def test_evidence_quirks(dataset):
    conv26 = {q.question_id: q for q in dataset.scenarios[0].questions}
    conv30 = {q.question_id: q for q in dataset.scenarios[1].questions}
    # "D2:7; D9:17"-style string holding two ids
    assert conv26["conv-26_q3"].evidence_ids == ["conv-26_D2:7", "conv-26_D3:4"]
    # dangling D3:20 dropped, D3:7 kept
    assert conv26["conv-26_q6"].evidence_ids == ["conv-26_D3:7"]
    # zero-padded D2:01 resolves to the turn D2:1
    assert conv30["conv-30_q2"].evidence_ids == ["conv-30_D2:1"]
    assert dataset.notes == [
        "LoCoMo: dropped 1 evidence reference(s) to non-existent dialogue turns"
    ]


def test_helpers():
    assert parse_session_time("12:48 am on 1 February, 2023") == datetime(2023, 2, 1, 0, 48)
    assert split_evidence("D8:6; D9:17") == ["D8:6", "D9:17"]
    assert split_evidence("D1:3,D1:4") == ["D1:3", "D1:4"]
    with pytest.raises(InputFormatError, match="unparseable session date"):
        parse_session_time("yesterday")


def test_bad_inputs_are_one_line_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"foo": 1}))
    with pytest.raises(InputFormatError, match="cannot detect the benchmark format"):
        load_dataset(bad)
    raw = json.loads(FIXTURE.read_text())
    raw[0]["qa"][0]["category"] = 9
    bad.write_text(json.dumps(raw))
    with pytest.raises(InputFormatError, match="unknown category 9"):
        load_dataset(bad, format="locomo")
    bad.write_text("{not json")
    with pytest.raises(InputFormatError, match="invalid JSON"):
        load_dataset(bad)
    with pytest.raises(InputFormatError, match="cannot read dataset"):
        load_dataset(tmp_path / "missing.json")
