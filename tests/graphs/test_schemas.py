"""What LangGraph Studio shows of each served graph: the input, output and context JSON
schemas of the compiled graphs (as `langgraph dev` computes them). Every field says what it
is, and the context form holds only plain fields a browser can fill in and send as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eval.synth.graph.graph import graph as synthesis_graph
from eval.verify.graph.graph import graph as verification_graph
from graphs.answer.graph import graph as answer_graph
from graphs.fusion.graph import graph as fusion_graph
from graphs.retrieval.graph import graph as retrieval_graph

REPO = Path(__file__).resolve().parents[2]
GRAPHS = {
    "fusion": fusion_graph,
    "retrieval": retrieval_graph,
    "answer": answer_graph,
    "synthesis": synthesis_graph,
    "verification": verification_graph,
}
JSON_TYPES = {"string", "integer", "number", "boolean", "null", "array", "object"}
PYTHON_ONLY = {"store", "lm", "settings", "reader", "program", "generators"}


def schemas(graph: Any) -> dict[str, dict[str, Any]]:
    return {
        "input": graph.get_input_jsonschema(),
        "output": graph.get_output_jsonschema(),
        "context": graph.get_context_jsonschema(),
    }


def json_types(prop: dict[str, Any]) -> set[str]:
    """The JSON types a property may take (an `anyOf` of plain types, or one type)."""
    options = prop.get("anyOf", [prop])
    return {option.get("type", "?") for option in options}


def test_langgraph_json_serves_these_graphs() -> None:
    spec = json.loads((REPO / "langgraph.json").read_text())
    assert set(spec["graphs"]) == set(GRAPHS)
    assert spec["env"] == ".env"
    for target in spec["graphs"].values():
        assert (REPO / target.partition(":")[0]).is_file()


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_every_field_has_a_description(name: str) -> None:
    for kind, schema in schemas(GRAPHS[name]).items():
        properties = schema["properties"]
        assert properties, f"{name} {kind}: no fields"
        missing = [field for field, prop in properties.items() if not prop.get("description")]
        assert not missing, f"{name} {kind} fields without a description: {missing}"


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_the_context_form_holds_plain_json_fields_only(name: str) -> None:
    context = schemas(GRAPHS[name])["context"]
    properties = context["properties"]
    assert not PYTHON_ONLY & set(properties), "a live object is shown as a form field"
    for field, prop in properties.items():
        assert json_types(prop) <= JSON_TYPES, f"{name} context {field!r}: {prop}"
    assert "$defs" not in context  # nothing nested that a form could not render
    assert {"data_dir", "namespace", "policy"} <= set(properties)
    assert properties["policy"]["enum"] == ["auto", "offline", "llm"]


def test_the_answer_graph_returns_the_retrieval_output_and_more() -> None:
    retrieval = schemas(retrieval_graph)["output"]["properties"]
    answer = schemas(answer_graph)["output"]["properties"]
    assert set(answer) == set(retrieval) | {"answer", "note", "reader_error"}
    assert schemas(answer_graph)["input"] == schemas(retrieval_graph)["input"]
