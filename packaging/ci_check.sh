#!/usr/bin/env bash
# CI's installer check (.ci/run calls it after the tests): build, unpack, start, validate.
#   packaging/ci_check.sh        (from any folder; PYTHON defaults to the repository's .venv)
# 1. packaging/build.sh: the one-folder app, the tarball and the .deb.
# 2. The .deb unpacked with `dpkg-deb -x` into a temporary folder (nothing is installed on the system):
#    its /opt/sessionscope/sessionscope opens the demo root offscreen with --screenshot, and the PNG must
#    be a real window (PNG signature, at least 800x500 px, distinct colours, not one flat fill); the same
#    for Help > About and the crash dialog of a deliberate error (--screenshot-of about|crash).
#    The tarball's binary must run from wherever it is unpacked (--help, no display needed).
#    The .deb's copyright file carries LICENSE and THIRD_PARTY_NOTICES; the .deb and the tarball ship every
#    license text (_internal/licenses), and the tarball LICENSE and THIRD_PARTY_NOTICES at its top.
# 3. lintian on the .deb (any error fails; warnings are printed), desktop-file-validate on the desktop
#    entry and `appstreamcli validate --no-net` on the metainfo, both as shipped in the .deb.
# 4. Size limits (issue 15: app < 150 MB, .deb < 60 MB) fail the step; times are only printed
#    (benchmarks/bench_frozen.py: sizes and the frozen cold start).
# Missing tools (lintian, desktop-file-validate, appstreamcli, objdump) are installed with apt-get when
# running as root; otherwise their check is skipped with a message saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
say() { printf 'installer check: %s\n' "$*"; }
export PYTHON=${PYTHON:-$PWD/.venv/bin/python}

need=()
command -v lintian >/dev/null || need+=(lintian)
command -v desktop-file-validate >/dev/null || need+=(desktop-file-utils)
command -v appstreamcli >/dev/null || need+=(appstream)
command -v objdump >/dev/null || need+=(binutils)
command -v dpkg-deb >/dev/null || need+=(dpkg)
if [ "${#need[@]}" -gt 0 ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "installing ${need[*]}"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null) ||
      say "apt-get could not install ${need[*]}"
  else
    say "missing ${need[*]} and not root: those checks are skipped"
  fi
fi

