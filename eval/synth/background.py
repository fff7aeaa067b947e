"""Stage 3, the household's background: shared devices over the day, periodic sensor readings
and incidental noise."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from eval.synth.emit import Emitter, fact
from eval.synth.episodes import WorldState
from eval.synth.glimpses import everyday_glimpse
from eval.synth.personas import Household
from eval.synth.tables import Words, load_table
from eval.synth.timewords import at, clock, day_label, is_weekend
from eval.synth.world import Obs

TABLE = load_table("background")
W = Words("background")

SHOWS = TABLE["SHOWS"]
FRIDGE = TABLE["FRIDGE"]
NOISE = TABLE["NOISE"]  # (shared device type, modality, things it may pick up)
PHONE_NOISE = TABLE["PHONE_NOISE"]
GLIMPSE_SHARE = 0.85
"""Share of the incidental events that are everyday glimpses (`eval.synth.glimpses`): a
pulse sample, a location fix, hallway movement, talk, a light, the fridge door, a camera."""


def _household(em: Emitter, hh: Household, world: WorldState, day: int) -> None:
    say = W.at("household")
    r = em.rng
    home = [p.name for p in hh.residents]
    speaker, fridge = hh.shared("smart_speaker"), hh.shared("smart_fridge")

    def status(device: str | None, ts: datetime, key: str) -> None:
        """A status line a shared device logs on its own (schedules, cycles, doors)."""
        em.emit(ts, device, "device_status", **say(key, draw=r))

    dinner = at(day, 0, hh.dinner + r.randint(-10, 15))
    if len(home) > 1:
        a, b = r.sample(home, 2)
    words = say("speaker_audio" if len(home) > 1 else "speaker_audio_2", locals())
    em.emit(dinner, speaker, "audio", **words, people=home)
    if r.random() < 0.8 and not world.is_claimed("tv", "household", day):
        show, minutes = r.choice(SHOWS), r.randint(35, 170)
        start = at(day, 19, r.randint(20, 90))
        watcher = r.choice(home)
        ended = start + timedelta(minutes=minutes)
        words = say("tv_app_usage", locals())
        facts = fact("tv", "household", day, minutes, show=show)
        em.emit(ended, hh.shared("smart_tv"), "app_usage", **words, people=[watcher], facts=facts)
    light = hh.shared("smart_light")
    if light:
        status(light, at(day, 20, r.randint(30, 55)), "light_device_status")
        status(light, at(day, 23, r.randint(0, 40)), "light_device_status_2")
    curtain = hh.shared("smart_curtain")
    if curtain:
        status(curtain, at(day, 7, r.randint(15, 45)), "curtain_device_status")
        status(curtain, at(day, 21, r.randint(0, 30)), "curtain_device_status_2")
    vac = hh.shared("robot_vacuum")
    if vac and day in (0, 2, 4):
        status(vac, at(day, 10, r.randint(30, 59)), "vac_device_status")
    washer = hh.shared("smart_washer_dryer")
    if washer and r.random() < 0.45:
        done = at(day, 9 if is_weekend(day) else 19, r.randint(0, 59))
        status(washer, done, "washer_device_status")
    if fridge:
        items = r.sample(FRIDGE, 3)
        em.emit(at(day, 8, r.randint(30, 59)), fridge, "vision", **say("fridge_vision", locals()))
    motion = hh.shared("motion_sensor")
    if motion and r.random() < 0.4 and not world.is_claimed("night_motion", "household", day):
        em.emit(at(day + 1, 3, r.randint(0, 50)), motion, "motion", **say("motion_motion"))
    lock = hh.shared("smart_lock")
    if lock and hh.residents:
        night = at(day, 22, r.randint(20, 59))
        facts = fact("night_lock", "household", day, clock(night))
        em.emit(night, lock, "location", **say("lock_location", locals()), facts=facts)
    if speaker and r.random() < 0.7:
        who = r.choice(home)
        breakfast = at(day, 7 if not is_weekend(day) else 8, r.randint(5, 55))
        em.emit(breakfast, speaker, "audio", **say("kettle_audio", locals()), people=[who])
    for _ in range(r.randint(1, 3) if fridge else 0):
        opened = at(day, r.choice([7, 12, 17, 18, 21]), r.randint(0, 59))
        status(fridge, opened, "fridge_device_status")
    if speaker and r.random() < 0.6:
        who = r.choice(home)
        asked = r.choice(say("asked"))
        wanted = r.choice(say("wanted"))
        evening = at(day, 20, r.randint(0, 59))
        words = say("talker_evening_dialogue", locals())
        em.emit(evening, speaker, "dialogue", **words, people=[who])
    carer = next((p for p in hh.people if p.kind == "carer"), None)
    display = hh.first("smart_display", "smart_speaker")
    if carer and display and not is_weekend(day):
        elder = r.choice([p.name for p in hh.residents])
        before_leaving = at(day, 0, carer.back - r.randint(10, 30))
        words = say("display_dialogue", locals(), draw=r)
        em.emit(before_leaving, display, "dialogue", **words, people=[carer.name, elder])
    purifier = hh.shared("air_purifier")
    if purifier:
        status(purifier, at(day, 22, r.randint(0, 20)), "purifier_device_status")


def periodic_readings(hh: Household, rng: random.Random) -> list[Obs]:
    say = W.at("periodic_readings")
    em = Emitter(hh, rng, "periodic", f"{hh.scenario_id}_P")
    thermo, aq = hh.shared("smart_thermostat"), hh.shared("air_quality_monitor")
    pur, motion = hh.shared("air_purifier"), hh.shared("motion_sensor")
    fridge = hh.shared("smart_fridge")

    def read(
        ts: datetime, device: str | None, modality: str, key: str, ns: dict | None = None
    ) -> None:
        """One reading, its figures drawn by the wording's `{rand:...}` fields."""
        em.emit(ts, device, modality, **say(key, ns, draw=rng))

    for day in range(7):
        for hour in range(24):
            temp = 19.0 + 1.8 * (8 <= hour <= 22) + rng.randint(-8, 8) / 10
            ts = at(day, hour, rng.randint(0, 4))
            read(ts, thermo, "environment", "thermo_environment", locals())
        for hour in range(1, 24, 2):
            read(at(day, hour, rng.randint(5, 10)), aq, "environment", "aq_environment")
        for hour in range(2, 24, 3) if pur else ():
            room = hh.device(pur).location.replace("_", " ")
            ts = at(day, hour, rng.randint(10, 20))
            read(ts, pur, "environment", "pur_environment", locals())
        for hour in range(7, 23):
            n = rng.randint(0, 14)
            read(at(day, hour, 59), motion, "motion", "motion_motion", locals())
        for hour in (3, 9, 15, 21):
            read(at(day, hour, 30), fridge, "device_status", "fridge_device_status")
    return em.items


