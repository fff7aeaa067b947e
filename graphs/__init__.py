"""MemFuse: graphs layer."""
