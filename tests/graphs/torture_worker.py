"""The process the crash torture test kills: a fused ingest of a fixed stream.

Run as `python -m tests.graphs.torture_worker DATA_DIR`; prints `ready` once imports are
done and the writer lock is held (so kills land on real work), `done` when finished.
"""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from pathlib import Path

from memory.models import Event, parse_event

DEVICES = [
    ("cam_kitchen", "kitchen"),
    ("watch_ann", "wearable"),
    ("phone_ben", "mobile"),
    ("motion_hall", "hallway"),
    ("speaker_living", "living room"),
]
SCENES = [
    ("Ann spilled milk on the kitchen table", ["Ann"]),
    ("Ann says the milk spill is on the table", ["Ann"]),
    ("Ben watered the garden plants before work", ["Ben"]),
    ("Motion detected in the hallway", []),
    ("Ben asked the speaker about rain tomorrow", ["Ben"]),
    ("Ann wiped the table with a towel", ["Ann", "Ben"]),
    ("The fridge door was left open", []),
]
START = datetime(2026, 3, 2, 6, 0)


def stream(n: int = 800) -> list[Event]:
    """A deterministic household stream: repeated scenes, so packs and causal edges form."""
    events = []
    for i in range(n):
        device, location = DEVICES[i % len(DEVICES)]
        text, people = SCENES[(i * 3) % len(SCENES)]
        events.append(
            parse_event(
                {
                    "event_id": f"t{i:04d}",
                    "timestamp": (START + timedelta(minutes=3 * i)).isoformat(),
                    "device": device,
                    "modality": "vision",
                    "location": location,
                    "description": f"{text} ({i % 11})",
                    "characters": people,
                }
            )
        )
    return events


def run(data_dir: Path) -> None:
    from graphs.fusion.context import FusionContext
    from graphs.fusion.ingest import ingest_events
    from memory.backends import backend_for
    from memory.store import MemoryStore
    from tests.support.embedders import tiny_embedder

    with backend_for(None, data_dir).writer_lock("default", wait_seconds=30):
        store = MemoryStore.open(data_dir, embedder=tiny_embedder())
        print("ready", flush=True)
        ingest_events(
            store, stream(), config=FusionContext(policy="offline"), progress=False, chunk_size=32
        )
        store.close()
    print("done", flush=True)


if __name__ == "__main__":
    run(Path(sys.argv[1]))
