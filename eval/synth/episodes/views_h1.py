"""Shorthands the body, health and errands templates share.

Each of their storylines words every view and question from one section of its table and
asks all its questions about one person. `Storyline` binds the builder, that section and
the subject once, so a view names only its event, device, modality and wording key, and a
question only its category, asker and evidence: the wording of a `causal` question is the
section's `ask_causal`, that of a perspective question its `perspective`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from eval.synth.episodes.base import Ep, RefLike
from eval.synth.tables import Words
from eval.synth.world import StoryEvent, View


def mins(n: int) -> timedelta:
    return timedelta(minutes=n)


class Storyline:
    """One template's builder, wording section (`say`), question topic and subject."""

    def __init__(self, ep: Ep, say: Words, topic: str, subject: str):
        self.ep, self.say, self.topic, self.subject = ep, say, topic, subject

    def view(
        self,
        ev: StoryEvent,
        device: str | None,
        modality: str,
        key: str,
        ns: Mapping[str, Any] | None = None,
        /,
        draw: random.Random | None = None,
        **options: Any,
    ) -> View | None:
        """`ep.view` worded by `key` filled from `ns` (drawing from `draw`); `options` are
        the view's own (`offset`, `people`, `place`, `facts`)."""
        return self.ep.view(ev, device, modality, **self.say(key, ns, draw=draw), **options)

    def ask(
        self,
        category: str,
        asker: str,
        ns: Mapping[str, Any],
        /,
        refs: Sequence[Sequence[RefLike]] | None = None,
        **options: Any,
    ) -> None:
        """`ep.ask` worded by `ask_<category>`, its checklist items resting on `refs` in order;
        `options` are the question's own (`moments`, `delay`, `checklist`, `topic`)."""
        options.setdefault("topic", self.topic)
        words = self.say(f"ask_{category}", ns, refs=refs)
        self.ep.ask(category, asker, **words, subject=self.subject, **options)

    def perspective(
        self, events: Sequence[StoryEvent], asker: str, ns: Mapping[str, Any], /, **options: Any
    ) -> None:
        """`ep.perspective` worded by `perspective`; `options` are its own (`moments`)."""
        words = self.say("perspective", ns)
        self.ep.perspective(
            events, asker, **words, topic=self.topic, subject=self.subject, **options
        )
