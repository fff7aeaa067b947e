"""Stage 6: topical distractors that must not change any answer, then final ids.

For each question, 1-3 near-miss observations are written on its topic but about the
wrong person (same day), the wrong day (same person), or as talk and browsing that
mention the topic without stating a fact. They never assert a value for a slot a
question relies on (a night's sleep, a day's steps, an arrival time), so they cannot
become evidence or contradict it. Afterwards all events are time-ordered, given
scenario-qualified ids, every reference is remapped, and a check proves the gold
evidence (by description) and answers are unchanged.
"""

from __future__ import annotations

import random
from datetime import datetime

from eval.synth.emit import Emitter
from eval.synth.errors import SynthesisError
from eval.synth.personas import Household
from eval.synth.timewords import at
from eval.synth.world import Obs, Question

# (who, device, modality, clause variants); who = "p" (the subject, on another day) or
# "o" (someone else, on an evidence day). Devices: kind[:p|:o] resolved in the household.
Decoy = tuple[str, str, str, list[str]]

DECOYS: dict[str, list[Decoy]] = {
    "body": [
        (
            "o",
            "watch:o",
            "motion",
            [
                (
                    "{o}'s walk paused for two minutes at a road crossing, then resumed "
                    "at a normal cadence"
                ),
                "a short stop in {o}'s walk, then normal pace again",
            ],
        ),
        (
            "o",
            "doorbell_camera",
            "vision",
            [
                "a neighbour's child limping past the gate with a scooter",
                "a jogger stopping at the gate to retie a shoelace",
            ],
        ),
        (
            "p",
            "smart_speaker",
            "audio",
            [
                (
                    "{p} telling someone that an old injury from last winter hardly "
                    "bothers {him} any more"
                ),
                ("{p} joking about being stiff after gardening, nothing serious"),
            ],
        ),
        (
            "p",
            "phone:p",
            "app_usage",
            [
                "an article titled 'Five stretches for runners' read for 3 minutes",
                "a sports-physio clinic's price list viewed briefly",
            ],
        ),
        (
            "o",
            "indoor_camera",
            "vision",
            [
                "{o} on the sofa with feet up on the pouffe, reading",
                "{o} doing stretches on a yoga mat by the window",
            ],
        ),
    ],
    "illness": [
        (
            "o",
            "watch:o",
            "health",
            [
                "{o}'s skin temperature 0.2 °C above baseline, within the normal range",
                "a normal overnight heart rate for {o}, no deviation flagged",
            ],
        ),
        (
            "p",
            "smart_speaker",
            "audio",
            [
                "{p} sneezing twice and saying it's just the pollen",
                "{p} clearing {his} throat and asking for a glass of water",
            ],
        ),
        (
            "p",
            "phone:p",
            "app_usage",
            [
                "a pharmacy's opening hours checked for a repeat prescription",
                "a health-news article about the flu season read for 4 minutes",
            ],
        ),
        (
            "o",
            "smart_display",
            "dialogue",
            [
                "{o} asked for a reminder to book a routine dental check-up",
                "{o} wants to restock the first-aid box with plasters",
            ],
        ),
    ],
    "heart": [
        (
            "o",
            "watch:o",
            "health",
            [
                "a heart-rate spike to 128 bpm for {o} while carrying laundry upstairs",
                (
                    "{o}'s heart rate at 104 bpm after climbing the stairs, settling within "
                    "two minutes"
                ),
            ],
        ),
        (
            "p",
            "smart_display",
            "dialogue",
            [
                "{p} mentioned wanting to try decaf coffee at some point",
                "{p} said a friend had a pacemaker fitted last year",
            ],
        ),
        (
            "p",
            "phone:p",
            "app_usage",
            [
                "the watch's companion app opened to change the watch face",
                "a news piece on 'what your resting heart rate says' skimmed",
            ],
        ),
    ],
    "sleep": [
        (
            "o",
            "watch:o",
            "health",
            ["a 25-minute afternoon nap for {o}", ("a short daytime doze of 18 minutes for {o}")],
        ),
        (
            "p",
            "smart_speaker",
            "audio",
            [
                "{p} asking for rain sounds to play for 30 minutes",
                "{p} setting a gentle wake-up alarm for the weekend",
            ],
        ),
        (
            "p",
            "phone:p",
            "app_usage",
            [
                "a sleep-tips article, 'Why you wake at 3 am', read for 5 minutes",
                "the bedtime-reminder settings opened and closed without changes",
            ],
        ),
        (
            "o",
            "smart_light",
            "device_status",
            [
                "dimmed to 10% by the reading-light scene for {o}",
                "the night-light scene switched on briefly",
            ],
        ),
    ],
    "activity": [
        (
            "o",
            "watch:o",
            "motion",
            [
                "a nudge for {o} to stand up after an hour sitting still",
                "{o}'s move-goal ring reaching 50% by mid-afternoon",
            ],
        ),
        (
            "p",
            "phone:p",
            "app_usage",
            [
                "the step-challenge leaderboard opened for two minutes",
                "a running-shoe review read for 6 minutes",
            ],
        ),
        (
            "p",
            "smart_speaker",
            "dialogue",
            [
                "{p} said {he} might join the Thursday running club next month",
                "{p} is thinking about a couch-to-5k plan in the summer",
            ],
        ),
        (
            "o",
            "doorbell_camera",
            "vision",
            ["{o} heading out with a tennis racket", "{o} wheeling a bike out of the side gate"],
        ),
    ],
    "screen": [
        (
            "o",
            "phone:o",
            "app_usage",
            ["12 minutes in a video app for {o}", ("a 9-minute game of solitaire on {o}'s phone")],
        ),
        (
            "o",
            "phone:o",
            "app_usage",
            [
                "a 14-minute football highlights clip streamed",
                "a short cartoon clip, 11 minutes",
            ],
        ),
        (
            "p",
            "smart_speaker",
            "dialogue",
            [
                "{p} said {he} wants to cut down on phone time next week",
                "{p} asked how to turn on the screen-time report",
            ],
        ),
        (
            "o",
            "gaming_console",
            "device_status",
            ["a system update downloaded in rest mode", "controllers paired again after a reset"],
        ),
    ],
    "door": [
        (
            "o",
            "doorbell_camera",
            "vision",
            [
                "{o} stepping out to put the recycling box on the kerb",
                "{o} on the doorstep signing for a letter, then going back in",
            ],
        ),
        (
            "o",
            "smart_lock",
            "location",
            [
                "a keypad attempt with a wrong code, rejected once, then no entry",
                "the auto-lock re-engaging after the door was left on the latch",
            ],
        ),
        (
            "p",
            "smart_speaker",
            "dialogue",
            [
                "{p} said {he} might work late one day next week",
                "{p} mentioned wanting a spare key cut",
            ],
        ),
        (
            "o",
            "door_window_sensor",
            "device_status",
            [
                "the door opened for 40 seconds to let the cat in",
                "a brief opening while {o} shook out a rug",
            ],
        ),
    ],
    "kitchen": [
        (
            "o",
            "smart_speaker",
            "dialogue",
            [
                "{o} asked to add washing-up liquid and kitchen roll to the list",
                "{o} wants to buy more coffee filters at some point",
            ],
        ),
        (
            "o",
            "smart_fridge",
            "vision",
            [
                "a new tub of hummus and a bag of salad on the middle shelf",
                "a tray of leftover roast vegetables covered in foil",
            ],
        ),
        (
            "p",
            "phone:p",
            "app_usage",
            [
                "a recipe for banana bread saved to favourites",
                "a supermarket's weekly offers page browsed for 3 minutes",
            ],
        ),
        (
            "o",
            "doorbell_camera",
            "vision",
            [
                "a supermarket van stopping at the house opposite",
                "a milk-float-style electric van passing slowly",
            ],
        ),
    ],
    "appliance": [
        (
            "o",
            "smart_washer_dryer",
            "device_status",
            [
                "the detergent auto-dose reservoir reported 20% left",
                "a reminder to run the monthly drum-clean programme",
            ],
        ),
        (
            "o",
            "smart_speaker",
            "dialogue",
            [
                "{o} asked how to descale the kettle",
                "{o} wants to book the boiler's annual service in the autumn",
            ],
        ),
        (
            "p",
            "phone:p",
            "app_usage",
            [
                "a review of cordless vacuums read for 5 minutes",
                "the extended-warranty email for the TV opened and archived",
            ],
        ),
        (
            "o",
            "robot_vacuum",
            "device_status",
            [
                "the side brush reported 80% life remaining",
                "the dust-bin filter flagged for cleaning within a week",
            ],
        ),
    ],
    "air": [
        (
            "o",
            "air_quality_monitor",
            "environment",
            [
                (
                    "PM2.5 at 21 µg/m³ briefly while {o} was frying "
                    "onions, back to 9 within ten minutes"
                ),
                "a small VOC rise to 160 after a scented candle was lit",
            ],
        ),
        (
            "o",
            "smart_speaker",
            "audio",
            [
                "{o} asking whether anyone else can smell the neighbour's barbecue",
                "the cooker hood running on its lowest setting",
            ],
        ),
        (
            "o",
            "air_purifier",
            "device_status",
            ["filter-change reminder acknowledged", "switched from sleep mode to auto at 07:00"],
        ),
        (
            "p",
            "phone:p",
            "app_usage",
            [
                "a pollen forecast checked ('moderate')",
                ("an article on indoor plants that clean the air"),
            ],
        ),
    ],
    "heating": [
        (
            "o",
            "smart_thermostat",
            "environment",
            [
                "the eco-mode suggestion dismissed, room at 20.1 °C",
                "a holiday-mode prompt ignored, room temperature 20.4 °C",
            ],
        ),
        (
            "o",
            "smart_speaker",
            "audio",
            [
                "{o} saying the bathroom radiator feels lukewarm",
                "{o} asking whether the hot water is on",
            ],
        ),
        (
            "p",
            "phone:p",
            "app_usage",
            [
                "an energy-supplier email about a new tariff opened",
                "the heating app's monthly report viewed for a minute",
            ],
        ),
    ],
    "car": [
        (
            "o",
            "car:o",
            "location",
            [
                "a routine trip to the supermarket with no warnings",
                "a short drive to the recycling centre and back",
            ],
        ),
        (
            "p",
            "doorbell_camera",
            "vision",
            [
                "{p} washing the car on the drive with a bucket and sponge",
                "{p} checking the windscreen wipers on the drive",
            ],
        ),
        (
            "p",
            "smart_speaker",
            "dialogue",
            [
                "{p} said the car's MOT is due in September",
                "{p} wants to get the car valeted before the holidays",
            ],
        ),
    ],
    "parcel": [
        (
            "o",
            "doorbell_camera",
            "vision",
            [
                "a courier delivering a parcel to the house opposite",
                "a postman pushing letters through the letterbox",
            ],
        ),
        (
            "o",
            "phone:o",
            "app_usage",
            [
                "a tracking page for a different order ('arriving next week')",
                "an online order for printer ink placed for {o}",
            ],
        ),
        (
            "p",
            "smart_speaker",
            "dialogue",
            [
                "{p} asked to be reminded to return a library book",
                "{p} said {he} needs to post a birthday card",
            ],
        ),
    ],
    "social": [
        (
            "o",
            "phone:o",
            "dialogue",
            [
                "{o} said the cousins might come over in the summer holidays",
                "{o} talked about maybe hosting a barbecue in July",
            ],
        ),
        (
            "o",
            "doorbell_camera",
            "vision",
            [
                "a man selling broadband deals at the door, leaving a leaflet",
                "a neighbour returning a borrowed ladder",
            ],
        ),
        (
            "p",
            "smart_display",
            "dialogue",
            [
                "{p} asked for a reminder to ring an old school friend",
                "{p} wants to send flowers for a friend's anniversary",
            ],
        ),
        (
            "o",
            "smart_light",
            "device_status",
            ["the 'relax' scene switched on", "brightness set to 40%"],
        ),
    ],
    "work": [
        (
            "o",
            "laptop:o",
            "app_usage",
            ["a 20-minute spreadsheet session in the afternoon", "a video call of 25 minutes"],
        ),
        (
            "p",
            "smart_speaker",
            "dialogue",
            [
                "{p} said next month's work should be quieter",
                "{p} mentioned a team away-day in June",
            ],
        ),
        (
            "o",
            "phone:o",
            "app_usage",
            [
                "an email from the school about a trip next term",
                "a calendar invite accepted for a meeting next week",
            ],
        ),
    ],
    "care": [
        (
            "o",
            "smart_display",
            "dialogue",
            [
                "{o} asked for a reminder about a dentist appointment",
                "a reminder for {o} to water the tomatoes",
            ],
        ),
        (
            "p",
            "smart_speaker",
            "dialogue",
            [
                "{p} asked what day the chiropodist comes",
                "{p} wants the repeat prescription reordered next week",
            ],
        ),
        (
            "o",
            "indoor_camera",
            "vision",
            ["{o} folding laundry on the armchair", ("{o} watering the houseplants")],
        ),
    ],
    "weight": [
        (
            "o",
            "smart_scale",
            "health",
            [
                "an unassigned reading of 31.2 kg with no recognised profile",
                "a weigh-in attempt cancelled after two seconds",
            ],
        ),
        (
            "p",
            "phone:p",
            "app_usage",
            [
                "a healthy-recipes page saved",
                ("a calorie-counting app opened and closed without logging"),
            ],
        ),
    ],
}

