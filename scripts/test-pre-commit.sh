#!/usr/bin/env bash
# Proves the pre-commit hooks work as a user would run them: `pre-commit try-repo` against
# this repository, in a temporary git repository holding fixtures. A manifest with an error
# must fail each hook, and clean ones must pass.
#
# Needs `pre-commit` on PATH (pip install pre-commit) and cargo: `language: rust` builds
# karplint with cargo install at the repository's HEAD (commit what you want tested; when the
# tree is dirty, try-repo snapshots the working tree instead). PRE_COMMIT_HOME may be set to
# reuse the built hook environment between runs.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PRE_COMMIT_HOME="${PRE_COMMIT_HOME:-$work/cache}"
export GIT_AUTHOR_NAME=karplint GIT_AUTHOR_EMAIL=karplint@example.invalid
export GIT_COMMITTER_NAME=karplint GIT_COMMITTER_EMAIL=karplint@example.invalid

fail() { echo "test-pre-commit: FAIL: $*" >&2; exit 1; }

cd "$work"
git init -q repo
cd repo

mkdir -p platform apps
cat > platform/limits.yaml <<'YAML'
apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
  namespace: shop
spec:
  limits:
    - type: Container
      defaultRequest: {cpu: 100m, memory: 128Mi}
YAML
cat > apps/good.yaml <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.27
YAML
cat > .karplint.yaml <<'YAML'
context: [platform]
YAML
git add -A
git commit -qm fixtures

run() { # hook, extra args...; prints output, returns pre-commit's status
  local hook="$1"; shift
  pre-commit try-repo "$repo" "$hook" "$@" > "$work/out.txt" 2>&1
  local rc=$?
  cat "$work/out.txt"
  return $rc
}

start=$(date +%s)
echo "== karplint, clean repository: must pass (the LimitRange in platform/ is seen)"
run karplint --all-files || fail "karplint failed on clean manifests"
echo "   (first run, including cargo install: $(( $(date +%s) - start ))s)"

echo "== karplint-changed, clean file staged: must pass with context from .karplint.yaml"
echo "# touched" >> apps/good.yaml
git add apps/good.yaml
run karplint-changed || fail "karplint-changed failed on a clean file"

echo "== karplint, a manifest with an error: must fail"
cat > apps/bad.yaml <<'YAML'
apiVersion: v1
kind: PersistentVolume
metadata:
  name: legacy
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  awsElasticBlockStore:
    volumeID: vol-0123456789abcdef0
YAML
git add apps/bad.yaml
if run karplint --all-files; then fail "karplint passed with apps/bad.yaml"; fi
grep -q "in-tree-storage-plugin" "$work/out.txt" || fail "karplint output does not name the rule"

echo "== karplint-changed, bad file staged: must fail"
if run karplint-changed; then fail "karplint-changed passed with apps/bad.yaml"; fi
grep -q "apps/bad.yaml" "$work/out.txt" || fail "karplint-changed output does not name the file"

echo "test-pre-commit: 4 passed, 0 failed ($(( $(date +%s) - start ))s)"
