"""The rule validator: one violation rejects the whole fusion plan.

The agent proposes, the validator disposes. Rules (each yields a one-line violation):

- the plan has 1..`max_operations` operations;
- every id exists and was *visible* to the agent: a candidate, a search or look-up result,
  a member shown by `get_pack_members`, or the current event — never an invented id;
- every operation but `remove_member` involves the current event, so two old memories are
  never connected; no self-loop; no edge that already exists or is repeated in the plan;
- causal edges join two atomic events and point forward in time (cause not later than effect);
- fused ids are real fused nodes; a fused node is updated at most once per plan and not when
  the current event already belongs to it; a new pack must not copy an existing one;
- `remove_member` only on a pack inspected in this trajectory, never on a singleton, at most
  `max_removals_per_op` ids, each shown by the look-up and still a member, never the current
  event, leaving at least one member;
- no pack grows beyond `max_pack_size` (removals earlier in the same plan make room);
- every summary a create/update/remove requires is present, non-trivial and English.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from memory.errors import MemFuseError
from memory.fusion.ops import (
    CreateEdge,
    CreateFusionNode,
    FusionPlan,
    NoOp,
    RemoveMember,
    UpdateFusionNode,
)
from memory.models import EdgeType, is_fused_id
from memory.store_api import MemoryStoreAPI


class FusionLimits(BaseModel):
    """Structural limits of a plan.

    The paper's Table 4 (fixed parameters) did not survive the text conversion, so the pack
    size is our choice: 12 members keeps a pack one concrete scene while leaving room for a
    multi-device observation of several minutes.
    """

    model_config = ConfigDict(frozen=True)

    max_pack_size: int = Field(default=12, ge=2, description="Members a fused node may hold.")
    max_removals_per_op: int = Field(default=3, ge=1, description="Ids one remove_member may drop.")
    max_operations: int = Field(default=6, ge=1, description="Operations one plan may hold.")
    min_summary_chars: int = Field(default=12, ge=1, description="Shorter summaries are rejected.")
    max_summary_chars: int = Field(
        default=1500, ge=50, description="Longer summaries are rejected."
    )


_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_ENGLISH_GLUE = frozenset(
    {
        "the",
        "a",
        "an",
        "and",
        "of",
        "on",
        "in",
        "at",
        "to",
        "with",
        "from",
        "is",
        "was",
        "were",
        "are",
        "for",
        "by",
        "after",
        "before",
        "then",
        "while",
    }
)


def summary_problem(summary: str, limits: FusionLimits) -> str | None:
    """Why a summary is unacceptable, or None.

    "English" is checked cheaply: at least 90% of the letters are ASCII, and a summary of five
    or more words uses at least one English function word (so Spanish or French prose fails).
    """
    text = summary.strip()
    if not text:
        return "summary is missing"
    if len(text) < limits.min_summary_chars:
        return f"summary is too short ({len(text)} < {limits.min_summary_chars} chars)"
    if len(text) > limits.max_summary_chars:
        return f"summary is too long ({len(text)} > {limits.max_summary_chars} chars)"
    letters = _LETTER.findall(text)
    ascii_share = sum(ch.isascii() for ch in letters) / max(len(letters), 1)
    words = [w.lower() for w in _LATIN_WORD.findall(text)]
    if ascii_share < 0.9 or len(words) < 2:
        return "summary is not English"
    if len(words) >= 5 and _ENGLISH_GLUE.isdisjoint(words) and "a" not in text.lower().split():
        return "summary is not English"
    return None


def _inspected_map(
    store: MemoryStoreAPI, inspected: Mapping[str, Sequence[str]] | Collection[str]
) -> dict[str, set[str]]:
    """Accept {fused_id: shown member ids} or a bare collection of inspected fused ids."""
    if isinstance(inspected, Mapping):
        return {fid: set(ids) for fid, ids in inspected.items()}
    out: dict[str, set[str]] = {}
    for fid in inspected:
        out[fid] = set(store.get_fused(fid).members) if store.has_node(fid) else set()
    return out


class _Checker:
    """Walks the plan in order, tracking the pack sizes the plan itself changes."""

    def __init__(
        self,
        store: MemoryStoreAPI,
        current_id: str,
        visible: set[str],
        inspected: dict[str, set[str]],
        limits: FusionLimits,
    ):
        self.store = store
        self.current = current_id
        self.visible = visible
        self.inspected = inspected
        self.limits = limits
        self.violations: list[str] = []
        self.members: dict[str, set[str]] = {}  # fused id -> members as the plan leaves them
        self.updated: set[str] = set()
        self.edge_keys: set[tuple[str, str, str]] = set()

    def fail(self, index: int, op: str, problem: str) -> None:
        self.violations.append(f"op {index} ({op}): {problem}")

    def pack(self, fused_id: str) -> set[str]:
        if fused_id not in self.members:
            self.members[fused_id] = set(self.store.get_fused(fused_id).members)
        return self.members[fused_id]

    def known_visible(self, i: int, op: str, node_id: str) -> bool:
        if node_id != self.current and node_id not in self.visible:
            self.fail(i, op, f"id {node_id!r} was not shown to the agent (invented or unseen)")
            return False
        if not self.store.has_node(node_id):
            self.fail(i, op, f"id {node_id!r} does not exist")
            return False
        return True

    def fused(self, i: int, op: str, fused_id: str) -> bool:
        if not is_fused_id(fused_id):
            self.fail(i, op, f"{fused_id!r} is not a fused node id")
            return False
        return self.known_visible(i, op, fused_id)

    def summary(self, i: int, op: str, text: str) -> None:
        problem = summary_problem(text, self.limits)
        if problem:
            self.fail(i, op, problem)

    # --- one method per operation ---
    def create_edge(self, i: int, o: CreateEdge) -> None:
        src, dst = o.endpoints(self.current)
        if self.current not in (src, dst):
            self.fail(i, o.op, f"connects two old memories {src!r} and {dst!r}")
            return
        if src == dst:
            self.fail(i, o.op, f"self-loop on {src!r}")
            return
        other = dst if src == self.current else src
        if not self.known_visible(i, o.op, other):
            return
        etype = EdgeType(o.edge_type)
        if etype == EdgeType.CAUSAL:
            if is_fused_id(other):
                self.fail(i, o.op, f"causal edges join two events; {other!r} is a fused node")
                return
            if self.store.get_event(src).timestamp > self.store.get_event(dst).timestamp:
                self.fail(
                    i, o.op, f"causal edge points back in time ({src!r} is later than {dst!r})"
                )
                return
        low, high = sorted((src, dst))
        key = (src, dst, etype.value) if etype == EdgeType.CAUSAL else (low, high, etype.value)
        exists = self.store.has_edge(src, dst, etype) or (
            etype == EdgeType.SEMANTIC and self.store.has_edge(dst, src, etype)
        )
        if exists or key in self.edge_keys:
            self.fail(i, o.op, f"{etype.value} edge {src!r} -> {dst!r} already exists")
        self.edge_keys.add(key)

    def create_fusion_node(self, i: int, o: CreateFusionNode) -> None:
        others = o.others(self.current)
        if not others:
            self.fail(
                i, o.op, "a new fused node needs at least one member besides the current event"
            )
        if len(o.member_ids) != len(set(o.member_ids)):
            self.fail(i, o.op, "member_ids repeat an id")
        for mid in others:
            if is_fused_id(mid):
                self.fail(i, o.op, f"member {mid!r} is a fused node; members are events")
            else:
                self.known_visible(i, o.op, mid)
        size = len(others) + 1
        if size > self.limits.max_pack_size:
            self.fail(i, o.op, f"pack of {size} exceeds the maximum of {self.limits.max_pack_size}")
        self.summary(i, o.op, o.summary)
        wanted = {*others, self.current}
        if others and all(self.store.has_node(m) for m in others):
            for fid in self.store.fused_of(others[0]):
                if set(self.store.get_fused(fid).members) == wanted:
                    self.fail(i, o.op, f"fused node {fid!r} already has exactly these members")

    def update_fusion_node(self, i: int, o: UpdateFusionNode) -> None:
        if not self.fused(i, o.op, o.fused_id):
            return
        if o.fused_id in self.updated:
            self.fail(i, o.op, f"{o.fused_id!r} is updated twice in one plan")
        self.updated.add(o.fused_id)
        members = self.pack(o.fused_id)
        if self.current in members:
            self.fail(i, o.op, f"the current event already belongs to {o.fused_id!r}")
        elif len(members) + 1 > self.limits.max_pack_size:
            self.fail(
                i,
                o.op,
                f"{o.fused_id!r} is full ({len(members)} of {self.limits.max_pack_size} members)",
            )
        members.add(self.current)
        self.summary(i, o.op, o.summary)

    def remove_member(self, i: int, o: RemoveMember) -> None:
        if not self.fused(i, o.op, o.fused_id):
            return
        members = self.pack(o.fused_id)
        if len(members) <= 1:
            self.fail(i, o.op, f"{o.fused_id!r} is a singleton pack; removing would empty it")
            return
        if o.fused_id not in self.inspected:
            self.fail(i, o.op, f"{o.fused_id!r} was not inspected with get_pack_members")
            return
        ids = list(dict.fromkeys(o.member_ids))
        if not ids:
            self.fail(i, o.op, "no member ids to remove")
        if len(ids) > self.limits.max_removals_per_op:
            self.fail(
                i,
                o.op,
                f"{len(ids)} removals exceed the limit of {self.limits.max_removals_per_op}",
            )
        for mid in ids:
            if mid == self.current:
                self.fail(i, o.op, "the current event cannot be removed")
            elif mid not in self.inspected[o.fused_id]:
                self.fail(i, o.op, f"{mid!r} was not shown by the look-up of {o.fused_id!r}")
            elif mid not in members:
                self.fail(i, o.op, f"{mid!r} is not a member of {o.fused_id!r}")
        if not members - set(ids):
            self.fail(i, o.op, f"removal would leave {o.fused_id!r} without members")
        members.difference_update(ids)
        self.summary(i, o.op, o.summary)


def validate_plan(
    store: MemoryStoreAPI,
    plan: FusionPlan,
    current_event_id: str,
    visible_ids: Iterable[str],
    inspected_packs: Mapping[str, Sequence[str]] | Collection[str] = (),
    limits: FusionLimits | None = None,
) -> list[str]:
    """Every rule the plan breaks, in plan order; an empty list means the plan may be committed.

    `visible_ids`: ids shown to the agent (candidates, search results); `inspected_packs`:
    fused ids looked up with get_pack_members, mapped to the member ids the look-up showed.
    """
    limits = limits or FusionLimits()
    if not store.has_node(current_event_id) or is_fused_id(current_event_id):
        return [f"current event {current_event_id!r} is not a stored event"]
    inspected = _inspected_map(store, inspected_packs)
    visible = set(visible_ids) | set(inspected)
    for ids in inspected.values():
        visible |= ids
    checker = _Checker(store, current_event_id, visible, inspected, limits)
    n = len(plan.operations)
    if n == 0:
        checker.violations.append("plan has no operations (use no_op to keep the event atomic)")
    if n > limits.max_operations:
        checker.violations.append(f"plan has {n} operations; at most {limits.max_operations}")
    for i, o in enumerate(plan.operations):
        try:
            if isinstance(o, CreateEdge):
                checker.create_edge(i, o)
            elif isinstance(o, CreateFusionNode):
                checker.create_fusion_node(i, o)
            elif isinstance(o, UpdateFusionNode):
                checker.update_fusion_node(i, o)
            elif isinstance(o, RemoveMember):
                checker.remove_member(i, o)
            elif not isinstance(o, NoOp):  # pragma: no cover - the union is closed
                checker.fail(i, type(o).__name__, "unknown operation")
        except MemFuseError as exc:  # a lookup failed although has_node said yes: still a rejection
            checker.fail(i, o.op, str(exc))
    return checker.violations
