"""The memory layer: data model, stores, indexes and the retrieval engine.

Everything here is deterministic and never calls an LLM; the layers above
(`signatures`, `graphs`, `memfuse`) make decisions and act on it.
"""
