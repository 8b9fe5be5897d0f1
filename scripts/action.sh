#!/usr/bin/env bash
# The GitHub Action's logic (action.yml only maps inputs to INPUT_* variables):
# install karplint, run it in $GITHUB_WORKSPACE, print the chosen format to the log, append
# a Markdown summary to $GITHUB_STEP_SUMMARY, write SARIF when asked, and exit with
# karplint's exit code.
#
# Every file it writes lies under $RUNNER_TEMP, never in the checked-out tree, where a pull
# request could plant a link that a write would follow: the summary in a fresh directory,
# the SARIF at `sarif-file` taken relative to $RUNNER_TEMP (its absolute path is the output
# `sarif-file`).
#
# Install, in order:
#   1. $KARPLINT_BIN, when set (tests, or a binary installed by an earlier step);
#   2. the release archive for INPUT_VERSION (default: the version in the action's
#      Cargo.toml, i.e. the release matching the tag the workflow pinned; `source` skips it):
#        $KARPLINT_RELEASE_URL/v<version>/karplint-<version>-<target>.tar.gz
#      holding a `karplint` binary, where <target> is x86_64-unknown-linux-gnu,
#      aarch64-unknown-linux-gnu, x86_64-apple-darwin or aarch64-apple-darwin;
#   3. cargo install --locked --path "$GITHUB_ACTION_PATH" (the action's own checkout).
set -uo pipefail
set -f # inputs are split on whitespace, never globbed

log() { echo "karplint-action: $*" >&2; }

action_path="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}"
workspace="${GITHUB_WORKSPACE:-$PWD}"
tmp="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
release_url="${KARPLINT_RELEASE_URL:-https://github.com/karplint/karplint/releases/download}"
version="${INPUT_VERSION:-}"
version="${version#v}"
if [ -z "$version" ]; then
  # Default: the release matching the action's own checkout (its Cargo.toml version).
  while IFS= read -r line; do
    if [[ "$line" =~ ^version\ *=\ *\"([^\"]+)\" ]]; then version="${BASH_REMATCH[1]}"; break; fi
  done < "$action_path/Cargo.toml"
fi

target_triple() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo x86_64-unknown-linux-gnu ;;
    Linux-aarch64 | Linux-arm64) echo aarch64-unknown-linux-gnu ;;
    Darwin-x86_64) echo x86_64-apple-darwin ;;
    Darwin-arm64) echo aarch64-apple-darwin ;;
    *) return 1 ;;
  esac
}

install_release() {
  [ -n "$version" ] && [ "$version" != source ] || return 1
  command -v curl >/dev/null || return 1
  local target dir url
  target="$(target_triple)" || return 1
  dir="$tmp/karplint-$version"
  url="$release_url/v$version/karplint-$version-$target.tar.gz"
  mkdir -p "$dir" || return 1
  log "downloading $url"
  curl -fsSL --retry 3 "$url" -o "$dir/karplint.tar.gz" || return 1
  tar -xzf "$dir/karplint.tar.gz" -C "$dir" || return 1
  [ -x "$dir/karplint" ] || return 1
  echo "$dir/karplint"
}

install_source() {
  local root="$tmp/karplint-source"
  log "building karplint from $action_path with cargo install --locked"
  cargo install --locked --quiet --path "$action_path" --root "$root" >&2 || return 1
  echo "$root/bin/karplint"
}

if [ -n "${KARPLINT_BIN:-}" ]; then
  bin="$KARPLINT_BIN"
elif ! bin="$(install_release)"; then
  [ -n "$version" ] && [ "$version" != source ] && log "no release binary for $version; building from source"
  bin="$(install_source)" || { log "cargo install failed"; exit 2; }
fi

args=()
[ -n "${INPUT_CONFIG:-}" ] && args+=(--config "$INPUT_CONFIG")
[ -n "${INPUT_FAIL_ON:-}" ] && args+=(--fail-on "$INPUT_FAIL_ON")
for c in ${INPUT_CONTEXT:-}; do args+=(--context "$c"); done

# The SARIF file: under $RUNNER_TEMP, outside the checkout.
sarif=""
if [ -n "${INPUT_SARIF_FILE:-}" ]; then
  case "/$INPUT_SARIF_FILE/" in
    */../*) log "sarif-file must not contain '..': $INPUT_SARIF_FILE"; exit 2 ;;
  esac
  case "$INPUT_SARIF_FILE" in
    /*) sarif="$INPUT_SARIF_FILE" ;;
    *) sarif="$tmp/$INPUT_SARIF_FILE" ;;
  esac
  sarif_dir="$(dirname -- "$sarif")"
  mkdir -p -- "$sarif_dir" || exit 2
  sarif_dir="$(cd -- "$sarif_dir" && pwd -P)" || exit 2
  workspace_real="$(cd -- "$workspace" && pwd -P)" || exit 2
  case "$sarif_dir/" in
    "$workspace_real"/*)
      log "sarif-file $INPUT_SARIF_FILE lies in the checked-out tree ($workspace); give a path under \$RUNNER_TEMP"
      exit 2 ;;
  esac
  sarif="$sarif_dir/$(basename -- "$sarif")"
  # Never write through a link left at that name.
  if [ -L "$sarif" ]; then rm -f -- "$sarif" || exit 2; fi
fi

# Formats pair with outputs in order: the log, then the summary, then SARIF.
args+=(--format "${INPUT_FORMAT:-github}" --output -)
summary=""
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  summary_dir="$(mktemp -d "$tmp/karplint-summary.XXXXXX")" || exit 2
  summary="$summary_dir/summary.md"
  args+=(--format markdown --output "$summary")
fi
if [ -n "$sarif" ]; then
  args+=(--format sarif --output "$sarif")
fi

paths=()
for p in ${INPUT_PATH:-.}; do paths+=("$p"); done

cd "$workspace" || exit 2
"$bin" "${args[@]}" -- "${paths[@]}"
code=$?

if [ -n "$summary" ] && [ -f "$summary" ]; then
  cat "$summary" >> "$GITHUB_STEP_SUMMARY"
fi
if [ -n "$summary" ]; then
  rm -rf -- "$summary_dir"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "exit-code=$code" >> "$GITHUB_OUTPUT"
  if [ -n "$sarif" ]; then echo "sarif-file=$sarif" >> "$GITHUB_OUTPUT"; fi
fi
exit "$code"
