"""The public name of MemFuse's settings (`from memfuse.settings import MemFuseSettings`);
the class lives in `memory.settings`, below every layer that reads it."""

from memory.settings import MemFuseSettings, load_settings

__all__ = ["MemFuseSettings", "load_settings"]
