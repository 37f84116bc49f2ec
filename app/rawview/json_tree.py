"""A parsed record as a tree whose children are built when first asked for, and each node's JSONPath.

Why lazy: the Raw tab shows the selected record as a tree; a 200 KB tool result or a record with
thousands of members must show at once, so only the members of the nodes the user expands become
nodes (``JsonTree.nodes_built`` counts them, and the tests hold it to that).  Parsing is orjson's
(C, about a millisecond for 200 KB).

Paths are JSONPath as support tools write them: ``$.data.content[0].text``, with a member whose name
is not an identifier in brackets (``$['a b']``).

May import: orjson and the standard library.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

PREVIEW_CHARS = 200  # of a string value in the tree's value column (copy value gives all of it)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def json_path(keys: list[str | int] | tuple[str | int, ...]) -> str:
    """The JSONPath of the member reached through ``keys`` from the root (``$`` for the root)."""
    out = ["$"]
    for k in keys:
        if isinstance(k, int):
            out.append(f"[{k}]")
        elif _IDENTIFIER.match(k):
            out.append(f".{k}")
        else:
            escaped = k.replace("\\", "\\\\").replace("'", "\\'")
            out.append(f"['{escaped}']")
    return "".join(out)


class JsonNode:
    """One value of the record: its key in its parent, and its children once asked for."""

    __slots__ = ("_children", "key", "parent", "row", "tree", "value")

    def __init__(self, tree: JsonTree, parent: JsonNode | None, key: str | int | None, value: Any, row: int) -> None:
        self.tree = tree
        self.parent = parent
        self.key = key
        self.value = value
        self.row = row  # position among its parent's children
        self._children: list[JsonNode] | None = None
        tree.nodes_built += 1

    @property
    def is_container(self) -> bool:
        return isinstance(self.value, (dict, list))

    def child_count(self) -> int:
        """How many children it has (without building them)."""
        return len(self.value) if self.is_container else 0

    @property
    def children_built(self) -> bool:
        return self._children is not None

    def children(self) -> list[JsonNode]:
        if self._children is None:
            v = self.value
            items: Any = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
            self._children = [JsonNode(self.tree, self, k, item, i) for i, (k, item) in enumerate(items)]
        return self._children

    def child(self, i: int) -> JsonNode:
        return self.children()[i]

    def keys(self) -> list[str | int]:
        """The keys from the root down to this node."""
        out: list[str | int] = []
        node: JsonNode | None = self
        while node is not None and node.key is not None:
            out.append(node.key)
            node = node.parent
        out.reverse()
        return out

    def path(self) -> str:
        return json_path(self.keys())

    def key_text(self) -> str:
        if self.key is None:
            return "$"
        return f"[{self.key}]" if isinstance(self.key, int) else self.key

    def preview(self) -> str:
        """The value in one short line: a scalar as JSON, a container by its size."""
        v = self.value
        if isinstance(v, dict):
            return f"{{{len(v):,} key{'s' if len(v) != 1 else ''}}}"
        if isinstance(v, list):
            return f"[{len(v):,} item{'s' if len(v) != 1 else ''}]"
        if isinstance(v, str):
            head = v[:PREVIEW_CHARS].replace("\n", "⏎")
            return orjson.dumps(head).decode() + (f" … ({len(v):,} characters)" if len(v) > PREVIEW_CHARS else "")
        return orjson.dumps(v).decode()

    def type_name(self) -> str:
        v = self.value
        if isinstance(v, dict):
            return "object"
        if isinstance(v, list):
            return "array"
        if isinstance(v, str):
            return "string"
        if isinstance(v, bool):
            return "boolean"
        if v is None:
            return "null"
        return "number"

    def copy_text(self) -> str:
        """What "Copy value" puts on the clipboard: a string's text as is, anything else as (pretty) JSON."""
        v = self.value
        if isinstance(v, str):
            return v
        if isinstance(v, (dict, list)):
            return orjson.dumps(v, option=orjson.OPT_INDENT_2).decode()
        return orjson.dumps(v).decode()


class JsonTree:
    """A record's tree: ``root`` (built), its descendants as they are asked for."""

    def __init__(self, value: Any) -> None:
        self.nodes_built = 0
        self.root = JsonNode(self, None, None, value, 0)

    @classmethod
    def parse(cls, text: str | bytes) -> JsonTree | None:
        """The tree of a JSON line; None when it is not JSON (a marker line, a torn tail)."""
        try:
            return cls(orjson.loads(text))
        except orjson.JSONDecodeError:
            return None

    def find(self, keys: list[str | int] | tuple[str | int, ...]) -> JsonNode | None:
        """The node at ``keys`` from the root (building the nodes on the way), None when there is none."""
        node = self.root
        for k in keys:
            v = node.value
            if isinstance(v, dict) and isinstance(k, str) and k in v:
                i = list(v).index(k)
            elif isinstance(v, list) and isinstance(k, int) and 0 <= k < len(v):
                i = k
            else:
                return None
            node = node.child(i)
        return node


__all__ = ["PREVIEW_CHARS", "JsonNode", "JsonTree", "json_path"]
