"""Icons rendered from resources/sessionscope.svg at build time (packaging/icons.py): PNG, ICO, ICNS."""

from __future__ import annotations

import struct
from pathlib import Path

import icons
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_every_size_is_rendered_and_the_containers_hold_them(qapp: QApplication, tmp_path: Path) -> None:
    assert icons.main([str(tmp_path)]) == 0
    for size in icons.HICOLOR_SIZES:
        image = QImage(str(tmp_path / "hicolor" / f"{size}x{size}" / "apps" / "sessionscope.png"))
        assert (image.width(), image.height()) == (size, size)
        # Not blank: the icon's dark rounded square fills the middle, the corners stay transparent.
        assert image.pixelColor(size // 2, size // 2).alpha() == 255
        assert image.pixelColor(0, 0).alpha() == 0
    assert (tmp_path / "hicolor" / "scalable" / "apps" / "sessionscope.svg").read_bytes() == icons.SVG.read_bytes()

    ico = (tmp_path / "sessionscope.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind, count) == (0, 1, len(icons.ICO_SIZES))
    for index, size in enumerate(icons.ICO_SIZES):
        width, _h, _c, _r, _planes, bpp, length, offset = struct.unpack("<BBBBHHII", ico[6 + 16 * index : 22 + 16 * index])
        assert width == (0 if size == 256 else size) and bpp == 32
        assert ico[offset : offset + 8] == PNG_SIGNATURE and offset + length <= len(ico)

    icns = (tmp_path / "sessionscope.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    at, kinds = 8, []
    while at < len(icns):
        kind, length = icns[at : at + 4], struct.unpack(">I", icns[at + 4 : at + 8])[0]
        assert icns[at + 8 : at + 16] == PNG_SIGNATURE
        kinds.append(kind)
        at += length
    assert at == len(icns) and kinds == [kind for kind, _ in icons.ICNS_TYPES]
