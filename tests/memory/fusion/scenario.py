"""A tiny hand-made household scenario shared by the fusion tests (unit and graph level).

Vectors come from `KeywordEmbedder(VOCAB)`: cosine = |A∩B| / sqrt(|A|·|B|) over the vocabulary
words two index texts contain. An event's index text is its description plus
`[device @ location] (people)`, so device, place and people words count too.
"""

from __future__ import annotations

from typing import Any

from memory.models import Event, parse_event

from .fake_store import FakeStore, KeywordEmbedder

VOCAB = [
    "milk",
    "cereal",
    "spill",
    "table",
    "towel",
    "garden",
    "water",
    "plant",
    "knee",
    "limp",
    "stairs",
    "fall",
    "cry",
    "run",
    "battery",
]


def make_event(
    event_id: str,
    time: str,
    device: str,
    description: str,
    people: list[str],
    location: str = "kitchen",
    modality: str = "vision",
    **extra: Any,
) -> Event:
    record = {
        "event_id": event_id,
        "timestamp": f"2024-05-01T{time}:00",
        "device": device,
        "modality": modality,
        "location": location,
        "description": description,
        "characters": people,
        **extra,
    }
    return parse_event(record)


def fake_store() -> FakeStore:
    return FakeStore(KeywordEmbedder(VOCAB))


E1 = make_event("e1", "08:00", "cam_kitchen", "David spilled milk on the table", ["David"])
E2 = make_event(
    "e2",
    "08:01",
    "watch_david",
    "David says the milk spill is on the table",
    ["David"],
    modality="audio",
)
E3 = make_event(
    "e3", "08:30", "phone_emma", "Emma watered the garden plants", ["Emma"], location="garden"
)
E4 = make_event(
    "e4", "09:00", "cam_kitchen", "Emma wiped the table with a towel", ["Emma", "David"]
)
E5 = make_event(
    "e5",
    "09:02",
    "speaker_hall",
    "Emma asks David to bring a towel for the table",
    ["Emma", "David"],
    location="hall",
    modality="audio",
)
E6 = make_event("e6", "07:00", "fridge_cam", "Milk spill and a towel on the table", ["David"])
E7 = make_event(
    "e7", "10:00", "hall_cam", "Milk spill and a towel on the table", ["David"], location="hall"
)
