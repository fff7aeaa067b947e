"""Moments (`memory.moments`): which turns pair, how a turn is scored by its moments, and
the limits a reader's view puts on them — nothing after the reader's time, nothing from a
turn the reader may not see, nothing left of a forgotten turn, on disk or in memory.

Real stores under tmp_path with the hashed test embedder (texts sharing words are near), so
the moments are built by the store's own code; properties compare a view's moments with those
of a store that never held what the view may not read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.access import VisibleStore
from memory.embeddings import CachedEmbedder, SentenceTransformerEmbedder, text_key
from memory.models import Event, NodeKind
from memory.moments import MOMENT_GAP, MomentBuilder, moment_pairs, moment_text
from memory.store import MemoryStore
from memory.store_api import MemoryStoreAPI
from tests.support.embedders import HashEmbedder

T0 = datetime(2026, 5, 10, 19, 0)
TALK = "people:Gina,Jon"
WORDS = ["book", "flight", "dune", "lisbon", "sandworms", "novel", "plane", "tarts", "rain"]


def turn(
    event_id: str,
    seconds: float,
    who: str,
    text: str,
    *,
    place: str = "chat",
    visibility: str = TALK,
    modality: str = "dialogue",
) -> Event:
    return Event(
        event_id=event_id,
        timestamp=T0 + timedelta(seconds=seconds),
        device=f"chat_{who.lower()}",
        modality=modality,
        location=place,
        description=f"{who} said: {text}",
        characters=(who,),
        metadata={"visibility": visibility},
    )


EXCHANGE = [
    turn("g1", 0, "Gina", "which book should I take on my flight to Lisbon"),
    turn("j1", 30, "Jon", "definitely Dune, you will love the sandworms"),
    turn("g2", 60, "Gina", "great, thanks"),
]


def open_store(
    folder: Path, events: Sequence[Event], embedder: object | None = None
) -> MemoryStore:
    store = MemoryStore.open(folder, embedder=embedder or HashEmbedder(dim=128))
    store.add_events(list(events))
    return store


@pytest.fixture
def exchange(tmp_path: Path) -> Iterator[MemoryStore]:
    """On the default model (the bundled MiniLM): how near a reply is to a question about
    what it answers is a matter of meaning, which hashed words do not measure."""
    store = open_store(tmp_path / "talk", EXCHANGE, SentenceTransformerEmbedder())
    yield store
    store.close()


def unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


# --- which turns make a moment -------------------------------------------------------


def test_which_turns_make_a_moment() -> None:
    """Two consecutive dialogue turns at one place, close in time, seen by the same people."""
    later = MOMENT_GAP.total_seconds() + 61
    turns = [
        turn("a", 0, "Gina", "hello"),
        turn("sensor", 10, "Gina", "door opened", modality="environment"),  # not a turn
        turn("b", 30, "Jon", "hi"),
        turn("elsewhere", 40, "Jon", "kettle on", place="kitchen"),
        turn("aside", 50, "Gina", "note to self", visibility="private:Gina"),
        turn("c", 60, "Jon", "how was the trip"),
        turn("d", 60 + later, "Gina", "lovely"),  # after the gap
        turn("e", 90 + later, "Jon", "good"),
    ]
    visibility = {t.event_id: t.metadata["visibility"] for t in turns}
    pairs = [(b.event_id, a.event_id) for b, a in moment_pairs(turns, visibility.__getitem__)]
    # the sensor reading is no turn; the kitchen is another place; "aside" is seen by Gina
    # alone: it pairs with neither neighbour, which stay consecutive for those who see them;
    # c and d are further apart than the gap
    assert pairs == [("a", "b"), ("b", "c"), ("d", "e")]


def test_a_turn_scores_the_mean_of_its_own_cosine_and_its_two_moments() -> None:
    """Hand-set vectors: each moment text gets its own direction."""
    directions = {
        moment_text(EXCHANGE[0], EXCHANGE[1]): unit(np.array([0.0, 1.0, 0.0])),
        moment_text(EXCHANGE[1], EXCHANGE[2]): unit(np.array([0.0, 0.0, 1.0])),
    }
    own = {
        "g1": unit(np.array([1.0, 0.0, 0.0])),
        "j1": unit(np.array([1.0, 1.0, 0.0])),
        "g2": unit(np.array([1.0, 0.0, 1.0])),
    }
    builder = MomentBuilder(lambda texts: np.stack([directions[t] for t in texts]))
    moments = builder.build(EXCHANGE, lambda _: TALK, lambda ids: np.stack([own[i] for i in ids]))
    query = unit(np.array([0.2, 0.9, 0.3]))
    scores = moments.cosines(query, ["g1", "j1", "g2", "unknown"], None)
    first, second = directions.values()
    assert set(scores) == {"g1", "j1", "g2"}  # an id without a moment has no moment score
    assert scores["g1"] == pytest.approx((own["g1"] @ query * 2 + first @ query) / 3, abs=1e-6)
    assert scores["j1"] == pytest.approx((own["j1"] + first + second) @ query / 3, abs=1e-6)
    assert scores["g2"] == pytest.approx((own["g2"] @ query * 2 + second @ query) / 3, abs=1e-6)
    # a reader asking between j1 and g2 reads j1 without its moment with g2
    between = T0 + timedelta(seconds=45)
    early = moments.cosines(query, ["j1"], between)
    assert early["j1"] == pytest.approx((own["j1"] * 2 + first) @ query / 3, abs=1e-6)


# --- a reader's limits ---------------------------------------------------------------


conversations = st.lists(
    st.tuples(
        st.integers(0, 400),  # seconds after the turn before
        st.sampled_from(["Gina", "Jon"]),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
        st.booleans(),  # an aside only its speaker may see
    ),
    min_size=2,
    max_size=7,
)


def as_turns(drawn: list[tuple[int, str, list[str], bool]]) -> list[Event]:
    turns, clock = [], 0
    for index, (gap, who, words, aside) in enumerate(drawn):
        clock += gap
        visibility = f"private:{who}" if aside else TALK
        turns.append(turn(f"t{index}", clock, who, " ".join(words), visibility=visibility))
    return turns


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(drawn=conversations, cut=st.integers(0, 2400), query=st.sampled_from(WORDS))
def test_a_reader_sees_the_moments_of_a_memory_that_holds_only_what_they_may_read(
    tmp_path_factory: pytest.TempPathFactory,
    drawn: list[tuple[int, str, list[str], bool]],
    cut: int,
    query: str,
) -> None:
    """Property: Jon asking at a random time reads the moments (the ranking by them and each
    event's score) a store would give him that never held a turn after that time nor Gina's
    asides — a moment with a later turn never counts, and none carries words he may not
    read."""
    turns = as_turns(drawn)
    asked = T0 + timedelta(seconds=cut)
    his = {TALK, "private:Jon"}  # the conversation and his own asides
    readable = [t for t in turns if t.timestamp <= asked and t.metadata["visibility"] in his]
    folder = tmp_path_factory.mktemp("moments")
    with (
        open_store(folder / "all", turns) as whole,
        open_store(folder / "readable", readable) as only,
    ):
        view = VisibleStore(whole, "Jon", as_of=asked)
        vector = whole.embed_query(query)
        everything = len(turns)  # every hit, so near-ties cannot reorder what is compared
        seen = read_ranking(view, vector, everything)
        assert seen == pytest.approx(read_ranking(only, vector, everything), abs=1e-6)
        ids = [t.event_id for t in readable]
        assert read_scores(view, vector, ids) == pytest.approx(
            read_scores(only, vector, ids), abs=1e-6
        )


def read_ranking(store: MemoryStoreAPI, vector: np.ndarray, n: int) -> dict[str, float]:
    """The ranking by moments, or the plain dense one where the memory holds no moment (as
    the search reads them: `memory.search.seeds.dense_list`)."""
    return dict(store.moment_search(vector, n) or store.dense_search(vector, n, NodeKind.EVENT))


def read_scores(store: MemoryStoreAPI, vector: np.ndarray, ids: list[str]) -> dict[str, float]:
    """Each event's score read by its moments: a turn's moment score, else its cosine."""
    own = dict(zip(ids, (float(c) for c in store.vectors(ids) @ vector))) if ids else {}
    return own | store.moment_cosines(vector, ids)


def test_forgetting_a_turn_leaves_no_moment_of_it_and_none_was_ever_cached(
    tmp_path: Path,
) -> None:
    """The store's embedding cache holds the turns' own texts, never a moment's (it quotes
    two turns); after a forget the moments are those of a memory that never held the turn."""
    cache = CachedEmbedder(HashEmbedder(dim=128), tmp_path / "cache.sqlite")
    with open_store(tmp_path / "talk", EXCHANGE, cache) as store:
        assert len(store.moments()) == 3
        with store.transaction():
            store.forget_events(["j1"])
        assert not any("j1" in pair for pair in store._moment_builder.held)  # gone at once
        vector = store.embed_query("flight")
        with open_store(tmp_path / "never", [EXCHANGE[0], EXCHANGE[2]]) as never:
            assert store.moment_search(vector, 5) == never.moment_search(vector, 5)
        assert len(store.moments()) == 2  # g1 and g2 are now one moment
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        cached = {key for (key,) in db.execute("SELECT text_sha256 FROM embeddings")}
    assert text_key(EXCHANGE[0].index_text()) in cached  # the check can see a cached text
    moments = [moment_text(a, b) for a, b in pairwise(EXCHANGE)]
    assert not {text_key(m) for m in moments} & cached


def test_a_rebuild_embeds_only_the_new_moments(tmp_path: Path) -> None:
    embedder = HashEmbedder(dim=128)
    with open_store(tmp_path / "talk", EXCHANGE[:2], embedder) as store:
        store.moments()
        first = moment_text(EXCHANGE[0], EXCHANGE[1])
        assert embedder.texts.count(first) == 1
        store.add_events([EXCHANGE[2]])
        embedder.texts.clear()
        assert len(store.moments()) == 3
        assert embedder.texts == [moment_text(EXCHANGE[1], EXCHANGE[2])]
        embedder.texts.clear()
        store.moments()  # unchanged store: nothing built, nothing embedded
        assert embedder.texts == []


def test_a_reply_ranks_by_the_question_it_answers(exchange: MemoryStore) -> None:
    """Jon's reply shares no word with a question about Gina's flight reading; its moment
    with her question does."""
    vector = exchange.embed_query("what to read on the flight to Lisbon")
    plain = dict(exchange.dense_search(vector, 3))
    read = exchange.moment_cosines(vector, ["j1"])
    assert plain["j1"] < read["j1"]
    assert [i for i, _ in exchange.moment_search(vector, 3)][:2] == ["g1", "j1"]
    assert [i for i, _ in exchange.dense_search(vector, 3)][:2] != ["g1", "j1"]
