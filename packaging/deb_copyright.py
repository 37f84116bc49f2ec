"""The .deb's ``/usr/share/doc/sessionscope/copyright``: the header, SessionScope's license, the notices.

Why generated: Debian's copyright file must state the package's license and those of what it bundles,
and the texts already live in ``LICENSE`` and ``THIRD_PARTY_NOTICES`` (which the tarball, the frozen
app and Help > About use); one source, so the four never disagree.  Only the short texts go in:
lintian rejects a copyright file that carries the full GPL or Apache text (those are in
/usr/share/common-licenses and in the app's ``_internal/licenses``).

    python3 packaging/deb_copyright.py OUTPUT       (packaging/build.sh runs it; the tests too)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADER = ROOT / "packaging" / "debian" / "copyright"
LICENSE = ROOT / "LICENSE"
NOTICES = ROOT / "THIRD_PARTY_NOTICES"


def copyright_text() -> str:
    parts = [
        HEADER.read_text(encoding="utf-8").rstrip("\n"),
        "SessionScope's license (LICENSE):\n\n" + LICENSE.read_text(encoding="utf-8").rstrip("\n"),
        NOTICES.read_text(encoding="utf-8").rstrip("\n"),
    ]
    return "\n\n\n".join(parts) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: deb_copyright.py OUTPUT", file=sys.stderr)
        return 2
    Path(argv[0]).write_text(copyright_text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
