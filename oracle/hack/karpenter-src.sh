#!/usr/bin/env bash
# Lays out sigs.k8s.io/karpenter v1.14.3, unmodified except for its go.mod `go` line, in
# oracle/third_party/karpenter, which oracle/go.mod's replace directive points at.
#
# Why: karpenter v1.14.3's go.mod says `go 1.26.10`, and this machine has Go 1.26.8 with
# GOTOOLCHAIN=local (set in the Go install's go.env), so the go command refuses the module:
#   sigs.k8s.io/karpenter@v1.14.3 requires go >= 1.26.10 (running go 1.26.8; GOTOOLCHAIN=local)
# The bump from 1.26.6 (v1.14.1) to 1.26.10 is a standard-library security floor; no language
# feature of 1.26.10 is used. The source comes from the go command's own module download,
# checked against the pinned h1 hash below (the go.sum hash of the module zip), so it is the
# real release. Once the installed Go is >= 1.26.10, delete the replace line and this script.
set -euo pipefail

VERSION=v1.14.3
WANT_H1='h1:xw68Jf6t+GiLOx/SfgRfXIZZ/nEierbSjTTl9q7zFa8='
here="$(cd "$(dirname "$0")/.." && pwd)"
dest="$here/third_party/karpenter"
stamp="$dest/.karplint-source"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$VERSION $WANT_H1" ]]; then
  exit 0
fi

cache="$(go env GOMODCACHE)/cache/download/sigs.k8s.io/karpenter/@v"
if [[ ! -f "$cache/$VERSION.zip" || ! -f "$cache/$VERSION.ziphash" ]]; then
  # The go command downloads and verifies the zip, then refuses the go version: that is
  # expected here, so its exit status is ignored and the zip's presence is checked instead.
  tmp="$(mktemp -d)"
  (cd "$tmp" && go mod init probe >/dev/null 2>&1 && go mod download "sigs.k8s.io/karpenter@$VERSION" >/dev/null 2>&1) || true
  rm -rf "$tmp"
fi
[[ -f "$cache/$VERSION.zip" ]] || { echo "karpenter-src: no $cache/$VERSION.zip after go mod download" >&2; exit 1; }
got="$(cat "$cache/$VERSION.ziphash")"
[[ "$got" == "$WANT_H1" ]] || { echo "karpenter-src: hash $got, want $WANT_H1" >&2; exit 1; }

rm -rf "$dest"
mkdir -p "$dest"
tmp="$(mktemp -d)"
unzip -q "$cache/$VERSION.zip" -d "$tmp"
cp -r "$tmp/sigs.k8s.io/karpenter@$VERSION/." "$dest/"
rm -rf "$tmp"
chmod -R u+w "$dest"
goline="$(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+(\.[0-9]+)?).*/\1/')"
sed -i -E "s/^go [0-9.]+$/go $goline/" "$dest/go.mod"
echo "$VERSION $WANT_H1" > "$stamp"
echo "karpenter-src: sigs.k8s.io/karpenter $VERSION in $dest (go line set to $goline)" >&2
