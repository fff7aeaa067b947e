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
import string
from datetime import datetime, timedelta

from eval.synth.tables import draw_number, draw_pick, load_table
from eval.synth.timewords import clock, hours_minutes  # noqa: F401  (re-exported)
from memory.formats.memfusebench import Device

TABLE = load_table("phrasing")

LABELS: dict[str, list[str]] = TABLE["LABELS"]

FRAMES: dict[str, list[str]] = TABLE["FRAMES"]


# Frames for devices whose voice differs from their modality's default: type -> modality -> frames.
TYPE_FRAMES: dict[str, dict[str, list[str]]] = TABLE["TYPE_FRAMES"]


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


# Detail and scene sentences (table DETAILS / SCENES, by device group) are templates whose
# fields are drawn in order from the rng, as in data/README.md: {o} the owner, {battery},
# {stable:LO-HI} a per-device constant, {rand:LO-HI} a random integer (optionally *K or /K,
# then :spec), {pick:a|b|c} or {pick:@LIST} one option, {at:+M} / {at:+LO-HI} the clock M minutes
# later, {night:H1-H2:a|b} `a` from hour H1 to hour H2. An object chooses its template by the
# first condition that holds ("device:PREFIX", "night:H1-H2", "" always).
Detail = str | dict[str, str]
DETAILS: dict[str, list[Detail]] = TABLE["DETAILS"]
SCENES: dict[str, list[Detail]] = TABLE["SCENES"]
_PARSE = string.Formatter().parse


def _night(hours: str, ts: datetime) -> bool:
    start, end = map(int, hours.split("-"))
    return ts.hour >= start or ts.hour < end


def _options(spec: str) -> list:
    if not spec.startswith("@"):
        return spec.split("|")
    node = TABLE
    for part in spec[1:].split("."):
        node = node[part]
    return node


def _later(spec: str, r: random.Random, ts: datetime) -> str:
    sign, span = spec[0], spec[1:]
    lo, _, hi = span.partition("-")
    minutes = r.randint(int(lo), int(hi)) if hi else int(lo)
    return clock(ts + timedelta(minutes=minutes if sign == "+" else -minutes))


def _draw(field: str, spec: str, r: random.Random, ts: datetime, owner: str, did: str) -> str:
    if field == "o":
        return owner
    if field == "battery":
        return str(battery(did, ts))
    if field == "stable":
        lo, hi = map(int, spec.split("-"))
        return str(_stable(did, lo, hi))
    if field == "rand":
        return draw_number(spec, r)
    if field == "pick":
        return draw_pick(_options(spec), r)
    if field == "at":
        return _later(spec, r, ts)
    if field == "night":
        hours, _, options = spec.partition(":")
        on, off = options.split("|")
        return on if _night(hours, ts) else off
    raise KeyError(f"unknown detail field {field!r}")


def detail(template: Detail, r: random.Random, ts: datetime, owner: str, did: str) -> str:
    """One detail or scene sentence, its fields drawn from `r` left to right."""
    if isinstance(template, dict):
        template = next(
            text
            for cond, text in template.items()
            if not cond
            or (cond.startswith("device:") and did.startswith(cond[7:]))
            or (cond.startswith("night:") and _night(cond[6:], ts))
        )
    out = []
    for literal, field, spec, _ in _PARSE(template):
        out.append(literal)
        if field is not None:
            out.append(_draw(field, spec or "", r, ts, owner, did))
    return "".join(out)


DETAIL_GROUP = TABLE["DETAIL_GROUP"]
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
    few_details: bool = False,
) -> str:
    """Word one observation in the device's voice: the framed clause, on average `scene`
    sentences of surrounding context, then `details` sensor-side sentences. With `few_details`
    only the first one or two of them are written (a per-event coin that draws nothing, so the
    random stream is the same): three or four battery, sync, firmware and log lines per event
    recur across unrelated events and make them look alike, while one or two make events
    differ from each other more than none do (see eval/synth/realism.py for the figures)."""
    dev = label(device, rng)
    text = clause.strip()
    if framed:
        frame = rng.choice(TYPE_FRAMES.get(device.device_type, {}).get(modality, FRAMES[modality]))
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
        text += " " + detail(make, rng, ts, owner, did)
    pool = list(DETAILS.get(group, []))
    count = min(len(pool), rng.randint(*details))
    written = 1 + _stable(f"{did}{ts.isoformat()}", 0, 1) if few_details else count
    for n, sentence in enumerate(rng.sample(pool, count)):
        drawn = detail(sentence, rng, ts, owner, did)
        if n < written:
            text += " " + drawn
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
