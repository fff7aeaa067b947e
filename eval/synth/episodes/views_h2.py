"""Shorthands the family, home and life storylines share.

Most of their happenings are noticed by the same stand-ins: the smart speaker (else the
display) hears the room, the display (else the speaker) takes down what is said to it, and
the indoor camera (else the display's camera) sees the living area; `speaker`, `display`
and `camera` declare those views from a wording entry (`clauses`, `gist`, `anchors`).
`Questions` asks a storyline's questions, which share its topic, subject and wording slots.
"""

from __future__ import annotations

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


class Questions:
    """The questions of one storyline, all on `topic` and (but for perspective questions,
    which may name no one) about `subject`. A category's wording is `ask_<category>` of the
    storyline's table (`perspective` for the perspective question), filled from `slots`:
    the storyline's `locals()` once all its happenings are declared."""

    def __init__(
        self, ep: Ep, say: Words, slots: Mapping[str, Any], topic: str, subject: str | None
    ):
        self.ep, self.say, self.slots = ep, say, slots
        self.topic, self.subject = topic, subject

    def __call__(
        self,
        category: str,
        asker: str,
        refs: Sequence[Sequence[RefLike]],
        moments: dict[str, datetime] | None = None,
    ) -> None:
        """Ask a `category` question whose checklist items rest on `refs`, item by item;
        `moments` are the times its texts word relative to the question (`{{when:KEY}}`)."""
        words = self.say(f"ask_{category}", self.slots, refs=refs)
        self.ep.ask(
            category, asker, **words, topic=self.topic, subject=self.subject, moments=moments
        )

    def perspective(
        self,
        events: Sequence[StoryEvent],
        asker: str,
        moments: dict[str, datetime] | None = None,
        subject: str | None = None,
    ) -> None:
        """What each device made of `events` (`Ep.perspective`); `subject` may stay unset."""
        words = self.say("perspective", self.slots)
        self.ep.perspective(
            events, asker, **words, topic=self.topic, subject=subject, moments=moments
        )
