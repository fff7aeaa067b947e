"""DSPy signatures for every decision MemFuse makes, each paired with a deterministic offline
twin."""
