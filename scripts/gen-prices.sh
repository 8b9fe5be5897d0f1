#!/usr/bin/env bash
# karplint's on-demand price table (data/prices/on-demand.csv, described in
# data/prices/README.md): builds tools/gen-prices, which reads the static prices of Karpenter's
# AWS provider (the version pinned in tools/gen-prices/go.mod) through its pricing package.
#
#   scripts/gen-prices.sh           regenerate the table, dated today (UTC)
#   scripts/gen-prices.sh --check   exit 1 if the table differs from what the pinned provider
#                                   gives (the table's own date is reused, so only data counts)
#
# Needs Go (GOTOOLCHAIN=auto fetches the toolchain go.mod names). A cold build compiles the
# AWS SDK's EC2 package: minutes on 2 cores; later runs take seconds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
table="$root/data/prices/on-demand.csv"

check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
  *) echo "gen-prices.sh: unknown argument $1" >&2; exit 2 ;;
esac

if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  PATH="$PATH:/usr/local/go/bin"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "gen-prices.sh: go is not installed (install Go >= 1.21; it fetches the toolchain itself)" >&2
  exit 2
fi

bin="$root/target/tools/gen-prices"
mkdir -p "$(dirname "$bin")"
(cd "$root/tools/gen-prices" && GOTOOLCHAIN=auto go build -o "$bin" .)

if ! $check; then
  mkdir -p "$(dirname "$table")"
  "$bin" -out "$table"
  echo "gen-prices.sh: wrote $table ($(($(grep -vc "^#" "$table") - 1)) prices)"
  exit 0
fi

date="$(sed -n 's/^# date: //p' "$table")"
if [[ -z "$date" ]]; then
  echo "gen-prices.sh: $table has no '# date:' line" >&2
  exit 1
fi
fresh="$(mktemp)"
trap 'rm -f "$fresh"' EXIT
"$bin" -date "$date" -out "$fresh"
if ! diff -u "$table" "$fresh"; then
  echo "gen-prices.sh: $table is not what the pinned provider gives; run scripts/gen-prices.sh" >&2
  exit 1
fi
echo "gen-prices.sh: $table matches the provider's static prices"
