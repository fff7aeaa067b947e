"""MemFuse: eval layer."""
