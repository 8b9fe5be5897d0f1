#!/usr/bin/env bash
# Lints generated scenarios with karplint and fails if karplint rejects any of them: a
# parse-error finding, a config error, or an exit code other than 0/1 (findings are expected;
# a scenario karplint or Karpenter's CRDs would reject is a generator bug).
#
#   oracle/gen/check-karplint.sh [SEED] [COUNT] [KARPLINT]     (run from anywhere)
set -euo pipefail
seed=${1:-1}
count=${2:-50}
here=$(cd "$(dirname "$0")" && pwd)
karplint=${3:-$here/../../target/release/karplint}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
(cd "$here/.." && go run ./gen --seed "$seed" --count "$count" --out "$out/scenarios")
bad=0
for dir in "$out"/scenarios/*/; do
	name=$(basename "$dir")
	rc=0
	"$karplint" --format json "$dir" >"$out/$name.json" 2>"$out/$name.err" || rc=$?
	if [ "$rc" -gt 1 ] || [ -s "$out/$name.err" ]; then
		echo "$name: karplint exit $rc: $(head -c 400 "$out/$name.err")"
		bad=$((bad + 1))
	elif jq -e '[.diagnostics[] | select(.rule == "parse-error" or .rule == "restricted-label-selector")] | length > 0' "$out/$name.json" >/dev/null; then
		echo "$name: $(jq -c '[.diagnostics[] | select(.rule == "parse-error" or .rule == "restricted-label-selector") | .message]' "$out/$name.json")"
		bad=$((bad + 1))
	fi
done
echo "$count scenarios of seed $seed: $bad rejected by karplint"
[ "$bad" -eq 0 ]
