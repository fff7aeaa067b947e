"""A LangGraph `BaseStore` whose every operation is an HTTP call to a served store
(`langgraph_sdk`'s store API), so the store behaviour suite can run against `langgraph dev`
exactly as it runs in-process."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import httpx
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)


def _fields(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "namespace": tuple(data["namespace"]),
        "key": data["key"],
        "value": data["value"],
        "created_at": datetime.fromisoformat(data["created_at"]),
        "updated_at": datetime.fromisoformat(data["updated_at"]),
    }


class HttpStore(BaseStore):
    """The served store, through a `langgraph_sdk` sync client."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        store = self.client.store
        if isinstance(op, GetOp):
            try:
                data = store.get_item(list(op.namespace), op.key)
            except httpx.HTTPStatusError as exc:
                if exc.response.status_code == 404:
                    return None
                raise
            return Item(**_fields(data)) if data else None
        if isinstance(op, PutOp):
            if op.value is None:
                store.delete_item(list(op.namespace), op.key)
            else:
                store.put_item(list(op.namespace), op.key, dict(op.value))
            return None
        if isinstance(op, SearchOp):
            found = store.search_items(
                list(op.namespace_prefix),
                filter=op.filter,
                limit=op.limit,
                offset=op.offset,
                query=op.query,
            )
            return [SearchItem(**_fields(d), score=d.get("score")) for d in found["items"]]
        if isinstance(op, ListNamespacesOp):
            conditions = {c.match_type: list(c.path) for c in op.match_conditions or ()}
            listed = store.list_namespaces(
                prefix=conditions.get("prefix"),
                suffix=conditions.get("suffix"),
                max_depth=op.max_depth,
                limit=op.limit,
                offset=op.offset,
            )
            return [tuple(ns) for ns in listed["namespaces"]]
        raise TypeError(f"unknown store operation {type(op).__name__}")
