"""Train/dev splits by scenario: a household seen in training never scores the result.

Questions of one scenario share its people, devices and storylines, so splitting
questions at random would let an optimiser memorise a household and report it as
generalisation. Defaults: the first four scenarios train, the last two are dev (fewer
scenarios: dev keeps the last third, at least one; train the rest).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.errors import ConfigurationError

DEFAULT_TRAIN = 4
DEFAULT_DEV = 2


@dataclass(frozen=True)
class Split:
    """Scenario ids used for training and for the held-out dev scores."""

    train: tuple[str, ...]
    dev: tuple[str, ...]


def parse_ids(text: str | Sequence[str] | None) -> list[str] | None:
    """`"S1,S2"` or `["S1", "S2"]` → ids; None or empty → None (use the default)."""
    if text is None:
        return None
    parts = text.split(",") if isinstance(text, str) else list(text)
    ids = [p.strip() for p in parts if p and p.strip()]
    return ids or None


def default_split(scenario_ids: Sequence[str]) -> Split:
    """First four train, last two dev; with fewer than six, dev is the last third (≥ 1)."""
    n = len(scenario_ids)
    if n < 2:
        raise ConfigurationError(
            f"optimizing needs at least 2 scenarios (one to train, one to check), got {n}"
        )
    n_dev = DEFAULT_DEV if n >= DEFAULT_TRAIN + DEFAULT_DEV else max(1, n // 3)
    n_train = min(DEFAULT_TRAIN, n - n_dev)
    return Split(tuple(scenario_ids[:n_train]), tuple(scenario_ids[n - n_dev :]))


def split_scenarios(
    scenario_ids: Sequence[str],
    train: str | Sequence[str] | None = None,
    dev: str | Sequence[str] | None = None,
) -> Split:
    """The split asked for (ids; a side not given keeps its default, minus the other side)."""
    known = list(scenario_ids)
    chosen_train, chosen_dev = parse_ids(train), parse_ids(dev)
    for side, ids in (("train", chosen_train), ("dev", chosen_dev)):
        unknown = [i for i in ids or [] if i not in known]
        if unknown:
            raise ConfigurationError(
                f"--{side}-scenarios: unknown scenario(s) {', '.join(unknown)} "
                f"(the dataset has: {', '.join(known)})"
            )
    if chosen_train is None and chosen_dev is None:
        return default_split(known)
    default = default_split(known) if len(known) >= 2 else Split((), ())
    if chosen_train is None:
        chosen_train = [i for i in known if i not in set(chosen_dev or [])][:DEFAULT_TRAIN]
    if chosen_dev is None:
        rest = [i for i in default.dev if i not in set(chosen_train)]
        chosen_dev = rest or [i for i in known if i not in set(chosen_train)][-DEFAULT_DEV:]
    overlap = sorted(set(chosen_train) & set(chosen_dev))
    if overlap:
        raise ConfigurationError(
            f"train and dev scenarios overlap ({', '.join(overlap)}); a scenario may be in one only"
        )
    if not chosen_train or not chosen_dev:
        side = "train" if not chosen_train else "dev"
        raise ConfigurationError(f"no {side} scenarios left after the split; name them explicitly")
    return Split(tuple(dict.fromkeys(chosen_train)), tuple(dict.fromkeys(chosen_dev)))
