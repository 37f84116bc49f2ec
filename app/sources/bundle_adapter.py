"""The one place the source opener meets the support-bundle checks (``app.sources.bundle``): open a
bundle (verify its manifest, extract it safely into the cache folder) and remove an extraction.

Kept apart so the opener's contract does not change with the bundle module's details: the opener
holds an opaque handle per extraction and gives it back to ``remove_extraction``.
May import the standard library, ``app.sources``' own modules and the public ``persistence``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from app.sources.model import SourceError


def _bundle() -> Any:
    """``app.sources.bundle``, imported when a ZIP is met (the command line's other verbs never pay for it)."""
    try:
        return importlib.import_module("app.sources.bundle")
    except ModuleNotFoundError as err:
        if err.name != "app.sources.bundle":
            raise
        raise SourceError("opening support bundles is not available in this build") from None


def open_bundle(path: Path) -> tuple[object, object, tuple[tuple[Path, str], ...]]:
    """(the extraction's handle for ``remove_extraction``, the verification report, the session files
    each with its name inside the bundle: ``(…/session/session.jsonl.zstd, "session/session.jsonl.zstd")``).

    A bundle the checks refuse raises their typed error (``app.sources.bundle.BundleError``, an unreadable-log error).
    """
    opened = _bundle().open_bundle(path)
    files = tuple((p, p.relative_to(opened.folder).as_posix()) for p in opened.session_paths)
    return opened, opened.check, files


def is_bundle(path: Path) -> bool:
    """Whether ``path`` is a ZIP holding a manifest (a ZIP in a case folder that is not one is skipped)."""
    return bool(_bundle().is_bundle(path))


def remove_extraction(handle: object) -> None:
    """Remove a bundle's extraction, or a folder the opener made (a received store's copy), with the
    caches made of their files; idempotent."""
    if isinstance(handle, Path):
        from app.sources.bundle_extractions import release

        release(handle)
        return
    module = _bundle()
    if isinstance(handle, module.OpenedBundle):
        module.close_bundle(handle)


__all__ = ["is_bundle", "open_bundle", "remove_extraction"]
