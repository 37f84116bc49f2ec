#!/usr/bin/env bash
# The macOS disk image: dist/SessionScope.app (from the spec's BUNDLE) and an /Applications link, compressed.
#   packaging/macos/make_dmg.sh VERSION          -> dist/SessionScope-VERSION-macos-<arch>.dmg
# Runs on macOS only (hdiutil); .github/workflows/release.yml calls it.  Not exercised on Linux.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=$1
arch=$(uname -m)
stage=build/dmg
rm -rf "$stage" && mkdir -p "$stage"
cp -R dist/SessionScope.app "$stage/"
ln -s /Applications "$stage/Applications"
# PyInstaller signs the bundle ad hoc; without a Developer ID the first launch needs right-click > Open.
codesign --verify --deep "$stage/SessionScope.app" || echo "make_dmg: the bundle's ad-hoc signature does not verify" >&2
out="dist/SessionScope-$version-macos-$arch.dmg"
rm -f "$out"
hdiutil create -volname "SessionScope $version" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$out"
echo "make_dmg: $out ($(du -h "$out" | cut -f1))"
