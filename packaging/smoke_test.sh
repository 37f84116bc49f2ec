#!/usr/bin/env bash
# Smoke test of a SessionScope build: open the demo root offscreen, save a screenshot, check the PNG.
#   packaging/smoke_test.sh [COMMAND...]      default: dist/sessionscope/sessionscope if built, else python -m app
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -gt 0 ]; then
  cmd=("$@")
elif [ -x dist/sessionscope/sessionscope ]; then
  cmd=(dist/sessionscope/sessionscope)
else
  cmd=("${PYTHON:-python3}" -m app)
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export QT_QPA_PLATFORM=offscreen
export SESSIONSCOPE_DATA_DIR="$work/data" XDG_CONFIG_HOME="$work/config"
out="$work/window.png"
timeout 180 "${cmd[@]}" --demo --screenshot "$out"
size=$(stat -c %s "$out")
magic=$(head -c 8 "$out" | od -An -tx1 | tr -d ' \n')
if [ "$magic" != "89504e470d0a1a0a" ] || [ "$size" -lt 10000 ]; then
  echo "smoke test FAILED: $out is not a plausible PNG ($size bytes)" >&2
  exit 1
fi
echo "smoke test ok: ${cmd[*]} --demo --screenshot wrote a ${size}-byte PNG"