# --- 1. build ---------------------------------------------------------------------------------------
packaging/build.sh
version=$("$PYTHON" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
deb=$(ls dist/sessionscope_"$version"_*.deb)
tarball=$(ls dist/sessionscope-"$version"-linux-*.tar.gz)
built=$(date +%s)

# --- 2. unpack and start ----------------------------------------------------------------------------
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work/deb"
link=$(readlink "$work/deb/usr/bin/sessionscope")
[ "$link" = /opt/sessionscope/sessionscope ] || { say "FAILED: /usr/bin/sessionscope -> $link"; exit 1; }
export QT_QPA_PLATFORM=offscreen
for name in config data cache state; do mkdir -p "$work/home/$name"; done
# The window, Help > About and the crash dialog of a deliberate error (--screenshot-of): each must be a
# PNG of a painted widget; SHOTS_DIR (if set) keeps copies to look at.
check_png() {
  "$PYTHON" - "$@" <<'EOF'
"""The screenshot must be a PNG of a painted widget: signature, size, and more than a flat fill."""
import struct
import sys

from PySide6.QtGui import QImage

path, min_w, min_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(f"installer check: FAILED: {path} is not a PNG")
width, height = struct.unpack(">II", data[16:24])
image = QImage(path)
# Colours on a 20 px grid: a painted window or dialog (text, icons, status colours) has several; a blank one 1-3.
colours = {image.pixel(x, y) for x in range(0, image.width(), 20) for y in range(0, image.height(), 20)}
name = path.rsplit("/", 1)[-1]
print(f"installer check: {name} {width}x{height} px, {len(data)} bytes, {len(colours)} colours on a 20 px grid")
if image.isNull() or width < min_w or height < min_h or len(colours) < 4:
    sys.exit(f"installer check: FAILED: {path} does not look like a painted widget")
EOF
}
for subject in window about crash; do
  shot="$work/$subject.png"
  t0=$(date +%s%N)
  XDG_CONFIG_HOME=$work/home/config XDG_DATA_HOME=$work/home/data XDG_CACHE_HOME=$work/home/cache \
    XDG_STATE_HOME=$work/home/state SESSIONSCOPE_DATA_DIR=$work/home/data/sessionscope \
    timeout 180 "$work/deb/opt/sessionscope/sessionscope" --demo --screenshot "$shot" --screenshot-of "$subject"
  say "the unpacked .deb's app saved its $subject in $((($(date +%s%N) - t0) / 1000000)) ms"
  if [ "$subject" = window ]; then check_png "$shot" 800 500; else check_png "$shot" 300 150; fi
  if [ -n "${SHOTS_DIR:-}" ]; then mkdir -p "$SHOTS_DIR" && cp "$shot" "$SHOTS_DIR/frozen-$subject.png"; fi
done
mkdir "$work/tar" && tar -xzf "$tarball" -C "$work/tar"
"$work/tar/sessionscope-$version/sessionscope" --help >/dev/null
[ -f "$work/tar/sessionscope-$version/share/applications/sessionscope.desktop" ]
say "the tarball's app runs from $work/tar (--help) and ships share/applications"
# Licenses (issue 21 item 12): the .deb's copyright file carries the license and the notices, and both the
# .deb and the tarball ship every license text the notices name (the LGPL-3.0 of Qt and PySide6 first).
check_licenses() {  # check_licenses FOLDER_OF_TEXTS WHAT
  local name
  for name in LICENSE THIRD_PARTY_NOTICES $(cd resources/licenses && ls *.txt); do
    [ -s "$1/$name" ] || { say "FAILED: $2 lacks $1/$name"; exit 1; }
  done
}
copyright_file=$work/deb/usr/share/doc/sessionscope/copyright
for phrase in "MIT License" "The SessionScope authors" "LGPL-3.0" "replacing them" zstandard orjson watchdog psutil qasync "PSF"; do
  grep -q -- "$phrase" "$copyright_file" || { say "FAILED: the .deb's copyright file does not mention '$phrase'"; exit 1; }
done
check_licenses "$work/deb/opt/sessionscope/_internal/licenses" "the .deb"
check_licenses "$work/tar/sessionscope-$version/_internal/licenses" "the tarball"
for name in LICENSE THIRD_PARTY_NOTICES; do
  cmp -s "$name" "$work/tar/sessionscope-$version/$name" || { say "FAILED: the tarball's $name differs from the source's"; exit 1; }
done
say "licenses: the .deb's copyright file has the license and notices; both ship $(ls resources/licenses | wc -l) full texts"

# --- 3. validators ----------------------------------------------------------------------------------
status=0
if command -v desktop-file-validate >/dev/null; then
  if desktop-file-validate "$work/deb/usr/share/applications/sessionscope.desktop"; then
    say "desktop-file-validate: clean"
  else
    status=1
  fi
fi
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net "$work"/deb/usr/share/metainfo/*.metainfo.xml || status=1
fi
if command -v lintian >/dev/null; then
  t1=$(date +%s)
  lintian --fail-on error --tag-display-limit 0 "$deb" >"$work/lintian.txt" 2>&1 || status=1
  say "lintian ($(($(date +%s) - t1)) s): $(grep -c '^E:' "$work/lintian.txt" || true) errors, $(grep -c '^W:' "$work/lintian.txt" || true) warnings"
  cat "$work/lintian.txt"
fi

# --- 4. sizes and start time ------------------------------------------------------------------------
"$PYTHON" benchmarks/bench_frozen.py --runs 3 --json | tee "$work/bench.txt"
"$PYTHON" - "$work/bench.txt" <<'EOF'
import json
import sys

numbers = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
if numbers["app_bytes"] >= 150e6 or numbers.get("deb", 0) >= 60e6:
    sys.exit(f"installer check: FAILED: over the size limits (app {numbers['app_bytes']}, deb {numbers.get('deb')})")
EOF
[ "$status" = 0 ] || { say "FAILED: a validator or lintian reported errors (above)"; exit 1; }
say "ok: build $((built - started)) s, whole check $(($(date +%s) - started)) s"
