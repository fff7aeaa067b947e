"""Hub correction of query vectors: part of the memory's mean event vector taken out.

Every event of one memory shares a direction — a conversation's "X said:", a household's
device and room words — and the events that say least lie nearest it, so by plain cosine
they are near every question ("hubs"). Taking `penalty` times the mean event vector out of
the query ranks an event by cosine less `penalty` times its cosine to the mean: the same
shift for every query, larger for the events that say least.
"""

from __future__ import annotations

import numpy as np

from memory.store_api import MemoryStoreAPI


def hub_corrected(store: MemoryStoreAPI, vectors: np.ndarray, penalty: float) -> np.ndarray:
    """`vectors` (one query or a stack) less `penalty` × the memory's mean event vector;
    unchanged when the penalty is 0 or the memory holds no events."""
    centroid = store.event_centroid() if penalty else None
    if centroid is None:
        return vectors
    shifted: np.ndarray = vectors - np.float32(penalty) * centroid
    return shifted
