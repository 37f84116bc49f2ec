"""The engine's public surface: what ``app/`` may import, each callable with a one-line docstring."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import persistence

ENGINE = Path(persistence.__file__).parent

# What the app needs instead of reaching into backends (issue 11, part 1).
APP_FACING = [
    "ArtifactInfo",
    "RawBytes",
    "copy_artifact_to",
    "SessionView",
    "TornFacts",
    "SessionDiagnosis",
    "ListedEntry",
    "HeaderCache",
    "read_header_line",
    "iter_raw",
    "decode_raw",
    "render_rows",
    "LazyRows",
    "RawChunk",
    "RawDamage",
    "RawLines",
    "RawDecodeCancelled",
    "decode_segment",
    "upstream_class_of",
    "not_found",
    "js_dumps",
    "js_dumps_str",
    "js_number",
    "is_number",
    "interrupted_turn_closers",
    "READABLE_STATUSES",
    # issue 22 item 3: format-neutral calls instead of the JSONL walkers and the frame codec
    "listing_parts",
    "list_part",
    "complete_plaintext",
    "stored_bytes",
    "containing_folder",
    "store_files",
    "writer_files",
    "jsonl_backups_beside",
]
STORE_METHODS = [
    "view",
    "map_views",  # issue 25: a worker's batch of reads in one hop
    "diagnose",
    "artifact",
    "session_sizes",
    "read_raw_bytes",
    "read_artifact_bytes",
    "list_entries",
    "integrity_check",
    "read_only_twin",
    "root_path",
    "kind",
    "compression",
    "read_only",
    "schema_version",
]


def test_the_app_facing_names_are_exported() -> None:
    missing = [name for name in APP_FACING if name not in persistence.__all__ or not hasattr(persistence, name)]
    assert missing == []
    assert sorted(persistence.__all__) == sorted(set(persistence.__all__))
    for name in STORE_METHODS:
        assert hasattr(persistence.CoordinatedPersistence, name), name


def test_every_exported_callable_says_what_it_does() -> None:
    undocumented = []
    for name in persistence.__all__:
        obj = getattr(persistence, name)
        if not callable(obj):
            continue
        if not (inspect.getdoc(obj) or "").strip():
            undocumented.append(name)
        if inspect.isclass(obj) and obj.__module__.startswith("persistence"):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                target = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if callable(target) and not (inspect.getdoc(target) or "").strip():
                    undocumented.append(f"{name}.{attr}")
    assert undocumented == []


def test_every_public_callable_of_the_engine_has_a_docstring() -> None:
    """The habit, for every module: a public function, class or method carries a docstring."""
    missing = []
    for path in sorted(ENGINE.rglob("*.py")):
        tree = ast.parse(path.read_text())

        def visit(node: ast.AST, prefix: str, path: Path = path) -> None:
            for child in ast.iter_child_nodes(node):
                if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                if child.name.startswith("_"):
                    continue
                overload = any(isinstance(d, ast.Name) and d.id == "overload" for d in child.decorator_list)
                if not overload and ast.get_docstring(child) is None:
                    missing.append(f"{path.relative_to(ENGINE)}:{child.lineno} {prefix}{child.name}")
                if isinstance(child, ast.ClassDef):
                    visit(child, prefix + child.name + ".")

        visit(tree, "")
    assert missing == []


def test_the_engine_is_typed() -> None:
    assert (ENGINE / "py.typed").is_file()
