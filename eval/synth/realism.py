"""How much the procedural generator may flatter a system under test (`memfuse synth --realism`).

`legacy` is the original generator (with its answer bugs fixed: an answer states only what its
evidence holds). `realistic`, the default, keeps the same household-week, the same random
streams and the same happenings, and removes four conveniences no real household's logs or
askers would offer:

1. People tags only where the device can know who it is (`eval.person_blind.knows_who`): a
   watch's wearer, a lock's user code, a camera's or display's face match, a speaker's or
   display's voice profile, a phone's, laptop's, tablet's, car's or console's signed-in user.
   Motion, contact, climate, lights, curtains, appliances, the scale and a TV's on/off state
   report no one. Only tags change; evidence ids stay.
2. Less sensor-side boilerplate (`phrasing.render(few_details=True)`): legacy writes two to
   four battery, firmware, sync, signal and log-number sentences per event, which recur across
   unrelated events and make them look alike; realistic writes one or two of them (all are
   still drawn, so every other random choice is unchanged). On seed 7's first household
   (MiniLM), events of other happenings within cosine 0.8 of an
   event (the automatic semantic-edge threshold): legacy 26.1, none written 16.8, one or two
   written 15.8, so it is the pile-up that joins unrelated events, not a detail as such; and
   one or two keep a scenario near the paper's size (about 100k tokens, legacy 122k).
3. Gold evidence limited to what the checklist uses (`questions.resolve`): causal and fusion
   questions no longer add every ambient trace (a pulse reading, a phone on Wi-Fi) of each
   happening they touch, and an item resting on a whole happening cites what its template
   named, not what a device logged in passing; evidence is the checklist's observations plus,
   for causal questions, the named observations of the causal chain. The filter counts
   evidence and devices, so it can keep other questions than legacy does (thin ones no longer
   pass on padding), and the distractors aimed at them differ; the household's own events do
   not.
4. Questions without a time phrase (`eval.synth.asking`): a question about one storyline
   happening often says no time at all, or places it by another happening ("the day after
   the washing machine failed"), instead of a phrase whose window holds all of its evidence.
"""

from __future__ import annotations

from eval.person_blind import strip_unknowing_scenario
from memory.errors import ConfigurationError
from memory.formats.memfusebench import Scenario

REALISMS: tuple[str, ...] = ("legacy", "realistic")
DEFAULT_REALISM = "realistic"


def check_realism(realism: str) -> str:
    """`realism` if it is one of `REALISMS`, else a ConfigurationError naming them."""
    if realism not in REALISMS:
        raise ConfigurationError(f"unknown realism {realism!r}: use one of {', '.join(REALISMS)}")
    return realism


def finish(scenario: Scenario, realism: str) -> Scenario:
    """The last step of a scenario: in realistic mode, strip the tags its devices cannot know."""
    if realism == "realistic":
        strip_unknowing_scenario(scenario)
    return scenario
