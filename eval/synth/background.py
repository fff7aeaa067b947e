"""Stage 3, the household's background: shared devices over the day, periodic sensor readings
and incidental noise."""

from __future__ import annotations

import random
from datetime import timedelta

from eval.synth.emit import Emitter
from eval.synth.episodes import WorldState
from eval.synth.personas import Household
from eval.synth.tables import Words, load_table
from eval.synth.timewords import at, clock, is_weekend
from eval.synth.world import Obs

TABLE = load_table("background")
W = Words("background")


SHOWS = TABLE["SHOWS"]
FRIDGE = TABLE["FRIDGE"]


def _household(em: Emitter, hh: Household, world: WorldState, day: int) -> None:
    say = W.at("household")
    r = em.rng
    home = [p.name for p in hh.residents]
    dinner = at(day, 0, hh.dinner + r.randint(-10, 15))
    if len(home) > 1:
        a, b = r.sample(home, 2)
        em.emit(
            dinner,
            hh.shared("smart_speaker"),
            "audio",
            **say("speaker_audio", locals()),
            people=home,
        )
    else:
        em.emit(
            dinner,
            hh.shared("smart_speaker"),
            "audio",
            **say("speaker_audio_2", locals()),
            people=home,
        )
    if r.random() < 0.8 and not world.is_claimed("tv", "household", day):
        show, minutes = r.choice(SHOWS), r.randint(35, 170)
        start = at(day, 19, r.randint(20, 90))
        watcher = r.choice(home)
        em.emit(
            start + timedelta(minutes=minutes),
            hh.shared("smart_tv"),
            "app_usage",
            **say("tv_app_usage", locals()),
            people=[watcher],
            facts={
                "topic": "tv",
                "person": "household",
                "day": day,
                "value": minutes,
                "show": show,
            },
        )
    light = hh.shared("smart_light")
    if light:
        em.emit(
            at(day, 20, r.randint(30, 55)),
            light,
            "device_status",
            **say("light_device_status", draw=r),
        )
        em.emit(
            at(day, 23, r.randint(0, 40)), light, "device_status", **say("light_device_status_2")
        )
    curtain = hh.shared("smart_curtain")
    if curtain:
        em.emit(
            at(day, 7, r.randint(15, 45)), curtain, "device_status", **say("curtain_device_status")
        )
        em.emit(
            at(day, 21, r.randint(0, 30)),
            curtain,
            "device_status",
            **say("curtain_device_status_2"),
        )
    vac = hh.shared("robot_vacuum")
    if vac and day in (0, 2, 4):
        em.emit(
            at(day, 10, r.randint(30, 59)), vac, "device_status", **say("vac_device_status", draw=r)
        )
    washer = hh.shared("smart_washer_dryer")
    if washer and r.random() < 0.45:
        em.emit(
            at(day, 9 if is_weekend(day) else 19, r.randint(0, 59)),
            washer,
            "device_status",
            **say("washer_device_status", draw=r),
        )
    fridge = hh.shared("smart_fridge")
    if fridge:
        items = r.sample(FRIDGE, 3)
        em.emit(at(day, 8, r.randint(30, 59)), fridge, "vision", **say("fridge_vision", locals()))
    motion = hh.shared("motion_sensor")
    if motion and r.random() < 0.4 and not world.is_claimed("night_motion", "household", day):
        em.emit(at(day + 1, 3, r.randint(0, 50)), motion, "motion", **say("motion_motion"))
    lock = hh.shared("smart_lock")
    if lock and hh.residents:
        night = at(day, 22, r.randint(20, 59))
        em.emit(
            night,
            lock,
            "location",
            **say("lock_location", locals()),
            facts={"topic": "night_lock", "person": "household", "day": day, "value": clock(night)},
        )
    kettle = hh.shared("smart_speaker")
    if kettle and r.random() < 0.7:
        who = r.choice(home)
        em.emit(
            at(day, 7 if not is_weekend(day) else 8, r.randint(5, 55)),
            kettle,
            "audio",
            **say("kettle_audio", locals()),
            people=[who],
        )
    fridge = hh.shared("smart_fridge")
    for _ in range(r.randint(1, 3) if fridge else 0):
        em.emit(
            at(day, r.choice([7, 12, 17, 18, 21]), r.randint(0, 59)),
            fridge,
            "device_status",
            **say("fridge_device_status", draw=r),
        )
    talker_evening = hh.shared("smart_speaker")
    if talker_evening and r.random() < 0.6:
        who = r.choice(home)
        asked = r.choice(say("asked"))
        wanted = r.choice(say("wanted"))
        em.emit(
            at(day, 20, r.randint(0, 59)),
            talker_evening,
            "dialogue",
            **say("talker_evening_dialogue", locals()),
            people=[who],
        )
    carer = next((p for p in hh.people if p.kind == "carer"), None)
    display = hh.first("smart_display", "smart_speaker")
    if carer and display and not is_weekend(day):
        elder = r.choice([p.name for p in hh.residents])
        em.emit(
            at(day, 0, carer.back - r.randint(10, 30)),
            display,
            "dialogue",
            **say("display_dialogue", locals(), draw=r),
            people=[carer.name, elder],
        )
    purifier = hh.shared("air_purifier")
    if purifier:
        em.emit(
            at(day, 22, r.randint(0, 20)),
            purifier,
            "device_status",
            **say("purifier_device_status"),
        )


