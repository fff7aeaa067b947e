"""How much the procedural generator may flatter a system under test (`memfuse synth --realism`).

`legacy` is the original generator, byte for byte. `realistic` keeps the same household-week,
the same random streams and the same happenings, and removes three conveniences no real
household's logs would offer:

1. People tags only where the device can know who it is (`eval.person_blind.knows_who`): a
   watch's wearer, a lock's user code, a camera's or display's face match, a speaker's or
   display's voice profile, a phone's, laptop's, tablet's, car's or console's signed-in user.
   Motion, contact, climate, lights, curtains, appliances, the scale and a TV's on/off state
   report no one. Only tags change; evidence ids stay.
2. No sensor-side boilerplate (`phrasing.render(sensor_details=False)`): battery, firmware,
   sync, signal and log-number sentences recur across unrelated events and make them look
   alike; they are still drawn, so every other random choice is unchanged, but not written.
3. Gold evidence limited to what the checklist uses (`questions.resolve`): causal and fusion
   questions no longer add every ambient trace (a pulse reading, a phone on Wi-Fi) of each
   happening they touch; evidence is the checklist's observations plus, for causal questions,
   the named observations of the causal chain.
"""

from __future__ import annotations

from eval.person_blind import strip_unknowing_scenario
from memory.errors import ConfigurationError
from memory.formats.memfusebench import Scenario

REALISMS: tuple[str, ...] = ("legacy", "realistic")


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
