"""The answer graph's own nodes: `begin` (the template's first node) and the reader.

With no LLM configured the graph still runs and returns the retrieved evidence with a note
instead of an answer, so it is usable offline. A reader that fails (its endpoint down past
the retry budget) or replies with nothing usable gets the same treatment: no answer, the
evidence, and a one-line `reader_error` saying why, so a guess is never passed off as an
answer and the retrieval work is never thrown away (the rule of every graph:
`graphs/__init__.py`).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graphs.answer.context import AnswerContext
from graphs.answer.state import AnswerState
from graphs.context import run_context
from graphs.resources import resources_for
from graphs.retrieval.state import Decision, PastQuestion
from graphs.state import fresh_run, node
from signatures.lm import DECIDED_BY_LLM, DECIDED_OFFLINE, describe_failure, offline_fallback
from signatures.retry import one_line

NO_LLM_NOTE = "no LLM configured: showing retrieved evidence only"
READER_STEP = "reader"
# The reader prompt's context-block markers (graphs/prompts/reader_user.md): a reply holding
# them is repeating the prompt, not answering.
PROMPT_MARKERS = ("<<<EVENTS", "EVENTS>>>")


def context_of(runtime: Runtime[AnswerContext] | None) -> AnswerContext:
    return run_context(runtime, AnswerContext)


def answer_problem(answer: object) -> str | None:
    """Why a reader reply is not an answer (None when it is one): nothing, no words, or the
    prompt echoed back. Deliberately narrow: only replies no reader should ever give."""
    if not isinstance(answer, str):
        return f"the reader returned {type(answer).__name__}, not text"
    text = answer.strip()
    if not text:
        return "the reader returned an empty answer"
    if not any(ch.isalnum() for ch in text):
        return f"the reader's reply has no words: {one_line(text, 40)!r}"
    if any(marker in text for marker in PROMPT_MARKERS):
        return "the reader's reply echoes the prompt's context block"
    return None


def _no_answer(reason: str) -> dict[str, Any]:
    """The evidence-only outcome of a configured reader that gave nothing usable."""
    why = reason.removeprefix(f"{READER_STEP}: ")
    return {
        "answer": None,
        "note": f"reader failed: {why}; showing retrieved evidence only",
        "reader_error": why,
        "decision": Decision(
            step=READER_STEP, decided_by=offline_fallback(f"reader failed: {why}")
        ),
    }


@node
def begin(state: AnswerState, runtime: Runtime[AnswerContext]) -> dict[str, Any]:
    """Clear what an earlier run on the thread left and pass this run's input on, one step,
    to the retrieval subgraph (which reads and checks it)."""
    forwarded = {
        "question": state.question,
        "question_time": state.question_time,
        "requester": state.requester,
        "admin": state.admin,
        "k": state.k,
    }
    return {**fresh_run(AnswerState), **forwarded}


def _reading(state: AnswerState, context: AnswerContext) -> dict[str, Any]:
    resources = resources_for(context)
    if resources.store is None:
        return {
            "answer": None,
            "note": "no memory to answer from: " + "; ".join(resources.notes),
            "decision": Decision(step=READER_STEP, decided_by=DECIDED_OFFLINE),
        }
    reader = resources.reader()
    if reader is None:
        return {
            "answer": None,
            "note": NO_LLM_NOTE,
            "decision": Decision(step=READER_STEP, decided_by=DECIDED_OFFLINE),
        }
    request = state.request
    try:
        answer = reader(
            [entry.text for entry in state.context],
            question=request.question if request else "",
            questioner=request.requester if request else None,
            question_time=request.question_time if request else None,
            settings=resources.settings,
            full_context=False,
        )
    except Exception as exc:  # noqa: BLE001 — endpoint down, refused request, a broken reader
        return _no_answer(describe_failure(exc))
    problem = answer_problem(answer)
    if problem is not None:
        return _no_answer(problem)
    return {
        "answer": answer.strip(),
        "note": "",
        "reader_error": None,
        "decision": Decision(step=READER_STEP, decided_by=DECIDED_BY_LLM),
    }


@node
def read(state: AnswerState, runtime: Runtime[AnswerContext]) -> dict[str, Any]:
    """Answer from the retrieved context with the injected reader, or the configured LLM; a
    failed or empty reply leaves the evidence with a reason, never a traceback or a guess."""
    outcome = _reading(state, context_of(runtime))
    decision = outcome.pop("decision")
    past = (
        [
            PastQuestion(
                question=state.request.question,
                question_time=state.request.question_time,
                requester=state.request.requester,
                event_ids=state.event_ids,
                answer=outcome["answer"],
            )
        ]
        if state.request is not None
        else []
    )
    return {
        "reader_error": None,
        **outcome,
        "decisions": [*state.decisions, decision],
        "history": past,
    }
