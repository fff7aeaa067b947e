"""The verification graph (served as `verification`): the model-guided final pass."""

from eval.verify.graph.context import VerificationContext
from eval.verify.graph.graph import builder, graph
from eval.verify.graph.state import VerificationInput, VerificationOutput

__all__ = ["VerificationContext", "VerificationInput", "VerificationOutput", "builder", "graph"]