def periodic_readings(hh: Household, rng: random.Random) -> list[Obs]:
    say = W.at("periodic_readings")
    em = Emitter(hh, rng, "periodic", f"{hh.scenario_id}_P")
    thermo, aq, pur = (
        hh.shared("smart_thermostat"),
        hh.shared("air_quality_monitor"),
        hh.shared("air_purifier"),
    )
    motion, fridge = hh.shared("motion_sensor"), hh.shared("smart_fridge")
    for day in range(7):
        for hour in range(24):
            temp = 19.0 + 1.8 * (8 <= hour <= 22) + rng.randint(-8, 8) / 10
            em.emit(
                at(day, hour, rng.randint(0, 4)),
                thermo,
                "environment",
                **say("thermo_environment", locals(), draw=rng),
            )
        for hour in range(1, 24, 2):
            em.emit(
                at(day, hour, rng.randint(5, 10)),
                aq,
                "environment",
                **say("aq_environment", draw=rng),
            )
        for hour in range(2, 24, 3) if pur else ():
            room = hh.device(pur).location.replace("_", " ")
            em.emit(
                at(day, hour, rng.randint(10, 20)),
                pur,
                "environment",
                **say("pur_environment", locals(), draw=rng),
            )
        for hour in range(7, 23):
            n = rng.randint(0, 14)
            em.emit(at(day, hour, 59), motion, "motion", **say("motion_motion", locals()))
        for hour in (3, 9, 15, 21):
            em.emit(
                at(day, hour, 30),
                fridge,
                "device_status",
                **say(
                    "fridge_device_status",
                    v=rng.randint(32, 46) / 10,
                    v2=rng.randint(170, 200) / 10,
                    v3=rng.randint(32, 46) / 10,
                    v4=rng.randint(170, 200) / 10,
                ),
            )
    return em.items


NOISE = TABLE["NOISE"]
PHONE_NOISE = TABLE["PHONE_NOISE"]


def incidental_noise(hh: Household, rng: random.Random, per_day: int = 44) -> list[Obs]:
    em = Emitter(hh, rng, "noise", f"{hh.scenario_id}_N")
    pool = [(hh.shared(t), m, texts) for t, m, texts in NOISE if hh.shared(t)]
    phones = [(p.name, hh.phone(p.name)) for p in hh.residents if hh.phone(p.name)]
    for day in range(7):
        for _ in range(per_day):
            ts = at(day, rng.randint(6, 23), rng.randint(0, 59))
            if phones and rng.random() < 0.3:
                name, phone = rng.choice(phones)
                texts = [t.format(n=rng.randint(2, 25)) for t in rng.sample(PHONE_NOISE, 2)]
                em.emit(ts, phone, "app_usage", texts, people=[name], place="home")
                continue
            device, modality, texts = rng.choice(pool)
            em.emit(ts, device, modality, rng.sample(texts, min(2, len(texts))))
    return em.items
