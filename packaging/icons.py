"""Render the app icon for every installer from ``resources/sessionscope.svg``, at build time.

    python packaging/icons.py OUT_DIR

writes ``OUT_DIR/hicolor/<N>x<N>/apps/sessionscope.png`` (Linux), ``OUT_DIR/sessionscope.ico``
(Windows: PNG-compressed entries, which Windows reads since Vista) and ``OUT_DIR/sessionscope.icns``
(macOS: PNG entries).  Why here and not checked in: one source of truth, the SVG; the bitmaps
cannot drift from it, and the ICO/ICNS containers are written in plain Python so the same script
runs on all three build machines without ImageMagick, iconutil or Pillow.

Rendering uses Qt's own SVG renderer (QtSvg is part of PySide6-Essentials) on the offscreen
platform, so it needs no display.

May import: PySide6 (QtCore, QtGui, QtSvg) and the standard library.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SVG = ROOT / "resources" / "sessionscope.svg"
NAME = "sessionscope"
HICOLOR_SIZES: tuple[int, ...] = (16, 22, 24, 32, 48, 64, 128, 256, 512)  # px; the hicolor theme's usual set
ICO_SIZES: tuple[int, ...] = (16, 24, 32, 48, 64, 128, 256)  # px; 256 is the largest an ICO entry can be
# ICNS entry type -> px (PNG payloads; the classic RLE types are not needed on macOS >= 10.7).
ICNS_TYPES: tuple[tuple[bytes, int], ...] = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic09", 512),
    (b"ic10", 1024),
)


def render_pngs(sizes: set[int]) -> dict[int, bytes]:
    """PNG bytes of the SVG at each size (square, transparent background)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"icons: cannot read {SVG}")
    out: dict[int, bytes] = {}
    for size in sorted(sizes):
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        # The stub types the format as bytes, but PySide6 accepts only str for it at run time.
        if not image.save(buffer, "PNG"):  # type: ignore[call-overload]
            raise SystemExit(f"icons: cannot encode the {size} px PNG")
        out[size] = bytes(data.data())
    del _app
    return out


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICO file holding each PNG as one entry (ICONDIR, ICONDIRENTRY[], payloads)."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = 6 + 16 * len(pngs)
    entries, payloads = b"", b""
    for size, png in sorted(pngs.items()):
        dim = 0 if size >= 256 else size  # 0 means 256 in an ICONDIRENTRY
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(png), offset + len(payloads))
        payloads += png
    return header + entries + payloads


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICNS file: the 'icns' header, then one (type, length, PNG) element per size."""
    body = b"".join(kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for kind, size in ICNS_TYPES)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0])
    pngs = render_pngs(set(HICOLOR_SIZES) | set(ICO_SIZES) | {size for _, size in ICNS_TYPES})
    for size in HICOLOR_SIZES:
        target = out / "hicolor" / f"{size}x{size}" / "apps" / f"{NAME}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pngs[size])
    scalable = out / "hicolor" / "scalable" / "apps" / f"{NAME}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    scalable.write_bytes(SVG.read_bytes())
    (out / f"{NAME}.ico").write_bytes(ico_bytes({size: pngs[size] for size in ICO_SIZES}))
    (out / f"{NAME}.icns").write_bytes(icns_bytes(pngs))
    print(f"icons: {len(HICOLOR_SIZES)} PNGs, scalable SVG, {NAME}.ico, {NAME}.icns in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
