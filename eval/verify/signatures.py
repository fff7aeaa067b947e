"""The model-guided half of verification as DSPy signatures: readers answer every question from
the whole scenario, a judge compares each reading with the gold answer, and a corrector revises
or drops a flagged question. The paper's final pass had three frontier models read and judge
every question; here "several readers" are several reader prompts (and, optionally, models),
configured in the verification graph's context. Prompts are ours, restated from the paper.
"""

from __future__ import annotations

from typing import Literal

import dspy

from signatures.untrusted import DATA_NOTICE


class AnswerFromScenario(dspy.Signature):  # type: ignore[misc]
    """Answer a question about a household's week from the complete record of its devices.

    The record lists every observation, one a line: id, time, device, place, description.
    Answer as the person asking would want: direct, with the figures, times and names the
    record supports, and say so plainly when the record does not settle it."""

    __doc__ = (__doc__ or "") + DATA_NOTICE

    scenario: list[str] = dspy.InputField(desc="Every event of the scenario, in time order.")
    asked_by: str = dspy.InputField(desc="Who asks ('' when unknown); 'I' and 'my' are them.")
    asked_at: str = dspy.InputField(desc="When it is asked; later events are not yet known.")
    question: str = dspy.InputField()
    answer: str = dspy.OutputField(desc="The answer, in one to three sentences.")
    cited_event_ids: list[str] = dspy.OutputField(desc="The ids of the events the answer rests on.")


class CheckAnswerCarefully(AnswerFromScenario):
    """Answer a question about a household's week from the complete record of its devices,
    checking every figure against the record before stating it.

    Read the question twice: if it asks yes or no, or to compare, begin with the verdict; if it
    asks when, give the time; if it asks how many, give the number. Where two devices disagree,
    say which is better supported and why."""

    __doc__ = (__doc__ or "") + DATA_NOTICE


class JudgeAgreement(dspy.Signature):  # type: ignore[misc]
    """Decide whether a reader's answer agrees with the reference answer on what the question
    asks: the same verdict, figures, times and people. Wording, extra detail and rounding do not
    matter; a different fact, a missing key fact or a refusal is disagreement."""

    question: str = dspy.InputField()
    reference_answer: str = dspy.InputField()
    reader_answer: str = dspy.InputField()
    agrees: bool = dspy.OutputField()
    reason: str = dspy.OutputField(desc="One line: what differs, or why they agree.")


class ReviseQuestion(dspy.Signature):  # type: ignore[misc]
    """Repair one benchmark question that verification flagged, or drop it.

    You see the question, its reference answer, its cited evidence and the findings against
    it. Verify each finding against the evidence yourself: a finding may be wrong. Revise when
    a faithful question and answer can be kept with evidence the answer truly uses (keep the
    question's intent; cite only listed event ids); keep when every finding is mistaken; drop
    when no honest repair exists."""

    __doc__ = (__doc__ or "") + DATA_NOTICE

    question: str = dspy.InputField()
    answer: str = dspy.InputField(desc="The current reference answer.")
    evidence: list[str] = dspy.InputField(desc="The cited events, one a line, id first.")
    nearby: list[str] = dspy.InputField(desc="Other events of the scenario that may be used.")
    findings: list[str] = dspy.InputField(desc="Why the question was flagged, one a line.")
    action: Literal["revise", "keep", "drop"] = dspy.OutputField()
    revised_question: str = dspy.OutputField(desc="The question (unchanged when not revised).")
    revised_answer: str = dspy.OutputField(desc="The answer (unchanged when not revised).")
    revised_evidence_ids: list[str] = dspy.OutputField(desc="The ids the answer rests on.")
    reason: str = dspy.OutputField(desc="One line: what was wrong and what was done.")


READER_PROMPTS: dict[str, type[dspy.Signature]] = {
    "direct": AnswerFromScenario,
    "careful": CheckAnswerCarefully,
}


class ScenarioReader(dspy.Module):  # type: ignore[misc]
    """One reader: a prompt that answers from the whole scenario, then the judge."""

    def __init__(self, prompt: str = "direct") -> None:
        super().__init__()
        self.read = dspy.Predict(READER_PROMPTS[prompt])
        self.judge = dspy.Predict(JudgeAgreement)

    def forward(
        self, scenario: list[str], asked_by: str, asked_at: str, question: str, reference: str
    ) -> dspy.Prediction:
        reading = self.read(
            scenario=scenario, asked_by=asked_by, asked_at=asked_at, question=question
        )
        verdict = self.judge(
            question=question, reference_answer=reference, reader_answer=reading.answer
        )
        return dspy.Prediction(
            answer=reading.answer, agrees=bool(verdict.agrees), reason=str(verdict.reason)
        )


class QuestionCorrector(dspy.Module):  # type: ignore[misc]
    """The LLM corrector (its offline twin is `eval.verify.correct.offline_edit`)."""

    def __init__(self) -> None:
        super().__init__()
        self.revise = dspy.Predict(ReviseQuestion)

    def forward(self, **inputs: object) -> dspy.Prediction:
        return self.revise(**inputs)