TOPIC_FAMILY = {
    "injury": "body",
    "fall": "body",
    "illness": "illness",
    "health": "heart",
    "resting_hr": "heart",
    "sleep": "sleep",
    "steps": "activity",
    "workout": "activity",
    "run": "activity",
    "screen_time": "screen",
    "gaming": "screen",
    "tv": "screen",
    "tablet": "screen",
    "laptop_work": "work",
    "deadline": "work",
    "arrival": "door",
    "day_out": "door",
    "departure": "door",
    "door": "door",
    "lost_item": "door",
    "food": "kitchen",
    "appliance": "appliance",
    "air": "air",
    "dispute": "heating",
    "car": "car",
    "delivery": "parcel",
    "purchase": "parcel",
    "visit": "social",
    "party": "social",
    "medication": "care",
    "carer_visit": "care",
    "weight": "weight",
}


def _device(hh: Household, spec: str, p: str, o: str) -> str | None:
    kind, _, who = spec.partition(":")
    name = p if who == "p" else o
    if who:
        return {
            "watch": hh.watch,
            "phone": hh.phone,
            "laptop": hh.laptop,
            "car": hh.car,
            "tablet": hh.tablet,
        }[kind](name)
    return hh.shared(kind)


def inject(
    hh: Household, questions: list[Question], obs: dict[str, Obs], rng: random.Random
) -> list[Obs]:
    """1-3 distractors per question; returns the new observations (source `adversarial`)."""
    em = Emitter(hh, rng, "adversarial", f"{hh.scenario_id}_A")
    taken = {(o.device, o.ts) for o in obs.values()}
    residents = [p for p in hh.people]
    for q in questions:
        family = DECOYS[TOPIC_FAMILY.get(q.topic, "social")]
        subject = (
            q.subject if q.subject in {p.name for p in residents} else rng.choice(residents).name
        )
        others = [p.name for p in residents if p.name != subject] or [subject]
        ev_days = sorted({obs[k].ts.date() for k in q.evidence})
        ev_idx = sorted({(d - at(0, 0).date()).days for d in ev_days})
        free_days = [d for d in range(7) if d not in ev_idx]
        made = 0
        wanted = rng.choice([1, 2, 2, 3, 3, 3])
        attempts = rng.sample(family, len(family)) + rng.sample(family, len(family))
        for who, spec, modality, clauses in attempts:
            if made >= wanted:
                break
            o = rng.choice(others)
            device = _device(hh, spec, subject, o)
            if device is None:
                continue
            if who == "p":
                if not free_days:
                    continue  # the subject on an evidence day would not be a near miss
                day = rng.choice(free_days)
            else:
                if o == subject:
                    continue
                day = rng.choice(ev_idx)
            person = subject if who == "p" else o
            pr = hh.person(person).pron
            texts = [
                c.format(p=subject, o=o, he=pr["he"], him=pr["him"], his=pr["his"]) for c in clauses
            ]
            ts = _free_time(day, device, taken, rng, q.time)
            if ts is None:
                continue
            made_obs = em.emit(ts, device, modality, texts, people=[person])
            if made_obs is None:
                continue
            made_obs.target_question = q.qid
            taken.add((device, made_obs.ts))
            made += 1
    return em.items


