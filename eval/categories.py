"""MemFuseBench's question categories: the benchmark's list, not the file format's.

The format (`memory.formats.memfusebench`) reads any category name, since `memfuse ingest`
reads only a file's events; which categories a benchmark asks, generates, balances and
reports is the benchmark's business, so a new category is added here and in the generator
(`eval.synth`), and `memfuse check-dataset` flags a question whose category is not listed.
"""

from __future__ import annotations

from typing import Literal, get_args

Category = Literal["causal", "fusion", "user_aggregation", "user_query", "conflict", "perspective"]
CATEGORIES: tuple[str, ...] = get_args(Category)
