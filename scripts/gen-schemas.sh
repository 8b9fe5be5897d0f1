#!/usr/bin/env bash
# karplint's field schemas (data/schemas/fields.txt, described in data/schemas/README.md):
# builds tools/gen-schemas, which reads Karpenter's CRD manifests from the Go modules of
# sigs.k8s.io/karpenter and github.com/aws/karpenter-provider-aws (the releases listed in
# tools/gen-schemas/main.go) and the k8s.io/api Go types (the version pinned in its go.mod).
#
#   scripts/gen-schemas.sh           regenerate the schemas, dated today (UTC)
#   scripts/gen-schemas.sh --check   exit 1 if the schemas differ from what the pinned sources
#                                    give (the file's own date is reused, so only data counts)
#
# Needs Go (GOTOOLCHAIN=auto fetches the toolchain go.mod names) and the module proxy, the
# first time, for the CRD modules.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
table="$root/data/schemas/fields.txt"

check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
  *) echo "gen-schemas.sh: unknown argument $1" >&2; exit 2 ;;
esac

if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  PATH="$PATH:/usr/local/go/bin"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "gen-schemas.sh: go is not installed (install Go >= 1.21; it fetches the toolchain itself)" >&2
  exit 2
fi

bin="$root/target/tools/gen-schemas"
mkdir -p "$(dirname "$bin")"
(cd "$root/tools/gen-schemas" && GOTOOLCHAIN=auto go build -o "$bin" .)

if ! $check; then
  mkdir -p "$(dirname "$table")"
  (cd "$root/tools/gen-schemas" && GOTOOLCHAIN=auto "$bin" -out "$table")
  echo "gen-schemas.sh: wrote $table ($(grep -c "^type " "$table") types)"
  exit 0
fi

date="$(sed -n 's/^# date: //p' "$table")"
if [[ -z "$date" ]]; then
  echo "gen-schemas.sh: $table has no '# date:' line" >&2
  exit 1
fi
fresh="$(mktemp)"
trap 'rm -f "$fresh"' EXIT
(cd "$root/tools/gen-schemas" && GOTOOLCHAIN=auto "$bin" -date "$date" -out "$fresh")
if ! diff -u "$table" "$fresh"; then
  echo "gen-schemas.sh: $table is not what the pinned sources give; run scripts/gen-schemas.sh" >&2
  exit 1
fi
echo "gen-schemas.sh: $table matches the pinned CRDs and Go types"