def _free_time(
    day: int, device: str, taken: set, rng: random.Random, before: datetime
) -> datetime | None:
    """A waking-hours minute on `day`, free on `device`, and before the question is asked."""
    for _ in range(20):
        ts = at(day, rng.randint(7, 20), rng.randint(0, 59))
        if (device, ts) not in taken and ts < before:
            return ts
    return None


def finalize_ids(scenario_id: str, stream: list[Obs], questions: list[Question]) -> dict[str, str]:
    """Reorder by time, assign `<scenario>_E<nnnn>` ids, remap every reference, and prove the
    gold evidence and answers survived unchanged. Returns the old->new id map."""
    old = stream_by_key(stream)
    before = {
        q.qid: (
            [_content(old[k]) for k in q.evidence],
            q.answer,
            [[_content(old[k]) for k in keys] for _, keys in q.checklist],
        )
        for q in questions
    }
    stream.sort(key=lambda o: (o.ts, o.device, o.key))
    mapping = {o.key: f"{scenario_id}_E{n:04d}" for n, o in enumerate(stream, start=1)}
    for o in stream:
        o.key = mapping[o.key]
    for q in questions:
        q.evidence = sorted((mapping[k] for k in q.evidence), key=lambda k: k)
        q.checklist = [(item, [mapping[k] for k in keys]) for item, keys in q.checklist]
    by_key = stream_by_key(stream)
    qids = {q.qid for q in questions}
    for q in questions:
        ev, answer, items = before[q.qid]
        now_ev = [_content(by_key[k]) for k in q.evidence]
        if sorted(now_ev) != sorted(ev) or answer != q.answer:
            raise SynthesisError(
                "adversarial", scenario_id, f"{q.qid}: gold evidence changed by remapping"
            )
        if [[_content(by_key[k]) for k in keys] for _, keys in q.checklist] != items:
            raise SynthesisError("adversarial", scenario_id, f"{q.qid}: checklist evidence changed")
        if any(by_key[k].source == "adversarial" for k in q.evidence):
            raise SynthesisError(
                "adversarial", scenario_id, f"{q.qid}: a distractor became evidence"
            )
    for o in stream:
        if o.source == "adversarial" and o.target_question not in qids:
            raise SynthesisError(
                "adversarial", scenario_id, f"{o.key} targets unknown {o.target_question}"
            )
    return mapping


def _content(o: Obs) -> tuple:
    return (o.ts, o.device, o.modality, o.description)


def stream_by_key(stream: list[Obs]) -> dict[str, Obs]:
    return {o.key: o for o in stream}
