"""`TrustedBuilder` builds what `model_construct` builds: same fields in the same order, same
fields set, fresh mutable defaults, and it refuses models it cannot build the same way."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from memory.fusion.candidates import CandidateConfig, CandidateRecord
from memory.models import NodeKind
from memory.trusted import TrustedBuilder


class _Plain(BaseModel):
    name: str
    count: int = 3
    tags: list[str] = Field(default_factory=list)
    shared: list[int] = [1, 2]  # a mutable plain default: pydantic copies it per model
    when: datetime | None = None


def _same(built: BaseModel, constructed: BaseModel) -> None:
    assert type(built) is type(constructed)
    assert list(built.__dict__.items()) == list(constructed.__dict__.items())
    assert built.model_fields_set == constructed.model_fields_set
    assert built == constructed
    assert built.model_dump_json() == constructed.model_dump_json()


_PLAIN_VALUES = st.fixed_dictionaries(
    {"name": st.text(max_size=5)},
    optional={
        "count": st.integers(),
        "tags": st.lists(st.text(max_size=3), max_size=3),
        "shared": st.lists(st.integers(), max_size=3),
        "when": st.none() | st.datetimes(),
        "ignored": st.integers(),  # not a field: model_construct drops it, and so must we
    },
)


@given(_PLAIN_VALUES)
def test_a_plain_model_is_built_as_model_construct_builds_it(values: dict[str, Any]) -> None:
    _same(TrustedBuilder(_Plain)(**values), _Plain.model_construct(**values))


class _Flat(BaseModel):
    """No default needs a copy: built from the field-ordered template."""

    name: str
    count: int = 3
    when: datetime | None = None
    label: str = "x"


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.text(max_size=5),  # required: left out, the builder must leave it out
            "count": st.integers(),
            "when": st.none() | st.datetimes(),
            "label": st.text(max_size=3),
            "ignored": st.integers(),
        },
    )
)
def test_a_model_without_copied_defaults_is_built_as_model_construct_builds_it(
    values: dict[str, Any],
) -> None:
    _same(TrustedBuilder(_Flat)(**values), _Flat.model_construct(**values))


@given(
    st.fixed_dictionaries(
        {
            "node_id": st.text(min_size=1, max_size=6),
            "kind": st.sampled_from(list(NodeKind)),
            "timestamp": st.datetimes(),
            "text": st.text(max_size=10),
        },
        optional={
            "similarity": st.floats(allow_nan=False),
            "devices": st.tuples(st.text(max_size=3)),
            "member_count": st.integers(min_value=0),
            "found_by": st.tuples(st.sampled_from(["dense", "same_moment"])),
        },
    )
)
def test_candidate_records_are_built_as_model_construct_builds_them(values: dict[str, Any]) -> None:
    _same(TrustedBuilder(CandidateRecord)(**values), CandidateRecord.model_construct(**values))


def test_a_model_of_defaults_only_is_built_as_model_construct_builds_it() -> None:
    _same(TrustedBuilder(CandidateConfig)(), CandidateConfig.model_construct())


def test_mutable_defaults_are_fresh_for_every_model() -> None:
    build = TrustedBuilder(_Plain)
    first, second = build(name="a"), build(name="b")
    first.tags.append("x")
    first.shared.append(3)
    assert second.tags == [] and second.shared == [1, 2]
    assert _Plain.model_fields["shared"].default == [1, 2]


def test_a_missing_required_field_is_left_out_as_model_construct_leaves_it() -> None:
    built = TrustedBuilder(_Plain)(count=1)
    assert "name" not in built.__dict__
    assert built.__dict__ == _Plain.model_construct(count=1).__dict__


class _Aliased(BaseModel):
    value: int = Field(alias="v")


class _Private(BaseModel):
    value: int = 0
    _cache: dict[str, int] = PrivateAttr(default_factory=dict)


class _Extra(BaseModel):
    model_config = ConfigDict(extra="allow")
    value: int = 0


class _PostInit(BaseModel):
    value: int = 0

    def model_post_init(self, context: Any, /) -> None:
        pass


@pytest.mark.parametrize("model", [_Aliased, _Private, _Extra, _PostInit])
def test_models_it_cannot_build_the_same_way_are_refused(model: type[BaseModel]) -> None:
    with pytest.raises(TypeError):
        TrustedBuilder(model)
