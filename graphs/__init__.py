"""MemFuse: graphs layer — the LangGraph state machines `fusion`, `retrieval` and `answer`.
(The benchmark generator's `synthesis` graph follows the same template but lives with the
benchmark, in `eval.synth.graph`; `langgraph.json` serves it too.)

**One template.** Every graph is a package with `state.py` (input, output and state models),
`context.py` (the run's knobs, a `graphs.context.RunContext`), `nodes.py` and `graph.py`
(`builder` and the compiled `graph` that `langgraph.json` serves), plus what its job needs
(`routers.py`, the fusion agent's `tools.py`, the retrieval controller's `decisions.py` and
`planning.py`, the in-process drivers
`run.py` / `ingest.py`).

**Runs on a thread** (`graphs.state`): the first node, `begin`, starts the run from the
caller's input alone; a thread keeps only `history` (one record per finished run).

**Resources** (`graphs.resources`): settings, stores, LMs, programs and the reader come from
`resources_for(context)`, opened once per process and shared with `memfuse.api`.

**Who decides**: the context's `policy`, `auto | offline | llm` in every graph
(`graphs.context.Policy`): `llm` runs the DSPy programs (an error when no LLM is configured
or injected), `offline` the deterministic twins, `auto` the LLM when there is one.

**When the LLM fails** — one rule for every graph: a decision the LLM could not make (its
reply unusable, or its endpoint failing past the retry budget of `signatures.retry`) never
costs what the run already has, and the output says who decided and why.

- Reads (`retrieval`, `answer`): the offline twin makes that one decision instead (planner,
  judge; `decisions` records `offline fallback: <why>`), and a reader that fails or babbles
  gives no answer, the evidence and a one-line `reader_error` — never a guess.
- Writes (`fusion`): a plan is never guessed either. An unreadable plan is rejected and
  recorded (nothing else is written; `violations` says what came back); an endpoint that
  fails stops the run with the event left on the fusion queue for the next ingest.
"""
