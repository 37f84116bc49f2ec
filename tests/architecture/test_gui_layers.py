"""The window's layers and seams are checked, not only described (issue 22 items 1-2).

``lint-imports`` runs on a copy of the tree with imports added that break each new contract (a view
importing a controller, a model importing the runtime, a controller opening a dialog, a feature
importing ``MainWindow`` under ``TYPE_CHECKING``): every one must be reported, and the unchanged copy
must pass, so a contract that silently stopped matching anything would fail here.  Controllers must
not import ``PySide6.QtWidgets`` either; import-linter cannot forbid a submodule of an external
package, so that rule is read from the controllers' source here.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT_IMPORTS = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or shutil.which("lint-imports")

# (module file, line added at its end, the contract that must then break)
VIOLATIONS = (
    ("app/gui/views/header_pane.py", "from app.gui.controllers import session_list as _v1", "window-layers"),
    ("app/gui/models/columns.py", "from app.gui.runtime import jobs as _v2", "window-layers"),
    (
        "app/gui/controllers/open_root.py",
        "from app.gui.dialogs import confirm_dialog as _v3",
        "controllers-ask-through-the-window",
    ),
    (
        "app/gui/window/event_navigation.py",
        "if TYPE_CHECKING:\n    from app.gui.window.main_window import MainWindow as _V4",
        "features-plug-in",
    ),
)
NEW_CONTRACTS = ("window-layers", "controllers-ask-through-the-window", "features-plug-in")


def _copy_tree(dest: Path) -> None:
    for package in ("app", "persistence"):
        shutil.copytree(REPO / package, dest / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(REPO / "pyproject.toml", dest / "pyproject.toml")  # the contracts themselves, unchanged


def _lint(dest: Path) -> subprocess.CompletedProcess[str]:
    assert LINT_IMPORTS is not None, "import-linter is in the test extra"
    env = {**os.environ, "PYTHONPATH": str(dest)}  # the copy, not the installed checkout
    return subprocess.run(
        [LINT_IMPORTS, "--config", str(dest / "pyproject.toml"), "--no-cache"],
        cwd=dest,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _broken_names(output: str, settings: dict[str, object]) -> set[str]:
    contracts = settings["contracts"]
    assert isinstance(contracts, list)
    return {c["id"] for c in contracts if f"{c['name']} BROKEN" in " ".join(output.split())}


def test_new_contracts_exist() -> None:
    settings = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    ids = {c["id"] for c in settings["contracts"]}
    assert set(NEW_CONTRACTS) <= ids


@pytest.mark.timeout(120)
def test_injected_violations_fail_lint_imports(tmp_path: Path) -> None:
    settings = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    clean, dirty = tmp_path / "clean", tmp_path / "dirty"
    for dest in (clean, dirty):
        dest.mkdir()
        _copy_tree(dest)
    for rel, line, _contract in VIOLATIONS:
        target = dirty / rel
        text = target.read_text(encoding="utf-8")
        if "TYPE_CHECKING" in line and "import TYPE_CHECKING" not in text:
            line = "from typing import TYPE_CHECKING\n" + line
        target.write_text(text + "\n" + line + "\n", encoding="utf-8")

    ok = _lint(clean)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = _lint(dirty)
    assert bad.returncode != 0
    output = bad.stdout + bad.stderr
    assert _broken_names(output, settings) == set(NEW_CONTRACTS), output
    for rel, _line, _contract in VIOLATIONS:
        module = rel.removesuffix(".py").replace("/", ".")
        assert module in output, f"{module} not reported:\n{output}"


def _qtwidgets_imports(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        if any(n == "PySide6.QtWidgets" or n.startswith("PySide6.QtWidgets.") for n in names):
            lines.append(node.lineno)
    return lines


def test_controllers_never_import_qtwidgets() -> None:
    found = {
        str(p.relative_to(REPO)): lines
        for p in sorted((REPO / "app" / "gui" / "controllers").rglob("*.py"))
        if (lines := _qtwidgets_imports(p))
    }
    assert found == {}, f"controllers ask through controllers.prompts, never with a widget: {found}"


def test_the_qtwidgets_check_sees_an_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import os\nfrom PySide6.QtWidgets import QMessageBox\nimport PySide6.QtWidgets\n", encoding="utf-8")
    assert _qtwidgets_imports(probe) == [2, 3]
