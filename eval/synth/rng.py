"""Independent, reproducible random streams per scenario and stage.

`random.Random` seeded with a string hashes it with SHA-512 (not Python's salted
`hash`), so a stream named by (seed, scenario, stage) is identical on every run and
adding draws to one stage never shifts another.
"""

from __future__ import annotations

import random


def substream(seed: int, *names: object) -> random.Random:
    return random.Random("memfusebench:" + ":".join([str(seed), *map(str, names)]))
