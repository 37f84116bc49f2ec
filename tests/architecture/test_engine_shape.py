"""The engine's and the app's shape is checked, not only described (issue 22 items 3 and 5).

- A narrow engine: ``persistence.__all__`` holds no format internals, and every name in it has a
  caller outside the engine (or is a value a public call returns); app/ never reaches a store's hooks,
  and the window, the exports and the actions never import ``sqlite3`` (a ``lint-imports`` contract,
  checked here with injected imports).

- No import cycles inside the engine: grimp's graph of ``persistence`` holds imports inside functions
  and under ``TYPE_CHECKING`` too, so a cycle hidden by a function-level import is found.
- No source file over ``MAX_LINES`` lines in ``app/`` or ``persistence/``: a file that grows past it
  is split along a seam that says what each part holds.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

import persistence

REPO = Path(__file__).resolve().parents[2]
MAX_LINES = 600
LINT_IMPORTS = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or shutil.which("lint-imports")


def _cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """The strongly connected components (more than one module) of ``package``'s import graph (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(module: str) -> None:
        nonlocal counter
        index[module] = low[module] = counter
        counter += 1
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if not (imported == package or imported.startswith(package + ".")):
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_the_engine_has_no_import_cycles() -> None:
    graph = grimp.build_graph("persistence", include_external_packages=False)
    assert len(graph.modules) > 40  # the whole engine was read, not an empty graph
    cycles = _cycles(graph, "persistence")
    details = [
        " <-> ".join(c)
        + ": "
        + "; ".join(f"{a} -> {b}" for a in c for b in c if graph.direct_import_exists(importer=a, imported=b))
        for c in cycles
    ]
    assert cycles == [], "import cycles inside the engine:\n" + "\n".join(details)


def test_the_cycle_finder_sees_a_function_level_import() -> None:
    """The check above would be blind if grimp left out imports inside functions: it must see them."""
    graph = grimp.build_graph("persistence", include_external_packages=False)
    graph.add_import(importer="persistence.jsonl.files", imported="persistence.jsonl.reader")
    assert any("persistence.jsonl.files" in c and "persistence.jsonl.reader" in c for c in _cycles(graph, "persistence"))


def test_no_source_file_over_600_lines() -> None:
    sizes = {
        path.relative_to(REPO).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for folder in ("app", "persistence")
        for path in (REPO / folder).rglob("*.py")
    }
    assert len(sizes) > 100  # both trees were read
    over = {name: n for name, n in sorted(sizes.items()) if n > MAX_LINES}
    assert over == {}, f"files over {MAX_LINES} lines (split each along a seam that says what it holds): {over}"


# ---------------------------------------------------------------- a narrow engine (issue 22 item 3)

# Frame codecs, JSONL walkers, header readers and storage hooks: the engine's own business.
FORMAT_INTERNALS = (
    "compress_frame",
    "scan_frames",
    "decode_frame",
    "list_jsonl_root",
    "list_jsonl_project",
    "list_jsonl_session_dir",
    "list_jsonl_root_links",
    "jsonl_project_dirs",
    "read_first_line",
    "revision_of",
    "StorageBackend",
    "CancelToken",
    "CutFacts",
)
# Exported for annotation: values public calls return or take, and the errors they raise, whether or not
# app/ names them today.
VALUES_OF_PUBLIC_CALLS = frozenset(
    {
        "EventRecord",
        "RawBytes",
        "RawLines",
        "RawPiece",
        "SessionAbortedError",
        "SessionPreparation",
        "TornFacts",
        "PrefixStop",
        "SessionEvent",
        "AbortSignal",
    }
)


def _imported_from_persistence(folders: tuple[str, ...]) -> set[str]:
    names: set[str] = set()
    for folder in folders:
        for path in (REPO / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module == "persistence" and node.level == 0:
                    names.update(a.name for a in node.names)
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "persistence":
                    names.add(node.attr)
    return names


def test_the_engine_exports_no_format_internals() -> None:
    exported = set(persistence.__all__)
    assert {"open_store", "CoordinatedPersistence", "list_part"} <= exported  # the surface was read
    assert sorted(exported & set(FORMAT_INTERNALS)) == []


def test_every_exported_name_has_a_caller_outside_the_engine() -> None:
    """An export no app module, benchmark or test uses (and no public call returns) is surface to drop."""
    used = _imported_from_persistence(("app", "benchmarks", "tests"))
    unused = sorted(set(persistence.__all__) - used - VALUES_OF_PUBLIC_CALLS)
    assert unused == []


def test_the_app_never_reaches_into_a_store_or_sqlite() -> None:
    """No ``store.backend``/``.storage`` (the engine's hooks) anywhere in app/, and no ``sqlite3`` in the
    window, the exports or the actions (the contract below checks imports; this checks the names)."""
    found = []
    for path in sorted((REPO / "app").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("backend", "storage") and not rel.startswith("app/cli/"):
                found.append(f"{rel}:{node.lineno} .{node.attr}")
            if (
                isinstance(node, ast.Name)
                and node.id == "sqlite3"
                and rel.startswith(("app/gui/", "app/export/", "app/actions/"))
            ):
                found.append(f"{rel}:{node.lineno} sqlite3")
    assert found == []


def _copy_tree(dest: Path) -> None:
    for package in ("app", "persistence"):
        shutil.copytree(REPO / package, dest / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(REPO / "pyproject.toml", dest / "pyproject.toml")


def _lint(dest: Path) -> subprocess.CompletedProcess[str]:
    assert LINT_IMPORTS is not None, "import-linter is in the test extra"
    return subprocess.run(
        [LINT_IMPORTS, "--config", str(dest / "pyproject.toml"), "--no-cache"],
        cwd=dest,
        env={**os.environ, "PYTHONPATH": str(dest)},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.timeout(120)
def test_an_injected_sqlite3_import_fails_lint_imports(tmp_path: Path) -> None:
    settings = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    contract = next(c for c in settings["contracts"] if c["id"] == "sqlite-stays-behind-the-engine")
    dirty = tmp_path / "dirty"
    dirty.mkdir()
    _copy_tree(dirty)
    injected = ("app/gui/controllers/open_root.py", "app/export/exporter.py", "app/actions/resume.py")
    for rel in injected:
        target = dirty / rel
        target.write_text(target.read_text(encoding="utf-8") + "\nimport sqlite3 as _injected  # noqa\n", encoding="utf-8")
    bad = _lint(dirty)
    output = " ".join((bad.stdout + bad.stderr).split())
    assert bad.returncode != 0
    assert f"{contract['name']} BROKEN" in output, output
    for rel in injected:
        assert rel.removesuffix(".py").replace("/", ".") in output, output
