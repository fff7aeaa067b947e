"""Model-guided verification of a finished MemFuseBench (or LoCoMo) file: `memfuse verify`.

The paper's final pass: readers answer every question with the whole scenario as context,
disagreements flag it, a corrector revises or drops it, and a report lists what happened.
Here the deterministic verifiers (`verifiers`: a–g of issue 26) always run, the LLM readers and
corrector (`signatures`) when an LLM is configured; `graph` is the LangGraph state machine and
`run.verify_file` drives it.
"""
