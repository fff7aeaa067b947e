"""Device-specific voice: how each kind of source words what it sensed.

A description is a voice frame for the device type and modality ("X's watch recorded
…", "Clip from the doorbell camera at 17:42: …") around a clause that carries the
fact, followed by zero or more sensor-side details (confidence, battery, sync). Frames
and labels vary per event, so the same kind of observation never reads identically and
a question cannot be matched to its evidence by copying a phrase. Details are
deliberately about the sensor, never about household state a question could ask about.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable
from datetime import datetime, timedelta

from eval.synth.timewords import clock
from memory.formats.memfusebench import Device

LABELS: dict[str, list[str]] = {
    "smartwatch": [
        "{O}'s watch",
        "{O}'s smartwatch",
        "the watch on {O}'s wrist",
        "{O}'s fitness watch",
    ],
    "kids_smartwatch": ["{O}'s kids' watch", "{O}'s GPS watch", "the children's watch {O} wears"],
    "smartphone": ["{O}'s phone", "{O}'s smartphone", "{O}'s mobile"],
    "laptop": ["{O}'s laptop", "the laptop {O} uses"],
    "tablet": ["{O}'s tablet", "the tablet {O} uses"],
    "car_system": [
        "{O}'s car",
        "the in-car system of {O}'s car",
        "the navigation unit in {O}'s car",
    ],
    "smart_speaker": [
        "the {L} speaker",
        "the smart speaker in the {L}",
        "the voice assistant in the {L}",
    ],
    "smart_display": [
        "the {L} display",
        "the smart display in the {L}",
        "the screen assistant in the {L}",
    ],
    "doorbell_camera": ["the doorbell camera", "the video doorbell", "the front-door camera"],
    "indoor_camera": ["the {L} camera", "the indoor camera in the {L}", "the {L} security camera"],
    "smart_lock": ["the front-door lock", "the smart lock", "the door lock"],
    "motion_sensor": [
        "the {L} motion sensor",
        "the motion detector in the {L}",
        "the PIR sensor in the {L}",
    ],
    "door_window_sensor": ["the {L} contact sensor", "the sensor on the {L}"],
    "smart_thermostat": ["the thermostat", "the {L} thermostat", "the heating controller"],
    "air_quality_monitor": [
        "the air-quality monitor",
        "the {L} air monitor",
        "the air sensor in the {L}",
    ],
    "air_purifier": ["the air purifier", "the {L} purifier"],
    "smart_tv": ["the TV", "the {L} TV", "the smart TV"],
    "smart_fridge": ["the fridge", "the smart fridge", "the kitchen fridge"],
    "smart_washer_dryer": ["the washer-dryer", "the washing machine"],
    "robot_vacuum": ["the robot vacuum", "the robot hoover"],
    "smart_light": ["the {L} lights", "the smart bulb in the {L}"],
    "smart_curtain": ["the {L} curtains", "the motorised curtains in the {L}"],
    "smart_scale": ["the bathroom scale", "the smart scale"],
    "gaming_console": ["the games console", "the console"],
}

FRAMES: dict[str, list[str]] = {
    "health": [
        "{Dev} recorded {c}.",
        "Health reading from {dev}: {c}.",
        "{Dev} measured {c} at {hm}.",
        "At {hm}, {dev} logged {c}.",
        "Data synced from {dev} shows {c}.",
    ],
    "motion": [
        "{Dev} detected {c}.",
        "Activity log ({dev}): {c}.",
        "{Dev} registered {c}.",
        "At {hm}, {dev} tracked {c}.",
        "Movement data from {dev}: {c}.",
    ],
    "vision": [
        "{Dev} captured {c}.",
        "Clip from {dev} at {hm}: {c}.",
        "{Dev} recorded footage of {c}.",
        "Motion-triggered snapshot ({dev}): {c}.",
        "{Dev} saw {c}.",
    ],
    "audio": [
        "{Dev} heard {c}.",
        "Audio picked up by {dev} at {hm}: {c}.",
        "{Dev} picked up {c}.",
        "Sound event on {dev}: {c}.",
        "At {hm}, {dev} heard {c}.",
    ],
    "dialogue": [
        "{Dev} noted that {c}.",
        "Conversation memory ({dev}, {hm}): {c}.",
        "From a conversation near {dev}: {c}.",
        "{Dev} stored a note from the conversation: {c}.",
        "Remembered by {dev} at {hm}: {c}.",
    ],
    "environment": [
        "{Dev} measured {c}.",
        "{Dev} reading at {hm}: {c}.",
        "Environmental data from {dev}: {c}.",
        "{Dev} reported {c}.",
        "At {hm}, {dev} sensed {c}.",
    ],
    "location": [
        "{Dev} logged {c}.",
        "Location update from {dev}: {c}.",
        "{Dev} recorded {c}.",
        "At {hm}, {dev} registered {c}.",
        "Position data from {dev}: {c}.",
    ],
    "app_usage": [
        "{Dev} recorded {c}.",
        "Screen activity on {dev}: {c}.",
        "Usage log from {dev}: {c}.",
        "{Dev} showed {c}.",
        "At {hm}, {dev} logged {c}.",
    ],
    "device_status": [
        "{Dev} reported {c}.",
        "Status change on {dev}: {c}.",
        "{Dev} logged {c}.",
        "Device event from {dev}: {c}.",
        "At {hm}, {dev} switched state: {c}.",
    ],
}


# Frames for devices whose voice differs from their modality's default.
TYPE_FRAMES: dict[tuple[str, str], list[str]] = {
    ("smart_fridge", "vision"): [
        "{Dev}'s interior camera captured {c}.",
        "Inside photo from {dev} at {hm}: {c}.",
        "{Dev}'s shelf camera showed {c}.",
        "Door-close snapshot from {dev}: {c}.",
    ],
    ("smart_display", "vision"): [
        "{Dev}'s camera saw {c}.",
        "Presence snapshot from {dev} at {hm}: {c}.",
        "{Dev} noticed {c} in front of its camera.",
        "Camera frame from {dev}: {c}.",
    ],
    ("smart_scale", "health"): [
        "{Dev} recorded {c}.",
        "Weigh-in on {dev} at {hm}: {c}.",
        "{Dev} measured {c}.",
        "Body-composition reading from {dev}: {c}.",
    ],
}


def _stable(device_id: str, lo: int, hi: int) -> int:
    """A per-device constant (e.g. a lock's battery level) that does not depend on hash seeds."""
    return lo + int(hashlib.sha1(device_id.encode()).hexdigest(), 16) % (hi - lo + 1)


def battery(device_id: str, ts: datetime) -> int:
    """Battery level that behaves like one: phones and watches drain through the day and are
    charged overnight, fixed sensors sit at a slowly falling level."""
    if device_id.startswith(("phone_", "watch_", "laptop_", "tablet_")):
        since = (ts.hour - 7) % 24 + ts.minute / 60
        drain = 4.2 if device_id.startswith("phone_") else 2.6
        return max(6, min(100, round(100 - since * drain - _stable(device_id, 0, 9))))
    return max(12, _stable(device_id, 55, 97) - (ts.day - 11) // 2)


WATCH_MODES = ("do-not-disturb was on", "notifications were enabled", "theatre mode was off")
GPS_STATES = ("off to save power", "on, with a fix from the paired phone", "on with its own fix")
ZONES = {"doorbell": ("A (path)", "B (doorstep)"), "indoor": ("C (room centre)", "D (window side)")}
BACKGROUND_SOUNDS = (
    "kettle",
    "radio",
    "extractor fan",
    "dishwasher",
    "television",
    "washing machine",
)
DOORSTEP_THINGS = ("recycling box", "pair of wellies", "potted bay tree", "parked scooter")
AMBIENT_SOUNDS = (
    "the fridge hum",
    "traffic outside",
    "a washing machine spinning",
    "birdsong through an open window",
    "a clock ticking",
)

# A detail or scene sentence: (rng, time, owner name, device id) -> sentence.
Detail = Callable[[random.Random, datetime, str, str], str]

DETAILS: dict[str, list[Detail]] = {
    "watch": [
        lambda r, t, o, d: (
            f"Sensor contact was rated {r.choice(['good', 'fair', 'good', 'excellent'])} "
            f"and the battery stood at {battery(d, t)}%."
        ),
        lambda r, t, o, d: (
            f"The entry synced to the companion app on {o}'s phone at "
            f"{clock(t + timedelta(minutes=r.randint(1, 9)))}."
        ),
        lambda r, t, o, d: (
            f"Wrist temperature was {r.choice(['+', '-'])}{r.randint(1, 6) / 10:.1f} °C from "
            f"{o}'s baseline, which the watch treats as normal variation."
        ),
        lambda r, t, o, d: (
            "No irregular-rhythm notification was raised and no fall alert was pending."
        ),
        lambda r, t, o, d: (
            f"The display was {r.choice(['dimmed', 'in always-on mode', 'off'])} and "
            f"{r.choice(WATCH_MODES)}."
        ),
        lambda r, t, o, d: (
            f"The optical heart-rate sensor sampled every {r.choice([2, 5, 10])} seconds "
            f"during this period."
        ),
        lambda r, t, o, d: f"GPS was {r.choice(GPS_STATES)}.",
    ],
    "phone": [
        lambda r, t, o, d: (
            f"Battery {battery(d, t)}%, on {r.choice(['home Wi-Fi', 'mobile data', '5G', '4G'])}."
        ),
        lambda r, t, o, d: (
            f"{r.randint(2, 9)} other notifications arrived within the same few minutes, "
            f"mostly from group chats."
        ),
        lambda r, t, o, d: (
            f"Focus mode was {r.choice(['off', 'set to Personal', 'set to Work', 'off'])} "
            f"and the ringer was {r.choice(['on', 'on vibrate', 'silenced'])}."
        ),
        lambda r, t, o, d: (
            f"Location accuracy was about {r.randint(4, 35)} m, based on "
            f"{r.choice(['Wi-Fi positioning', 'GPS', 'cell towers'])}."
        ),
        lambda r, t, o, d: (
            f"The entry was written to {o}'s on-device activity log and backed up overnight."
        ),
        lambda r, t, o, d: (
            f"Screen brightness was {r.randint(20, 95)}% and the phone was in "
            f"{r.choice(['portrait', 'landscape'])} orientation."
        ),
    ],
    "computer": [
        lambda r, t, o, d: f"Battery {battery(d, t)}%, connected to the home Wi-Fi.",
        lambda r, t, o, d: (
            f"{r.randint(3, 14)} browser tabs were open at the time, with "
            f"{r.randint(2, 5)} background apps running."
        ),
        lambda r, t, o, d: "The device was in light mode with the volume muted.",
        lambda r, t, o, d: (
            f"The usage figures come from the built-in screen-time report for {o}'s account."
        ),
        lambda r, t, o, d: f"The webcam indicator stayed {r.choice(['off', 'off', 'on briefly'])}.",
    ],
    "camera": [
        lambda r, t, o, d: (
            f"Detection confidence {r.randint(71, 98) / 100:.2f}; clip length {r.randint(8, 48)} s."
        ),
        lambda r, t, o, d: (
            "The image was slightly grainy in the low light, with infrared switched on."
            if t.hour >= 20 or t.hour < 7
            else "Part of the frame was washed out by sunlight."
        ),
        lambda r, t, o, d: (
            f"The recording was triggered by motion zone "
            f"{r.choice(ZONES['doorbell' if d.startswith('doorbell') else 'indoor'])}."
        ),
        lambda r, t, o, d: "The audio track on the clip is faint and partly covered by wind noise.",
        lambda r, t, o, d: (
            f"The person-detection model flagged {r.randint(1, 3)} tracked object(s) and "
            f"did not attempt face matching."
        ),
        lambda r, t, o, d: (
            f"The clip was uploaded to cloud storage {r.randint(3, 40)} seconds later and "
            f"kept for 30 days."
        ),
    ],
    "speaker": [
        lambda r, t, o, d: "Other voices in the room were not identified.",
        lambda r, t, o, d: f"The {r.choice(BACKGROUND_SOUNDS)} was audible in the background.",
        lambda r, t, o, d: (
            "The assistant was not addressed directly; this was ambient capture under the "
            "household's memory setting."
        ),
        lambda r, t, o, d: (
            f"Speaker volume was at {r.randint(2, 8) * 10}% and the microphones were on."
        ),
        lambda r, t, o, d: (
            f"Voice-match confidence was {r.choice(['high', 'medium', 'low'])} for the "
            f"recognised speaker."
        ),
        lambda r, t, o, d: (
            f"The transcript was stored with {r.randint(82, 97)}% estimated word accuracy."
        ),
    ],
    "lock": [
        lambda r, t, o, d: (
            f"Lock battery at {battery(d, t)}%; the bolt reported fully "
            f"{r.choice(['extended', 'retracted'])} afterwards."
        ),
        lambda r, t, o, d: "The auto-lock timer was set to 30 seconds.",
        lambda r, t, o, d: (
            f"Bluetooth signal strength was {-r.randint(48, 86)} dBm at the time of the event."
        ),
        lambda r, t, o, d: "The event was pushed to every household member's lock app.",
        lambda r, t, o, d: f"The hub received the event with a delay of {r.randint(1, 6)} seconds.",
    ],
    "sensor": [
        lambda r, t, o, d: f"Ambient light {r.randint(3, 640)} lux.",
        lambda r, t, o, d: f"Sensor battery at {battery(d, t)}%.",
        lambda r, t, o, d: "Sensitivity is set to medium and pet immunity is enabled.",
        lambda r, t, o, d: f"The event reached the hub in {r.randint(80, 900)} ms.",
        lambda r, t, o, d: f"Tamper switch: closed; internal temperature {r.randint(17, 24)} °C.",
    ],
    "climate": [
        lambda r, t, o, d: (
            f"Outdoor temperature from the weather feed: {r.randint(60, 190) / 10:.1f} °C."
        ),
        lambda r, t, o, d: (
            f"Sensor battery {battery(d, t)}%; last calibration {r.randint(8, 30)} days ago."
            if not d.startswith("purifier")
            else f"Filter life {_stable(d, 35, 90)}%; last cleaned {r.randint(8, 30)} days ago."
        ),
        lambda r, t, o, d: f"CO2 {r.randint(420, 1150)} ppm.",
        lambda r, t, o, d: f"The reading was averaged over the last {r.choice([1, 2, 5])} minutes.",
        lambda r, t, o, d: (
            "The boiler was "
            f"{r.choice(['idle', 'idle', 'modulating at 30%', 'heating hot water'])} "
            f"at the time."
            if d.startswith("thermostat")
            else f"The fan was running at {r.choice([20, 35, 50])}% in automatic mode."
        ),
    ],
    "appliance": [
        lambda r, t, o, d: (
            f"Firmware {r.choice(['4.2.1', '4.3.0', '5.0.2'])}; Wi-Fi signal "
            f"{r.choice(['strong', 'moderate', 'weak'])}."
        ),
        lambda r, t, o, d: f"Energy use so far today {r.randint(2, 31) / 10:.1f} kWh.",
        lambda r, t, o, d: "A push notification was sent to the household app.",
        lambda r, t, o, d: (
            f"The internal log entry is number {r.randint(1200, 9800)} since installation."
        ),
        lambda r, t, o, d: (
            f"Remote control from the app was {r.choice(['enabled', 'enabled', 'disabled'])}."
        ),
    ],
    "car": [
        lambda r, t, o, d: f"The trip was recorded under {o}'s driver profile.",
        lambda r, t, o, d: (
            f"Bluetooth connected to {o}'s phone within {r.randint(5, 30)} seconds of starting."
        ),
        lambda r, t, o, d: f"Outside temperature {r.randint(70, 210) / 10:.1f} °C.",
        lambda r, t, o, d: f"Odometer {r.randint(18000, 96000):,} km at the end of the trip.",
        lambda r, t, o, d: "No dashboard warnings other than those mentioned were active.",
    ],
    "screen": [
        lambda r, t, o, d: f"Volume {r.randint(8, 40)}; HDMI input {r.randint(1, 3)}.",
        lambda r, t, o, d: (
            f"Picture mode was set to {r.choice(['Standard', 'Movie', 'Game', 'Eco'])}."
        ),
        lambda r, t, o, d: (
            f"The network connection was {r.choice(['wired', 'Wi-Fi 5 GHz', 'Wi-Fi 2.4 GHz'])}."
        ),
    ],
}

SCENES: dict[str, list[Detail]] = {
    "watch": [
        lambda r, t, o, d: (
            f"At that point {o} had logged {r.randint(900, 14000):,} steps for the day."
        ),
        lambda r, t, o, d: (
            f"The watch was worn on {o}'s {r.choice(['left', 'right'])} wrist with a "
            f"{r.choice(['snug', 'loose', 'normal'])} fit."
        ),
        lambda r, t, o, d: f"Ambient noise measured by the watch was {r.randint(32, 78)} dB.",
        lambda r, t, o, d: f"The last blood-oxygen spot check had read {r.randint(94, 99)}%.",
        lambda r, t, o, d: (
            f"The motion classifier had {o} "
            f"{r.choice(['sitting', 'standing', 'walking slowly', 'moving about'])} "
            f"just before this."
        ),
        lambda r, t, o, d: f"{o}'s daily move goal stood at {r.randint(8, 96)}% complete.",
    ],
    "phone": [
        lambda r, t, o, d: (
            "The phone was "
            f"{r.choice(['face down on a table', 'in a jacket pocket', 'on charge', 'in hand'])} "
            f"with the screen {r.choice(['on', 'off'])}."
        ),
        lambda r, t, o, d: (
            f"Background refresh synced {r.randint(2, 40)} items around the same time."
        ),
        lambda r, t, o, d: (
            f"Signal strength was {r.randint(1, 4)} bars and Bluetooth was "
            f"{r.choice(['on', 'off'])}."
        ),
        lambda r, t, o, d: (
            f"The screen had been unlocked {r.randint(3, 90)} times so far that day."
        ),
        lambda r, t, o, d: (
            f"{r.randint(2, 12)} unread messages were waiting in the notification centre."
        ),
    ],
    "computer": [
        lambda r, t, o, d: (
            f"{r.randint(1, 19)} email notifications were queued in the corner of the screen."
        ),
        lambda r, t, o, d: (
            f"Screen brightness {r.randint(30, 100)}%, night-light {r.choice(['on', 'off'])}."
        ),
        lambda r, t, o, d: (
            f"The fan was {r.choice(['quiet', 'audible', 'running fast'])} and the lid fully open."
        ),
        lambda r, t, o, d: f"A system-update reminder had been postponed {r.randint(1, 5)} times.",
    ],
    "doorbell": [
        lambda r, t, o, d: (
            "Behind, the street was "
            f"{r.choice(['quiet', 'busy with traffic', 'wet from earlier rain', 'in shade'])}."
        ),
        lambda r, t, o, d: (
            f"The porch light was {'on' if t.hour >= 20 or t.hour < 6 else 'off'} and a "
            f"{r.choice(DOORSTEP_THINGS)} "
            f"stood by the step."
        ),
        lambda r, t, o, d: (
            f"The clip starts with the {r.choice(['gate', 'hedge', 'path', 'doormat'])} in "
            f"frame and ends {r.randint(3, 12)} seconds after the motion stops."
        ),
        lambda r, t, o, d: (
            f"A second, shorter clip was saved {r.randint(20, 90)} seconds later with no one in "
            "view."
        ),
        lambda r, t, o, d: (
            "Weather at the time: "
            f"{r.choice(['overcast', 'light drizzle', 'bright sun', 'breezy', 'mild and still'])}."
        ),
        lambda r, t, o, d: (
            f"A {r.choice(['white van', 'bus', 'cyclist', 'dog walker'])} passed in the "
            f"background of the frame."
        ),
    ],
    "indoor": [
        lambda r, t, o, d: (
            f"The {r.choice(['sofa', 'bookshelf', 'dining table', 'window'])} was at the edge "
            f"of the frame and the {r.choice(['lamp', 'ceiling light', 'TV'])} was "
            f"{r.choice(['on', 'off'])}."
        ),
        lambda r, t, o, d: (
            f"The clip lasts {r.randint(10, 60)} seconds; nobody else crossed the frame."
        ),
        lambda r, t, o, d: (
            f"Privacy mode was off, as scheduled from {r.choice(['08:00', '07:30', '09:00'])}."
        ),
        lambda r, t, o, d: (
            f"The room was {'lit by lamps' if t.hour >= 19 or t.hour < 7 else 'in daylight'} "
            f"with the curtains {r.choice(['open', 'half drawn', 'closed'])}."
        ),
    ],
    "speaker": [
        lambda r, t, o, d: f"The recording also caught {r.choice(AMBIENT_SOUNDS)}.",
        lambda r, t, o, d: f"The exchange lasted about {r.randint(6, 70)} seconds.",
        lambda r, t, o, d: "The assistant did not respond because no wake word was used.",
        lambda r, t, o, d: (
            f"It was added to the household activity history at {clock(t + timedelta(minutes=1))}."
        ),
        lambda r, t, o, d: (
            f"Speech was detected at a distance of roughly {r.randint(1, 6)} metres."
        ),
    ],
    "lock": [
        lambda r, t, o, d: (
            f"The door-position sensor confirmed the door closed {r.randint(4, 50)} seconds later."
        ),
        lambda r, t, o, d: (
            f"There had been no other lock events in the previous {r.randint(25, 300)} minutes."
        ),
        lambda r, t, o, d: (
            f"The keypad backlight {r.choice(['woke', 'stayed off'])} during the event."
        ),
    ],
    "sensor": [
        lambda r, t, o, d: f"The previous trigger was {r.randint(2, 140)} minutes earlier.",
        lambda r, t, o, d: (
            f"The sensor's last heartbeat to the hub was at {clock(t - timedelta(minutes=1))}."
        ),
        lambda r, t, o, d: f"Zigbee link quality {r.randint(80, 255)}.",
    ],
    "climate": [
        lambda r, t, o, d: (
            f"Humidity over the past hour was {r.choice(['rising', 'steady', 'falling slightly'])}."
        ),
        lambda r, t, o, d: (
            f"The outdoor air-quality index from the feed was {r.randint(12, 48)} (good)."
        ),
        lambda r, t, o, d: f"The reading was uploaded to the hub {r.randint(5, 50)} seconds later.",
        lambda r, t, o, d: f"Barometric pressure {r.randint(996, 1029)} hPa.",
        lambda r, t, o, d: (
            f"The next scheduled setpoint change is at {r.choice(['06:30', '17:00', '22:30'])}."
        ),
    ],
    "appliance": [
        lambda r, t, o, d: (
            f"The companion app shows the last maintenance check {r.randint(12, 240)} days ago."
        ),
        lambda r, t, o, d: f"Water-hardness setting: {r.choice(['soft', 'medium', 'hard'])}.",
        lambda r, t, o, d: f"Standby power {r.randint(1, 6) / 10:.1f} W before the change.",
        lambda r, t, o, d: "The event was mirrored to the household app's timeline.",
    ],
    "car": [
        lambda r, t, o, d: (
            f"Average speed {r.randint(18, 54)} km/h with {r.randint(1, 9)} stops at lights."
        ),
        lambda r, t, o, d: (
            "The radio was tuned to "
            f"{r.choice(['a news station', 'a pop station', 'a podcast', 'nothing'])}."
        ),
        lambda r, t, o, d: f"Eco-driving score for the trip: {r.randint(52, 97)}.",
    ],
    "screen": [
        lambda r, t, o, d: (
            f"The ambient-light sensor set the picture brightness to {r.randint(20, 90)}%."
        ),
        lambda r, t, o, d: f"Subtitles were {r.choice(['on', 'off'])}.",
        lambda r, t, o, d: f"The remote reported a {r.choice(['low', 'good'])} battery.",
    ],
}

DETAIL_GROUP = {
    "smartwatch": "watch",
    "kids_smartwatch": "watch",
    "smartphone": "phone",
    "laptop": "computer",
    "tablet": "computer",
    "doorbell_camera": "camera",
    "indoor_camera": "camera",
    "smart_speaker": "speaker",
    "smart_display": "speaker",
    "smart_lock": "lock",
    "motion_sensor": "sensor",
    "door_window_sensor": "sensor",
    "smart_thermostat": "climate",
    "air_quality_monitor": "climate",
    "air_purifier": "climate",
    "smart_fridge": "appliance",
    "smart_washer_dryer": "appliance",
    "robot_vacuum": "appliance",
    "smart_light": "appliance",
    "smart_curtain": "appliance",
    "smart_scale": "appliance",
    "car_system": "car",
    "smart_tv": "screen",
    "gaming_console": "screen",
}
SCENE_GROUP = {
    **DETAIL_GROUP,
    "doorbell_camera": "doorbell",
    "indoor_camera": "indoor",
    "smart_display": "speaker",
}


def place_words(location: str) -> str:
    return location.replace("_", " ")


def label(device: Device, rng: random.Random) -> str:
    options = LABELS.get(device.device_type, ["{id}"])
    return rng.choice(options).format(
        O=device.owner, L=place_words(device.location), id=device.device_id
    )


def capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def render(
    device: Device,
    modality: str,
    clause: str,
    ts: datetime,
    rng: random.Random,
    framed: bool = True,
    details: tuple[int, int] = (0, 1),
    scene: float = 0.0,
) -> str:
    """Word one observation in the device's voice: the framed clause, on average `scene`
    sentences of surrounding context, then `details` sensor-side sentences."""
    dev = label(device, rng)
    text = clause.strip()
    if framed:
        frame = rng.choice(TYPE_FRAMES.get((device.device_type, modality), FRAMES[modality]))
        text = frame.format(Dev=capitalize(dev), dev=dev, c=text, hm=clock(ts))
    text = capitalize(text)
    if not text.endswith((".", "!", "?", '"', "'")):
        text += "."
    group = DETAIL_GROUP.get(device.device_type, "")
    scene_group = SCENE_GROUP.get(device.device_type, "")
    if modality == "vision" and device.device_type == "smart_display":
        group, scene_group = "camera", "indoor"
    owner = device.owner if device.owner != "shared" else "the household"
    did = device.device_id
    scenes = list(SCENES.get(scene_group, []))
    n_scenes = int(scene) + (rng.random() < scene - int(scene))
    for make in rng.sample(scenes, min(len(scenes), n_scenes)):
        text += " " + make(rng, ts, owner, did)
    pool = list(DETAILS.get(group, []))
    count = min(len(pool), rng.randint(*details))
    for detail in rng.sample(pool, count):
        text += " " + detail(rng, ts, owner, did)
    return polish(text)


_ARTICLE = re.compile(r"\b([Aa]) (?!one\b|once\b|eu|uni|use|usu)([aeioAEIO]\w*)")
_PLURAL_ONE = re.compile(
    r"\b1 (wake-up|bar|awakening|time|minute|second|session|visit|episode|item|"
    r"notification|tab|app|message|stop|detection|trigger|pickup|metre)s\b"
)


def polish(text: str) -> str:
    """Sentence-initial capital, 'an' before a vowel sound, singular after 1."""
    text = _ARTICLE.sub(lambda m: ("An " if m.group(1) == "A" else "an ") + m.group(2), text)
    text = _PLURAL_ONE.sub(r"1 \1", text)
    return text[:1].upper() + text[1:]


def duration(minutes: int, rng: random.Random) -> str:
    """A duration the way different apps print it: '6 h 12 min', '6:12', '372 minutes'."""
    h, m = divmod(minutes, 60)
    options = [f"{h} h {m:02d} min", f"{h}h{m:02d}", f"{minutes} minutes"]
    if h == 0:
        options = [f"{m} min", f"{m} minutes"]
    return rng.choice(options)


def hours_minutes(minutes: int) -> str:
    """Canonical duration used in reference answers."""
    h, m = divmod(minutes, 60)
    return f"{h} h {m:02d} min" if h else f"{m} min"
