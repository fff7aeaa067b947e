"""The fusion (ingest) graph: each incoming event is stored, fused by an agent, validated and
committed to the dual-layer graph. `graph` is the compiled graph; `ingest_events` drives it."""

from graphs.fusion.context import FusionContext
from graphs.fusion.graph import builder, graph
from graphs.fusion.ingest import IngestReport, ingest_events

__all__ = ["FusionContext", "IngestReport", "builder", "graph", "ingest_events"]
