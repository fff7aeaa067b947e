"""Benchmark files MemFuse reads as input: MemFuseBench JSON and LoCoMo JSON.

They live in the memory layer, not in `eval`, because `memfuse ingest` accepts them as
ordinary input: the product must read them without importing the benchmark harness. Each
reader maps its file onto one format-neutral view (`memory.formats.models`) once, so the
ingest path and the benchmark alike never look at a source format.

- `models`: the neutral view (`BenchDataset` of `BenchScenario`s of `BenchQuestion`s).
- `memfusebench` / `memfusebench_io`: the MemFuseBench schema, its validator and writer.
- `locomo`: the LoCoMo reader.
- `loader`: `benchmark_format` and `load_dataset`, the one entry point for either format.
- `sniff`: what kind of file a user handed us (events, either benchmark format, an export),
  the one rule `memfuse ingest` and the benchmark both use.
- `export`: `memfuse export`'s file, written and read back.
"""
