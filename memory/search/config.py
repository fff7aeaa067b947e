"""The search recipe: every knob of one search call, with the paper's values as defaults.

Baselines and ablations are recipes (named constants at the bottom), not forks of
the engine: the engine reads the config and hard-wires nothing.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class PathPriors(BaseModel):
    """π(path): a small bonus by how a candidate was reached (paper, Appendix C)."""

    model_config = ConfigDict(frozen=True)

    seed: float = Field(default=0.08, description="Direct seed.")
    time_window: float = Field(default=0.06, description="Hit of a confident time window.")
    causal: float = Field(default=0.04, description="Reached through a causal path.")
    membership: float = Field(
        default=0.03, description="Reached through a belong (membership) path."
    )
    semantic: float = Field(default=0.01, description="Reached through a semantic path.")
    temporal_neighbor: float = Field(
        default=0.04,
        description="Pulled in as a temporal neighbour of a top hit (not in the paper; set like a "
        "causal hop because same-source adjacency is the weakest form of causal proximity).",
    )

    def value(self, kind: str) -> float:
        return float(getattr(self, kind))


class PackWeights(BaseModel):
    """s_pack(v) = summary·s_v + max·max_j s_j + top3·MeanTop3_j s_j + hop·β^h."""

    model_config = ConfigDict(frozen=True)

    summary: float = 0.40
    max_member: float = 0.35
    mean_top3: float = 0.15
    hop: float = 0.10


class ContextBudget(BaseModel):
    """What the reader gets (paper, Appendix C)."""

    model_config = ConfigDict(frozen=True)

    entries: int = Field(default=20, ge=1, description="Atomic events in the context.")
    max_fused: int = Field(default=3, ge=0, description="Fused nodes that may contribute.")
    max_members: int = Field(
        default=10, ge=1, description="Member events per contributing fused node."
    )
    max_chars: int = Field(
        default=128_000, ge=100, description="Character cap on the whole context."
    )
    include_summaries: bool = Field(default=True, description="Show fused summaries as entries.")
    summaries_take_entries: bool = Field(
        default=False,
        description="A fused summary uses one of the `entries` (the paper) instead of coming on "
        "top of them (at most `max_fused` extra lines). Off by default: three summaries then "
        "pushed three events out of a context compared with the baselines' k events "
        "(evidence recall 0.402 with vs 0.422 without on the generated benchmark).",
    )


class GuardConfig(BaseModel):
    """The share of the final slots kept for the unconstrained (hybrid) ranking.

    See `memory.search.guard`: whatever a plan asks for, the plain question's best
    hybrid hits keep these slots, so a wrong plan cannot make the context much worse
    than the `hybrid` baseline.
    """

    model_config = ConfigDict(frozen=True)

    enabled: bool = Field(default=True, description="Reserve slots for the unconstrained ranking.")
    depth: int = Field(
        default=30,
        ge=1,
        description="Hits per unconstrained list (dense, and BM25L when `lexical`, over the "
        "asker's words).",
    )
    lexical: bool = Field(
        default=True,
        description="Rank the reserved slots by the `hybrid` baseline's fusion of the dense and "
        "BM25L lists; off, by the dense list alone (the `naive_rag` baseline's). On: on the "
        "maintainers' held-out conversational benchmark hybrid beats naive_rag by 0.13 "
        "(dev/README.md), and these slots carry memfuse there. Off (the `memfuse_dense_guard` "
        "system) measured better on four of our five dev sources (`memfuse bench --suite "
        "--systems memfuse,memfuse_dense_guard`, recall@20, on → off: conversation_dev 0.715 → "
        "0.740, household_dev2 0.789 → 0.802, seed 7 0.422 → 0.432, seed 11 0.417 → 0.426) and "
        "worse on household_dev (0.862 → 0.843); kept on because the one large held-out source "
        "says the opposite, by far more.",
    )
    share_unconstrained: float = Field(
        default=0.6,
        ge=0.0,
        le=1.0,
        description="Reserved share when the plan applies no constraint (graph and fused packs "
        "compete for the rest).",
    )
    share_confident: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="Reserved share at constraint confidence 1.0 (linear in between).",
    )


class SearchConfig(BaseModel):
    """One declarative search recipe. Defaults are MemFuse's (the paper's parameters)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(default="memfuse", description="Recipe name shown in reports.")
    # seed retrieval
    use_dense: bool = Field(
        default=True, description="Dense retrieval for the focus query and rewrites."
    )
    use_bm25: bool = Field(default=True, description="BM25L retrieval for the lexical query.")
    use_temporal: bool = Field(
        default=True, description="Temporal retrieval inside a confident window."
    )
    use_rewrites: bool = Field(default=True, description="Also search the plan's rewrites (≤ 3).")
    use_constraints: bool = Field(
        default=True, description="Honour time window / coverage / neighbours / timeline."
    )
    dense_per_query: int = Field(
        default=10, ge=1, description="Dense hits per query (≤ 10 in the paper)."
    )
    pack_seeds: int = Field(
        default=5,
        ge=0,
        description="Fused summaries nearest the focus query, ranked as a seed list of their "
        "own (`dense:packs`; with `use_fused`). The question's and rewrites' dense lists hold "
        "events only: sharing one ranking, packs took 4-6 of each query's 10 places and the "
        "rewrites voted them over atomic evidence. 5 against 10 and 0 on the five dev sources: "
        "0 lost up to 0.014 recall, 10 moved each by under 0.006 either way.",
    )
    bm25_top: int = Field(default=30, ge=1, description="BM25L hits kept for fusion.")
    common_word_share: float | None = Field(
        default=0.4,
        gt=0.0,
        le=1.0,
        description="Words found in more than this share of the memory's records say nothing "
        "about which record is meant — in a conversation each speaker's name is in every turn "
        "they said. (1) In every BM25L list (the plan's and the guard's) an event that shares "
        'with the query only such words is no hit: "Diego said: which one" and "Diego said: '
        'PASSED" matched "which restaurant did Diego quit?" by the name alone and, being '
        "short, headed the list, which fuses by rank level with the best dense hit (a query "
        "whose words are all that common keeps every hit; one whose other words no record "
        "holds keeps none: keeping every hit then too, the conversations read 0.811). (2) The "
        "plan's rewrites lose them "
        '(`seeds.without_common_words`): "Sam series watch" sat nearest to every turn Sam '
        "said. `memfuse bench --suite`, recall@20, none → (1) → (1)+(2): conversation_dev "
        "0.786 → 0.798 → 0.820, seed 11 0.463 → 0.464 → 0.468, seed 7 0.454 → 0.454 → 0.452, "
        "household_dev and household_dev2 the same throughout (0.899, 0.830); measured at "
        "0.35, and 0.4 (the default) read the same on all five. Set mid-way between two "
        "cliffs (both parts, the recipes patched for the run): at 0.25 the households fell to "
        "0.874 and 0.820 (a child named in over a quarter of the records, whose own watch logs "
        "are evidence), at 0.5 the conversations to 0.814; 0.45 read as 0.35 on the "
        "households and the conversations. None = neither (the baselines: plain BM25L and no "
        "rewrites; part (1) on `hybrid` too, at 0.2 and applied after the top n, lifted it on "
        "the conversations from 0.665 to 0.733).",
    )
    time_window_quota: int = Field(
        default=10, ge=1, description="Temporal seeds when the plan gives none."
    )
    window_list_weight: float = Field(
        default=3.0,
        ge=0.0,
        description="RRF weight of the time window's list when the plan asks for more of the "
        "window's events than `time_window_quota` (a question about what happened over the "
        "window: a count, a summary, a sequence). The dense lists are the question and its "
        "rewrites, near-copies of one query that vote together, so with one vote the window's "
        "list loses its events to what the rewrites agree on (seed 7, 'on how many days over "
        "the past week…': all seven gold days in the window list's top 14, four of them at "
        "RRF ranks 33-43, past the pool). 1 = an equal vote.",
    )
    temporal_neighbor_keep: int = Field(
        default=6, ge=1, description="Neighbours kept when the plan gives none."
    )
    hub_penalty: float = Field(
        default=0.5,
        ge=0.0,
        description="α in q − α·c: the share of the memory's mean event vector c taken out of "
        "every query vector before the dense lists and the scores read it, so an event ranks "
        "by what it says beyond what every event of the memory says. Without it the events "
        'that say least ride on the shared part: in a conversation "Diego said: which one" '
        'was the nearest turn to "which restaurant did Diego quit?". On the five dev sources '
        "(`memfuse bench --suite`) 0.5 raised memfuse on the conversations by 0.030 and on "
        "household_dev2 by 0.018, the rest by 0 to 0.006; against it 0.3, 0.7 and 1.0 each "
        "lost on one or two sources. 0 = plain cosine.",
    )
    rrf_k: int = Field(default=60, ge=1, description="RRF constant in 1/(k + rank).")
    seed_pool: int = Field(
        default=20,
        ge=1,
        description="Best positive seeds kept (paper: 30; 20 won `memfuse optimize --target "
        "planner --optimizer grid` on MemFuseBench, see programs/planner_policy.manifest.json).",
    )
    constraint_confidence: float = Field(
        default=0.6, ge=0.0, le=1.0, description="Min confidence to apply a constraint."
    )
    guard: GuardConfig = Field(default_factory=GuardConfig)
    # graph expansion
    use_graph: bool = Field(default=True, description="Expand seeds along typed edges.")
    use_fused: bool = Field(
        default=True, description="Let fused nodes seed, expand and enter the context."
    )
    use_moments: bool = Field(
        default=True,
        description="Read dialogue turns with the turns around them (`memory.moments`): each "
        "query's dense list, the guard's lists (one more: the question's dense hits read so) "
        "and every candidate's cosine score a turn by its moments. Fusion's second product, so "
        "off with it (`memfuse_no_fusion`); `memfuse_no_moments` turns it off alone. On → off "
        "(`memfuse bench --suite`, recall@20): conversation_dev 0.798 → 0.763, seed 11 0.464 → "
        "0.460, seed 7, household_dev and household_dev2 the same (0.454, 0.899, 0.830). "
        "With the guard's plain dense list replaced by the moment-read one (not kept beside "
        "it) the conversations read 0.754 (temporary patch, before `common_word_share`).",
    )
    max_hops: int = Field(default=2, ge=0, description="Hop limit of the expansion.")
    semantic_leaves: bool = Field(
        default=True,
        description="A node reached over a semantic edge is a candidate, but the walk does not "
        "go on from it: causal chains are walked to `max_hops`, a semantic hop ends the path. "
        "Walking on from semantic neighbours read the links of every one of them for a second "
        "hop that found next to nothing: with this on, `memfuse bench --suite` changed memfuse's "
        "context on 37 of 891 questions and its recall on one (up, seed 7), and alternating "
        "`memfuse bench` runs on seed 7 / seed 11 read memfuse_no_ar's p95 10.7 and 13.7 / 11.2 "
        "and 14.4 ms before, 10.4 and 8.8 / 9.5 and 8.6 ms after.",
    )
    semantic_in_day_windows: bool = Field(
        default=False,
        description="Walk semantic edges also for a plan whose confident window lies within one "
        "day. Off: a question pinned to one day or part of one ('on Wednesday morning') walks "
        "none, as it walks no causal edge unless it asks for causes or effects "
        "(`CausalLinks`): a semantic neighbour is mostly the same kind of record at another "
        "time, news to a question over several days or with no time phrase, a step away from "
        "the one moment asked about. `memfuse bench --suite`, on → off: household_dev2 0.811 → "
        "0.825 (three questions up, causal and perspective), the other four sources' recall "
        "the same (contexts changed on 5, 6, 2 and 0 of their questions).",
    )
    semantic_threshold: float = Field(
        default=0.9,
        ge=0.0,
        le=1.0,
        description="Min weight of a walked semantic edge. Edges are still created at ρ_S = 0.8 "
        "(the paper), but most of those join events through shared boilerplate; walking only "
        "≥ 0.9 won the planner grid on the train scenarios and cut search p95 about threefold.",
    )
    fused_expansion_budget: int = Field(
        default=0,
        ge=0,
        description="Fused nodes whose members the expansion offers as candidates (one "
        "reverse-belong hop further). 0: none; members reach the context only through their "
        "pack's projection (`ContextBudget.max_fused`), behind the events that outscore it. "
        "`memfuse bench --suite`, 8 (the earlier default) → 0: memfuse 0.448 → 0.451, 0.459 → "
        "0.460, 0.899, 0.795 → 0.801, 0.748 (seed 7, seed 11, the two households, the "
        "conversations), memfuse_no_ar 0.436 → 0.441, 0.440 → 0.441, 0.886 → 0.892, 0.768 → "
        "0.802, 0.734; 2 and 4 fell between.",
    )
    max_expanded: int = Field(default=400, ge=1, description="Safety cap on expanded candidates.")
    # scoring
    beta: float = Field(default=0.7, gt=0.0, le=1.0, description="Graph-hop decay β.")
    rrf_weight: float = Field(default=2.0, ge=0.0, description="Weight of r_RRF in s(x).")
    date_boost: float = Field(
        default=0.6,
        description="b_date: bonus of a candidate inside the plan's confident time window (the "
        "paper's 0 relied on the window filtering seeds; here a window is a prior, never a "
        "filter). 0.6 won `memfuse optimize --target planner --optimizer grid` on the train "
        "scenarios (programs/planner_policy.manifest.json).",
    )
    priors: PathPriors = Field(default_factory=PathPriors)
    pack: PackWeights = Field(default_factory=PackWeights)
    rank_by: Literal["fusion_score", "rrf"] = Field(
        default="fusion_score",
        description="fusion_score: rank by s(x) / s_pack(v); rrf: rank by the seed RRF score alone "
        "(the lexical/dense/hybrid baselines, which must not be re-ordered by cosine or priors).",
    )
    # constraints (each applied only when the plan enables it at >= constraint_confidence)
    neighbor_anchors: int = Field(
        default=5, ge=1, description="Top atomic hits whose temporal neighbours are pulled."
    )
    coverage_depth: int = Field(
        default=3,
        ge=1,
        description="Diversification looks at the best coverage_depth × top_k ranked events.",
    )
    timeline_buckets: int = Field(
        default=10,
        ge=1,
        description="Time buckets whose best event gets a reserved slot in timeline mode.",
    )
    # output
    top_k: int = Field(default=20, ge=1, description="Events returned by one search.")
    context: ContextBudget = Field(default_factory=ContextBudget)

    def with_(self, **changes: object) -> SearchConfig:
        return self.model_copy(update=changes)

    def sized(self, k: int) -> SearchConfig:
        """The recipe returning k events into a context of k entries.

        Past the k its lists were sized for (`REFERENCE_K`, or its own `top_k` when deeper),
        the seed lists and the seed pool deepen in proportion, rounded up. The depths cap
        what a search can return: at k = 60 a 20-deep dense list gave `naive_rag` 20 events,
        a 30-deep pool gave `hybrid` 30 and memfuse about 33 on a 174-event household
        (`memfuse bench -k 60`). Up to that k nothing changes, so every figure measured at
        k = 20 stands; sizing twice for one k deepens once."""
        changes: dict[str, object] = {
            "top_k": k,
            "context": self.context.model_copy(update={"entries": k}),
        }
        sized_for = max(self.top_k, REFERENCE_K)
        if k > sized_for:

            def deeper(depth: int) -> int:
                return math.ceil(depth * k / sized_for)

            changes.update({name: deeper(getattr(self, name)) for name in DEPTHS})
            changes["guard"] = self.guard.model_copy(update={"depth": deeper(self.guard.depth)})
        return self.with_(**changes)


