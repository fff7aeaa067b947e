"""MemFuse: signatures layer."""
