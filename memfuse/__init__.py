"""MemFuse: memfuse layer."""