def _some_day(day: int, rng: random.Random) -> str:
    """A day a phone notification mentions: today or one of the next few."""
    return day_label((at(0, 0) + timedelta(days=day + rng.randint(0, 5))).date())


def incidental_noise(hh: Household, rng: random.Random, per_day: int = 64) -> list[Obs]:
    em = Emitter(hh, rng, "noise", f"{hh.scenario_id}_N")
    pool = [(hh.shared(t), m, texts) for t, m, texts in NOISE if hh.shared(t)]
    phones = [(p.name, hh.phone(p.name)) for p in hh.residents if hh.phone(p.name)]
    for day in range(7):
        for _ in range(per_day):
            ts = at(day, rng.randint(6, 23), rng.randint(0, 59))
            if rng.random() < GLIMPSE_SHARE:
                everyday_glimpse(em, hh, ts, day)
                continue
            if phones and rng.random() < 0.3:
                name, phone = rng.choice(phones)
                lines = rng.sample(PHONE_NOISE, 2)
                texts = [t.format(n=rng.randint(2, 25), day=_some_day(day, rng)) for t in lines]
                em.emit(ts, phone, "app_usage", texts, people=[name], place="home")
                continue
            device, modality, texts = rng.choice(pool)
            em.emit(ts, device, modality, rng.sample(texts, min(2, len(texts))))
    return em.items