REFERENCE_K = 20
"""The k every recipe's list depths were set for (the benchmark's k and `top_k`'s default)."""
DEPTHS = ("dense_per_query", "bm25_top", "seed_pool")
"""The fields that bound how many events one search can return: deepened with k by `sized`
(and the guard's `depth`, which bounds what fills a plan's ranking that ran short)."""


# Named recipes — one line each on what they are.
MEMFUSE_DEFAULT = SearchConfig()  # the full engine: the paper's parameters, seed pool tuned
NAIVE_RAG = SearchConfig(  # dense top-k only: the "naive RAG" baseline
    name="naive_rag",
    use_moments=False,
    common_word_share=None,  # a baseline is plain BM25L
    hub_penalty=0.0,  # a baseline ranks by plain cosine
    use_bm25=False,
    use_temporal=False,
    use_rewrites=False,
    use_constraints=False,
    use_graph=False,
    use_fused=False,
    dense_per_query=20,
    rank_by="rrf",
    seed_pool=30,  # the baselines keep the paper's pool (only MemFuse's was tuned)
    guard=GuardConfig(enabled=False),  # a baseline is its own unconstrained ranking
)
BM25_ONLY = SearchConfig(  # lexical BM25L top-k only
    name="bm25",
    use_moments=False,
    common_word_share=None,  # a baseline is plain BM25L
    hub_penalty=0.0,  # a baseline ranks by plain cosine
    use_dense=False,
    use_temporal=False,
    use_rewrites=False,
    use_constraints=False,
    use_graph=False,
    use_fused=False,
    rank_by="rrf",
    seed_pool=30,  # the baselines keep the paper's pool (only MemFuse's was tuned)
    guard=GuardConfig(enabled=False),  # a baseline is its own unconstrained ranking
)
HYBRID_RRF = SearchConfig(  # dense + BM25L fused by RRF, no graph
    name="hybrid",
    use_moments=False,
    common_word_share=None,  # a baseline is plain BM25L
    hub_penalty=0.0,  # a baseline ranks by plain cosine
    use_temporal=False,
    use_rewrites=False,
    use_constraints=False,
    use_graph=False,
    use_fused=False,
    dense_per_query=30,
    rank_by="rrf",
    seed_pool=30,  # the baselines keep the paper's pool (only MemFuse's was tuned)
    guard=GuardConfig(enabled=False),  # a baseline is its own unconstrained ranking
)
MEMFUSE_NO_GRAPH = SearchConfig(name="memfuse_no_graph", use_graph=False)  # no edge traversal
MEMFUSE_NO_FUSION = SearchConfig(
    name="memfuse_no_fusion", use_fused=False, use_moments=False
)  # fused nodes and moments ignored, edges kept
MEMFUSE_NO_MOMENTS = SearchConfig(name="memfuse_no_moments", use_moments=False)  # packs only
MEMFUSE_DENSE_GUARD = SearchConfig(  # the guard's reserved slots ranked by dense hits alone
    name="memfuse_dense_guard", guard=GuardConfig(lexical=False)
)

RECIPES: dict[str, SearchConfig] = {
    r.name: r
    for r in (
        MEMFUSE_DEFAULT,
        NAIVE_RAG,
        BM25_ONLY,
        HYBRID_RRF,
        MEMFUSE_NO_GRAPH,
        MEMFUSE_NO_FUSION,
        MEMFUSE_NO_MOMENTS,
        MEMFUSE_DENSE_GUARD,
    )
}
