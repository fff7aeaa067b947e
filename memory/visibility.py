"""Who may see an event: visibilities, the ingest-time rules that derive them, the policy file.

A visibility is one of three canonical strings, kept beside the event (not inside it:
events are immutable observations, a visibility is a household's decision about them and
may change, audited):

    household            everyone who may ask this memory (shared devices, by default)
    private:<person>     only that person (an event with an owner: their watch, phone, laptop,
                         their dialogue with an assistant)
    people:<a>,<b>,...   an explicit set (a conversation: everyone who took part)

Names compare case-insensitively ("maya" may see what `private:Maya` holds); the canonical
form keeps them as written, sorted. The derivation at ingest is, first match wins: the
event's own ``visibility`` field (an unknown key, so it rides in `metadata`), the policy
file's first matching rule, the event's ``owner`` (unless ``shared``), else ``household``.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memory.errors import ConfigurationError, InvalidEventError
from memory.models import Event

HOUSEHOLD = "household"
PRIVATE = "private:"
PEOPLE = "people:"
#: Owner values that mean "nobody in particular" (the benchmark format's shared devices).
SHARED_OWNERS = frozenset({"", "shared", "household", "none"})
#: The key a raw record may carry to set its own visibility (kept in `Event.metadata`).
VISIBILITY_KEY = "visibility"


def _person(name: str) -> str:
    person = " ".join(str(name).split())
    if not person or any(c in person for c in ",:"):
        raise ValueError(f"{name!r} is not a person's name (empty, or holds ',' or ':')")
    return person


def canonical(value: object) -> str:
    """The canonical visibility for what a user or a file wrote, or ValueError saying why.

    Accepts ``household``, ``private:<name>``, ``people:<a>,<b>``, a bare list of names
    (``["Maya", "Tom"]`` or ``"Maya, Tom"`` after ``people:``). One person in a set is
    written ``private:<name>``, so two spellings of one audience compare equal.
    """
    if isinstance(value, (list, tuple, set, frozenset)):
        names = [_person(str(v)) for v in value]
    elif isinstance(value, str):
        text = value.strip()
        lowered = text.lower()
        if lowered == HOUSEHOLD:
            return HOUSEHOLD
        if lowered.startswith(PRIVATE):
            names = [_person(text[len(PRIVATE) :])]
        elif lowered.startswith(PEOPLE):
            names = [_person(p) for p in text[len(PEOPLE) :].split(",") if p.strip()]
        else:
            raise ValueError(
                f"visibility {value!r} is not one of: household, private:<person>, "
                "people:<a>,<b>, or a list of names"
            )
    else:
        kind = type(value).__name__
        raise ValueError(f"visibility must be text or a list of names, got {kind}")  # noqa: TRY004
    unique = sorted({n.casefold(): n for n in names}.values(), key=str.casefold)
    if not unique:
        raise ValueError("visibility names nobody (an empty set of people)")
    if len(unique) == 1:
        return f"{PRIVATE}{unique[0]}"
    return PEOPLE + ",".join(unique)


def audience(visibility: str) -> frozenset[str] | None:
    """The casefolded names a canonical visibility admits; None for the whole household."""
    if visibility == HOUSEHOLD:
        return None
    if visibility.startswith(PRIVATE):
        return frozenset({visibility[len(PRIVATE) :].casefold()})
    return frozenset(p.casefold() for p in visibility[len(PEOPLE) :].split(","))


def may_see(requester: str, visibility: str) -> bool:
    """Whether `requester` may see an event of this visibility."""
    admitted = audience(visibility)
    return admitted is None or requester.strip().casefold() in admitted


def may_change(requester: str, visibility: str) -> bool:
    """Whether `requester`, who is not an admin, may forget an event of this visibility or
    change who sees it: a private event only by its person, a conversation by anyone in
    it, a household event by any member of the household. So a person may change exactly
    what they may see — and nothing they cannot see exists for them at all (an unknown id
    and another person's private id give the same answer)."""
    return may_see(requester, visibility)


class VisibilityRule(BaseModel):
    """One policy rule: every given selector must match (device and owner are globs)."""

    model_config = ConfigDict(extra="forbid")

    device: str | None = Field(default=None, description="Device id glob, e.g. `cam_*`.")
    modality: str | None = Field(default=None, description="One of the nine modalities.")
    owner: str | None = Field(default=None, description="Owner glob; `shared` for shared ones.")
    visibility: str = Field(
        description="household | private:<person> | people:<a>,<b> | owner (the event's owner, "
        "household when it has none)."
    )

    def matches(self, event: Event) -> bool:
        owner = (event.owner or "shared").casefold()
        return (
            (self.device is None or fnmatch.fnmatchcase(event.device, self.device))
            and (self.modality is None or event.modality.value == self.modality)
            and (self.owner is None or fnmatch.fnmatchcase(owner, self.owner.casefold()))
        )


class VisibilityPolicy(BaseModel):
    """The household's rules for deriving visibility, checked in order before the defaults.

    A JSON file: ``{"rules": [{"device": "camera_*", "visibility": "household"}, ...],
    "admins": ["Anna"]}``. A local CLI cannot prove who runs it, so `--admin` is open to
    anyone by default; `admins` limits it to the named people (who must then say who they
    are with `--user`), which stops a household member from reading or changing everything
    by accident, not an attacker with the files.
    """

    model_config = ConfigDict(extra="forbid")

    rules: list[VisibilityRule] = Field(default_factory=list)
    admins: list[str] = Field(
        default_factory=list,
        description="People who may use --admin (empty: anyone may; it is always audited).",
    )

    def may_administer(self, person: str | None) -> bool:
        """Whether `person` may act as admin under this policy."""
        if not self.admins:
            return True
        return person is not None and person.strip().casefold() in {
            a.strip().casefold() for a in self.admins
        }

    @classmethod
    def load(cls, path: Path | None) -> VisibilityPolicy:
        """The policy in `path` (none: no rules); a bad file is a one-line ConfigurationError."""
        if path is None:
            return cls()
        try:
            policy = cls.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
            for rule in policy.rules:
                if rule.visibility.strip().lower() != "owner":
                    canonical(rule.visibility)
        except FileNotFoundError:
            raise ConfigurationError(f"visibility policy {path} does not exist") from None
        except (OSError, ValueError, ValidationError) as exc:
            why = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise ConfigurationError(f"visibility policy {path}: {why}") from None
        return policy


def _owner_of(event: Event) -> str | None:
    owner = (event.owner or "").strip()
    return None if owner.casefold() in SHARED_OWNERS else owner


def derive(event: Event, policy: VisibilityPolicy | None = None) -> str:
    """The visibility an event gets at ingest (see the module docstring for the order)."""
    given = event.metadata.get(VISIBILITY_KEY)
    if given is not None:
        try:
            return canonical(given)
        except ValueError as exc:
            raise InvalidEventError(event.event_id, VISIBILITY_KEY, str(exc)) from None
    for rule in (policy or VisibilityPolicy()).rules:
        if rule.matches(event):
            if rule.visibility.strip().lower() == "owner":
                owner = _owner_of(event)
                return canonical(f"{PRIVATE}{owner}") if owner else HOUSEHOLD
            return canonical(rule.visibility)
    owner = _owner_of(event)
    return canonical(f"{PRIVATE}{owner}") if owner else HOUSEHOLD


def derive_all(
    events: Sequence[Event],
    policy: VisibilityPolicy | None = None,
    overrides: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Event id → visibility for a batch; `overrides` (already canonical, e.g. from an
    export) win over the derivation."""
    given = overrides or {}
    return {e.event_id: given.get(e.event_id) or derive(e, policy) for e in events}


def summary(visibilities: Iterable[str]) -> dict[str, int]:
    """How many events per visibility, for stats and dry runs."""
    counts: dict[str, int] = {}
    for value in visibilities:
        counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items()))


def describe(visibility: str) -> str:
    """A visibility in words, for `memfuse show`."""
    admitted = audience(visibility)
    if admitted is None:
        return "everyone in the household"
    return "only " + visibility.split(":", 1)[1].replace(",", ", ")
