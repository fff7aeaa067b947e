"""A tiny hand-written benchmark (one household morning, a few questions) and a bag-of-words
embedder, for the harness tests: small enough to run every system in seconds."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

LOCOMO = Path(__file__).resolve().parents[1] / "eval" / "fixtures" / "locomo_small.json"


class BagOfWordsEmbedder:
    """Hashed bag of words: deterministic, instant, and similar texts get similar vectors."""

    model_id = "test:bow-64"
    dim = 64

    def embed(self, texts):
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                rows[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)


# fmt: off
EVENT_ROWS = [  # id, time on 2024-03-04, device, modality, location, description, characters
    ("e01", "07:00", "watch_david", "health", "bedroom",
     "David's heart rate is 62 bpm while asleep", ["David"]),
    ("e02", "07:30", "cam_kitchen", "vision", "kitchen",
     "David pours coffee and takes a blood pressure pill", ["David"]),
    ("e03", "08:15", "phone_lucy", "location", "driveway", "Lucy leaves home by car", ["Lucy"]),
    ("e04", "09:00", "thermostat", "environment", "living room",
     "Living room thermostat set to 21 C", []),
    ("e05", "12:30", "cam_kitchen", "vision", "kitchen",
     "Rex the dog limps across the kitchen holding up its front paw", ["Rex"]),
    ("e06", "12:35", "phone_lucy", "dialogue", "kitchen",
     "Lucy phones the vet to book an appointment for Rex's paw", ["Lucy", "Rex"]),
    ("e07", "14:00", "watch_david", "motion", "garden",
     "David walks in the garden for 20 minutes", ["David"]),
    ("e08", "16:00", "cam_garden", "vision", "garden",
     "Broken glass is visible near the garden fence", []),
    ("e09", "18:00", "phone_lucy", "app_usage", "living room",
     "Lucy pays 80 dollars in the vet clinic app", ["Lucy"]),
    ("e10", "19:00", "thermostat", "environment", "living room",
     "Living room temperature drops to 18 C after a window opens", []),
    ("e11", "23:00", "watch_david", "health", "bedroom",
     "David's heart rate is 58 bpm while asleep", ["David"]),
    ("e12", "13:00", "cam_garden", "vision", "garden",
     "The neighbour's cat limps along the fence", []),  # adversarial distractor for q1
]
QUESTION_ROWS = [  # id, category, question, answer, evidence, [(checklist item, evidence)]
    ("q1", "causal", "Why did Rex limp in the kitchen?",
     "He cut his paw on broken glass near the garden fence", ["e05", "e08"],
     [("Rex limped holding up a front paw", ["e05"]),
      ("There was broken glass near the garden fence", ["e08"])]),
    ("q2", "fusion", "What did Lucy do about Rex's paw?",
     "She phoned the vet and paid 80 dollars in the clinic app", ["e06", "e09"],
     [("Lucy phoned the vet", ["e06"]), ("She paid 80 dollars", ["e09"])]),
    ("q3", "user_query", "What was David's heart rate while asleep?",
     "62 bpm in the morning and 58 bpm at night", ["e01", "e11"],
     [("62 and 58 bpm", ["e01", "e11"])]),
    ("q4", "conflict", "What temperature was the living room?",
     "Set to 21 C, then it dropped to 18 C", ["e04", "e10"],
     [("Set to 21 C", ["e04"]), ("Dropped to 18 C", ["e10"]), ("Why", [])]),
]
DEVICES = [  # id, type, owner, modalities
    ("watch_david", "smartwatch", "David", "health, motion, location"),
    ("phone_lucy", "smartphone", "Lucy", "location, app_usage, dialogue"),
    ("cam_kitchen", "indoor_camera", "shared", "vision, audio"),
    ("cam_garden", "indoor_camera", "shared", "vision, audio"),
    ("thermostat", "smart_thermostat", "shared", "environment"),
]
# fmt: on


def _events() -> list[dict]:
    events = []
    for eid, hhmm, device, modality, location, text, chars in EVENT_ROWS:
        event = {
            "event_id": eid,
            "timestamp": f"2024-03-04 {hhmm}:00",
            "device": device,
            "modality": modality,
            "location": location,
            "description": text,
            "characters": chars,
        }
        if eid == "e12":
            event.update(source="adversarial", target_question="q1")
        events.append(event)
    return events


def _questions() -> list[dict]:
    return [
        {
            "question_id": qid,
            "category": category,
            "question": text,
            "answer": answer,
            "evidence_event_ids": evidence,
            "checklist": [{"item": item, "evidence_event_ids": ids} for item, ids in checklist],
            "question_user": "Lucy",
            "question_time": "2024-03-05 08:00:00",
            "question_device": "phone_lucy",
        }
        for qid, category, text, answer, evidence, checklist in QUESTION_ROWS
    ]


def write_tiny_bench(path: Path) -> Path:
    devices = [
        {"device_id": d, "device_type": t, "owner": o, "location": "home", "modality": m}
        for d, t, o, m in DEVICES
    ]
    scenario = {
        "scenario_id": "home-1",
        "persona": {"characters": [{"name": "David"}, {"name": "Lucy"}], "all_devices": devices},
        "episodes": [{"episode_id": "day-1", "events": _events()}],
        "questions": _questions(),
    }
    path.write_text(json.dumps({"version": "memfusebench-1", "scenario_data": [scenario]}))
    return path
