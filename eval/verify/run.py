"""Verify one file: drive the compiled verification graph (what `memfuse verify` calls)."""

from __future__ import annotations

from pathlib import Path

from eval.verify.graph import VerificationContext, VerificationInput, VerificationOutput, builder


def verify_file(
    path: Path, out_dir: Path, context: VerificationContext | None = None
) -> VerificationOutput:
    """Run the verification graph on `path`, writing the results under `out_dir`."""
    graph = builder.compile(name="verification")
    result = graph.invoke(
        VerificationInput(dataset=str(path), out_dir=str(out_dir)),
        context=context or VerificationContext(policy="offline"),
        config={"recursion_limit": 100},
    )
    return VerificationOutput.model_validate(result)
