#!/usr/bin/env bash
# Proves the Python distribution works as a user gets it: builds the wheel of the karplint
# binary with maturin (pyproject.toml), installs it into a fresh virtual environment and
# runs it, then runs the hooks of the pre-commit mirror (pre-commit-mirror/, `language:
# python`) through `pre-commit try-repo`, which pip-installs the mirror and, through its
# `karplint==VERSION` dependency, this wheel: no Rust toolchain or compile in the hook's
# install. Prints how long each install took.
#
# Needs python3 with venv and pip, and cargo (to build the wheel). maturin, setuptools and
# pre-commit come from PyPI into a tools environment of their own; the wheel is installed
# with --no-index, so only the locally built karplint is ever installed.
# KARPLINT_WHEEL_PROFILE (default release) is the cargo profile of the binary in the wheel:
# `dev` reuses the debug build of `cargo test` and takes seconds.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
profile="${KARPLINT_WHEEL_PROFILE:-release}"
export GIT_AUTHOR_NAME=karplint GIT_AUTHOR_EMAIL=karplint@example.invalid
export GIT_COMMITTER_NAME=karplint GIT_COMMITTER_EMAIL=karplint@example.invalid
export PIP_DISABLE_PIP_VERSION_CHECK=1

fail() { echo "test-wheel: FAIL: $*" >&2; exit 1; }
seconds() { echo $(( $(date +%s) - $1 )); }

version="$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$repo/Cargo.toml" | head -n1)"

echo "== tools: maturin, setuptools, pre-commit"
python3 -m venv "$work/tools"
"$work/tools/bin/pip" install --quiet "maturin>=1.7,<2" pre-commit
mkdir -p "$work/wheels"
# The mirror is built offline too: its build backend goes beside the wheel.
"$work/tools/bin/pip" download --quiet --only-binary :all: --dest "$work/wheels" "setuptools>=61"

echo "== 1. build the wheel (profile $profile)"
start=$(date +%s)
(cd "$repo" && "$work/tools/bin/maturin" build --quiet --locked --profile "$profile" --out "$work/wheels")
wheel="$(ls "$work/wheels"/karplint-"$version"-*.whl)" || fail "no karplint-$version wheel built"
echo "   $(basename "$wheel"): $(du -k "$wheel" | cut -f1) KiB, built in $(seconds "$start")s"

echo "== 2. install it into a fresh venv and run it"
python3 -m venv "$work/venv"
start=$(date +%s)
"$work/venv/bin/pip" install --quiet --no-index "$wheel"
echo "   installed in $(seconds "$start")s"
"$work/venv/bin/karplint" --version | grep -qx "karplint $version" || fail "karplint --version"
set +e
"$work/venv/bin/karplint" "$repo/fixtures/showcase" > "$work/showcase.txt" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat "$work/showcase.txt"; fail "the showcase exited $rc, not 1"; }
echo "   karplint fixtures/showcase: exit 1, $(grep "^karplint:" "$work/showcase.txt")"

echo "== 3. the pre-commit mirror's hooks, installed from the wheel"
cp -R "$repo/pre-commit-mirror" "$work/mirror"
(cd "$work/mirror" && git init -q && git add -A && git commit -qm mirror)
git init -q "$work/repo"
cd "$work/repo"
cat > web.yaml <<'YAML'
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
git add -A && git commit -qm fixtures
start=$(date +%s)
set +e
PIP_NO_INDEX=1 PIP_FIND_LINKS="$work/wheels" PRE_COMMIT_HOME="$work/pre-commit-home" \
  "$work/tools/bin/pre-commit" try-repo "$work/mirror" karplint --all-files > "$work/out.txt" 2>&1
rc=$?
set -e
cat "$work/out.txt"
[ "$rc" -ne 0 ] || fail "the hook passed with an in-tree volume"
grep -Eq '^karplint\.+Failed$' "$work/out.txt" || fail "the karplint hook did not run and fail"
grep -q "in-tree-storage-plugin" "$work/out.txt" || fail "the hook's output does not name the rule"
echo "test-wheel: 3 passed, 0 failed (try-repo with the hook's install: $(seconds "$start")s)"
