"""Shorthands the storyline templates share.

Each storyline words every view and question from one section of its table and asks its
questions about one topic and (mostly) one person. `Storyline` binds the builder, that
section, the topic and the subject once, so a view names only its event, device, modality
and wording key, and a question only its category, asker and evidence: the wording of a
`causal` question is the section's `ask_causal`, that of a perspective question its
`perspective`. `Questions` is the same with the wording slots bound too (the template's
`locals()` once its happenings are declared). Most happenings are noticed by the same
stand-ins: the smart speaker (else the display) hears the room, the display (else the
speaker) takes down what is said to it, and the indoor camera (else the display's camera)
sees the living area; `speaker`, `display` and `camera` declare those views.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from eval.synth.episodes.base import Ep, RefLike
from eval.synth.tables import Words
from eval.synth.world import StoryEvent, View


def minutes(n: int) -> timedelta:
    return timedelta(minutes=n)


def speaker(ep: Ep, ev: StoryEvent, words: Mapping[str, Any], **kw: Any) -> View | None:
    """What the smart speaker, or else the display, heard of `ev`."""
    return ep.view(ev, ep.hh.first("smart_speaker", "smart_display"), "audio", **words, **kw)


def display(ep: Ep, ev: StoryEvent, words: Mapping[str, Any], **kw: Any) -> View | None:
    """What was said to the display, or else the speaker, about `ev`."""
    return ep.view(ev, ep.hh.first("smart_display", "smart_speaker"), "dialogue", **words, **kw)


def camera(ep: Ep, ev: StoryEvent, words: Mapping[str, Any], **kw: Any) -> View | None:
    """What the indoor camera, or else the display's camera, saw of `ev`."""
    return ep.view(ev, ep.hh.first("indoor_camera", "smart_display"), "vision", **words, **kw)


class Storyline:
    """One template's builder, wording section (`say`), question topic and subject."""

    def __init__(self, ep: Ep, say: Words, topic: str, subject: str | None):
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
        """`ep.perspective` worded by `perspective`; `options` are its own (`moments`, and
        `subject` where a perspective question names someone else or no one)."""
        options.setdefault("subject", self.subject)
        words = self.say("perspective", ns)
        self.ep.perspective(events, asker, **words, topic=self.topic, **options)


class Questions:
    """A storyline's questions with their wording slots bound: `ask(category, asker, refs,
    moments)`. A perspective question names no one unless given a `subject`."""

    def __init__(
        self, ep: Ep, say: Words, slots: Mapping[str, Any], topic: str, subject: str | None
    ):
        self.story, self.slots = Storyline(ep, say, topic, subject), slots

    def __call__(
        self,
        category: str,
        asker: str,
        refs: Sequence[Sequence[RefLike]],
        moments: dict[str, datetime] | None = None,
    ) -> None:
        """Ask a `category` question whose checklist items rest on `refs`, item by item;
        `moments` are the times its texts word relative to the question (`{{when:KEY}}`)."""
        self.story.ask(category, asker, self.slots, refs=refs, moments=moments)

    def perspective(
        self,
        events: Sequence[StoryEvent],
        asker: str,
        moments: dict[str, datetime] | None = None,
        subject: str | None = None,
    ) -> None:
        """What each device made of `events` (`Ep.perspective`)."""
        self.story.perspective(events, asker, self.slots, moments=moments, subject=subject)
