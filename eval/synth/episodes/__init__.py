"""Episode templates; importing this package registers all of them in `REGISTRY`."""

from eval.synth.episodes import (  # noqa: F401  (registration side effect)
    body,
    errands,
    family,
    health,
    home,
    life,
)
from eval.synth.episodes.base import REGISTRY, Ep, Template, WorldState

__all__ = ["REGISTRY", "Ep", "Template", "WorldState"]
