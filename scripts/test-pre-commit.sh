#!/usr/bin/env bash
# Proves the pre-commit hooks work as a user would run them: `pre-commit try-repo` against
# this repository, in a temporary git repository holding fixtures. A manifest with an error
# must fail each hook, and clean ones must pass; `karplint-diff` fails only on what the
# staged change adds.
#
# Needs `pre-commit` on PATH (pip install pre-commit) and cargo: `language: rust` builds
# karplint with cargo install at the repository's HEAD (when the tree is dirty, try-repo
# snapshots the working tree instead). KARPLINT_PRE_COMMIT_TARGET may name a cargo target
# directory to keep between runs.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# try-repo installs the hooks into a fresh temporary store on every call (PRE_COMMIT_HOME
# is not used), so `language: rust` runs `cargo install` each time: a shared target
# directory makes every install after the first rebuild only the karplint crate.
export CARGO_TARGET_DIR="${KARPLINT_PRE_COMMIT_TARGET:-$work/target}"
# The hook binary only has to work, not be fast: skip LTO so those rebuilds take seconds.
export CARGO_PROFILE_RELEASE_LTO="${CARGO_PROFILE_RELEASE_LTO:-false}"
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS="${CARGO_PROFILE_RELEASE_CODEGEN_UNITS:-16}"
export CARGO_PROFILE_RELEASE_OPT_LEVEL="${CARGO_PROFILE_RELEASE_OPT_LEVEL:-0}"
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

run() { # try-repo args...; prints the output, returns pre-commit's status
  pre-commit try-repo "$repo" "$@" > "$work/out.txt" 2>&1
  local rc=$?
  cat "$work/out.txt"
  return $rc
}
hook_line() { # hook name as printed, Passed|Failed
  grep -Eq "^$1\.+$2\$" "$work/out.txt"
}

start=$(date +%s)
echo "== 1. clean repository, all files: both hooks pass (the LimitRange in platform/ is seen)"
run --all-files || fail "hooks failed on clean manifests"
hook_line 'karplint' Passed || fail "karplint did not pass"
hook_line 'karplint \(changed files\)' Passed || fail "karplint-changed did not pass"
# No NodePool in the repository: a passing hook still shows that the scheduling rules did
# not run (`verbose: true`).
grep -q "no NodePool or Provisioner found" "$work/out.txt" || fail "a pass without NodePools was silent"
echo "   (first run, including cargo install: $(( $(date +%s) - start ))s)"

echo "== 2. a committed manifest with an error, a clean file changed:"
echo "      karplint (whole repository) fails, karplint-changed (changed file only) passes"
cat > apps/legacy.yaml <<'YAML'
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
git add apps/legacy.yaml
git commit -qm "legacy volume"
echo "# touched" >> apps/good.yaml
git add apps/good.yaml
if run; then fail "hooks passed with apps/legacy.yaml in the repository"; fi
hook_line 'karplint' Failed || fail "karplint did not fail on the repository"
grep -q "in-tree-storage-plugin" "$work/out.txt" || fail "karplint output does not name the rule"
hook_line 'karplint \(changed files\)' Passed || fail "karplint-changed looked beyond the changed file"

echo "== 3. the bad manifest changed: karplint-changed fails"
echo "# touched" >> apps/legacy.yaml
git add apps/legacy.yaml
if run karplint-changed; then fail "karplint-changed passed with apps/legacy.yaml changed"; fi
hook_line 'karplint \(changed files\)' Failed || fail "karplint-changed did not fail"
grep -q "apps/legacy.yaml" "$work/out.txt" || fail "karplint-changed output does not name the file"

echo "== 4. karplint-diff: the staged change against HEAD; what HEAD already has is not new"
run karplint-diff || fail "karplint-diff failed on a change that adds nothing (legacy.yaml is at HEAD)"
hook_line 'karplint \(what the change does\)' Passed || fail "karplint-diff did not pass"
grep -q "karplint diff HEAD → working tree" "$work/out.txt" || fail "karplint-diff output has no headline"
sed 's/legacy/legacy-two/; s/vol-0123456789abcdef0/vol-0123456789abcdef1/' apps/legacy.yaml > apps/legacy-two.yaml
git add apps/legacy-two.yaml
if run karplint-diff; then fail "karplint-diff passed with a new error staged"; fi
hook_line 'karplint \(what the change does\)' Failed || fail "karplint-diff did not fail"
grep -q "apps/legacy-two.yaml" "$work/out.txt" || fail "karplint-diff output does not name the new file"
if grep -q "apps/legacy.yaml:" "$work/out.txt"; then fail "karplint-diff reported a finding HEAD already has"; fi

echo "test-pre-commit: 4 passed, 0 failed ($(( $(date +%s) - start ))s)"
