"""The ``Depends:`` of the .deb: the Debian packages of every system library the frozen app links.

    python packaging/deb_depends.py BUNDLE_DIR        prints e.g. "libc6 (>= 2.34), libdbus-1-3, ..."

Why computed and not a hand-written list: the first launch on a real X display failed on
``libxcb-icccm4`` and ``libxcb-keysyms1``, which no list named.  Every ELF file of the bundle (the
executable, the extension modules, Qt and its plugins: xcb, Wayland, the GL integrations) is run
through ``ldd`` with the bundle's own folders on the search path, so what resolves outside the bundle,
or not at all, is exactly what the system must provide.  A resolved library is mapped to its package
with ``dpkg -S``; one the build machine lacks ("not found") through ``SONAME_PACKAGES``, and an unknown
one fails the build rather than ship a package that cannot start.  ``libc6`` and ``libstdc++6`` get
the minimum version the bundle's symbol versions need (the PySide6 wheels are manylinux_2_34).

May import: the standard library only.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

# Sonames a build machine may lack -> their package on Debian >= 12 and Ubuntu >= 22.04 (Ubuntu 24.04's
# "t64" renames provide these names too).  The xcb set is what Qt's xcb platform plugin links.
SONAME_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
    "libz.so.1": "zlib1g",
    "libstdc++.so.6": "libstdc++6",
    "libgcc_s.so.1": "libgcc-s1",
}
# GLIBCXX symbol version -> the GCC release whose libstdc++6 first has it (Debian versions follow GCC's).
GLIBCXX_GCC: dict[int, int] = {26: 9, 28: 10, 29: 11, 30: 12, 31: 13, 32: 14, 33: 15}
_LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(not found|\S+)")


def elf_files(bundle: Path) -> list[Path]:
    """Every ELF file in the bundle (symlinks skipped: their targets are in it too)."""
    found = []
    for path in sorted(bundle.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def needed(path: Path) -> list[str]:
    """The sonames ``path`` links directly (DT_NEEDED), as ``objdump -p`` lists them."""
    dump = subprocess.run(["objdump", "-p", str(path)], capture_output=True, text=True, check=False).stdout
    return [line.split()[1] for line in dump.splitlines() if line.strip().startswith("NEEDED")]


def system_links(bundle: Path, files: list[Path]) -> tuple[set[str], set[str]]:
    """(resolved paths outside the bundle, sonames not found) of what ``files`` link directly.

    Direct links only, as dpkg-shlibdeps does: what libfreetype6 itself needs is its own package's
    business.  ``ldd`` (with the bundle's folders first on the search path) says where each resolves.
    """
    folders = sorted({str(path.parent) for path in files})
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(folders))
    resolved: set[str] = set()
    missing: set[str] = set()
    root = str(bundle.resolve())
    for path in files:
        direct = set(needed(path))
        out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env, check=False).stdout
        for line in out.splitlines():
            match = _LDD_LINE.match(line)
            if not match or match.group(1) not in direct:
                continue
            soname, target = match.groups()
            if target == "not found":
                missing.add(soname)
            elif not os.path.realpath(target).startswith(root):
                resolved.add(target)
    return resolved, missing


def owning_packages(paths: set[str]) -> dict[str, str]:
    """Path -> Debian package, through ``dpkg -S`` (the path as ldd gave it, else its real path)."""
    owners: dict[str, str] = {}
    for path in sorted(paths):
        for candidate in dict.fromkeys([path, os.path.realpath(path)]):
            out = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True, check=False).stdout
            if out:
                owners[path] = out.split(":", 1)[0].strip()
                break
    return owners


def symbol_floor(files: list[Path], prefix: str) -> tuple[int, ...]:
    """The highest ``prefix`` symbol version (GLIBC_2.34 -> (2, 34)) any file needs."""
    best: tuple[int, ...] = ()
    pattern = re.compile(re.escape(prefix) + r"_([0-9.]+)")
    for path in files:
        out = subprocess.run(["objdump", "-T", str(path)], capture_output=True, text=True, check=False).stdout
        for match in pattern.finditer(out):
            version = tuple(int(part) for part in match.group(1).split(".") if part)
            best = max(best, version)
    return best


def depends(bundle: Path) -> str:
    files = elf_files(bundle)
    resolved, missing = system_links(bundle, files)
    owners = owning_packages(resolved)
    packages: set[str] = set()
    unknown: list[str] = []
    for path in resolved:
        name = owners.get(path) or SONAME_PACKAGES.get(os.path.basename(path))
        if name is None:
            unknown.append(path)
        else:
            packages.add(name.split(":", 1)[0])  # "libc6:amd64" -> "libc6"
    for soname in missing:
        if soname in SONAME_PACKAGES:
            packages.add(SONAME_PACKAGES[soname])
        else:
            unknown.append(soname)
    if unknown:
        raise SystemExit(f"deb_depends: no package known for {', '.join(sorted(unknown))}: add it to SONAME_PACKAGES")
    versions: dict[str, str] = {}
    glibc = symbol_floor(files, "GLIBC")
    if glibc:
        versions["libc6"] = ".".join(map(str, glibc))
    glibcxx = symbol_floor(files, "GLIBCXX")
    if len(glibcxx) == 3 and glibcxx[2] in GLIBCXX_GCC:
        versions["libstdc++6"] = str(GLIBCXX_GCC[glibcxx[2]])
    return ", ".join(f"{name} (>= {versions[name]})" if name in versions else name for name in sorted(packages))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    print(depends(Path(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
