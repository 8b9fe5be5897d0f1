#!/usr/bin/env bash
# The GitHub Action's logic (action.yml only maps inputs to INPUT_* variables):
# install karplint, run it in $GITHUB_WORKSPACE, print the chosen format to the log, append
# a Markdown summary to $GITHUB_STEP_SUMMARY, write SARIF when asked, and exit with
# karplint's exit code. A check that did not run (no NodePool read) is a ::warning in the
# log whatever the format, and a warning line of the summary.
#
# Every file it writes lies under $RUNNER_TEMP, never in the checked-out tree, where a pull
# request could plant a link that a write would follow: the summary in a fresh directory,
# the SARIF at `sarif-file` taken relative to $RUNNER_TEMP (its absolute path is the output
# `sarif-file`).
#
# Install, in order:
#   1. $KARPLINT_BIN, when set (tests, or a binary installed by an earlier step);
#   2. when the action is pinned to a commit (the ref, the last component of
#      $GITHUB_ACTION_PATH or else $ACTION_REF, is 40 hex digits) and no INPUT_VERSION is given: that
#      commit's code, with cargo (step 4) — never a release of another version;
#   3. the release archive for INPUT_VERSION (default: the version in the action's
#      Cargo.toml, i.e. the release matching the tag the workflow pinned; `source` skips it):
#        $KARPLINT_RELEASE_URL/v<version>/karplint-<version>-<target>.tar.gz
#      holding a `karplint` binary, where <target> is x86_64-unknown-linux-gnu,
#      aarch64-unknown-linux-gnu, x86_64-apple-darwin or aarch64-apple-darwin; the archive
#      must match its line in $KARPLINT_RELEASE_URL/v<version>/SHA256SUMS (a mismatch, or
#      no checksum for it, fails the step: it is never run nor replaced by a build);
#   4. cargo install --locked --path "$GITHUB_ACTION_PATH" (the action's own checkout),
#      also when the release cannot be downloaded.
# KARPLINT_RELEASE_URL defaults to https://github.com/karplint/karplint/releases/download
# and may be any URL curl reads, file:// included (a mirror, or tests).
#
# `path` and `context` take one path per line, spaces kept; a single line is split on
# spaces unless it names an existing path as a whole.
#
# `mode: diff` (the default on pull_request events, when neither `path` nor `baseline` is
# given) runs `karplint diff BASE HEAD` in the
# workspace instead (BASE: the `base` input, else origin/$GITHUB_BASE_REF, fetched when
# missing), and writes its Markdown as the job summary and as one comment on the pull
# request, found by its hidden first line (`<!-- karplint-diff -->`) and updated in place
# on each push, through the REST API at $GITHUB_API_URL with the `github-token` input.
set -uo pipefail
set -f # inputs are split on whitespace, never globbed

log() { echo "karplint-action: $*" >&2; }

action_path="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}"
workspace="${GITHUB_WORKSPACE:-$PWD}"
tmp="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
release_url="${KARPLINT_RELEASE_URL:-https://github.com/karplint/karplint/releases/download}"
version="${INPUT_VERSION:-}"
version="${version#v}"
# The ref the workflow pinned: the directory the runner checked the action out to
# (_actions/<owner>/<repo>/<ref>), else GitHub's `github.action_ref` (which a composite
# action nested in another sees as the outer one's: actions/runner#2473).
case "$action_path" in
  */_actions/*/*/*) action_ref="$(basename -- "$action_path")" ;;
  *) action_ref="${ACTION_REF:-}" ;;
esac
if [ -z "$version" ] && [[ "$action_ref" =~ ^[0-9a-fA-F]{40}$ ]]; then
  log "action pinned to commit $action_ref: building that commit"
  version=source
fi
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

sha256_of() {
  if command -v sha256sum >/dev/null; then sha256sum < "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null; then shasum -a 256 < "$1" | cut -d' ' -f1
  else return 1
  fi
}

# Downloads and verifies the release archive; prints the binary's path. Returns 1 when
# there is no release to download (the caller builds from source) and exits 2 when the
# archive cannot be verified.
install_release() {
  [ -n "$version" ] && [ "$version" != source ] || return 1
  command -v curl >/dev/null || return 1
  local target dir base archive expected actual
  target="$(target_triple)" || return 1
  dir="$tmp/karplint-$version"
  base="$release_url/v$version"
  archive="karplint-$version-$target.tar.gz"
  mkdir -p "$dir" || return 1
  log "downloading $base/$archive"
  curl -fsSL --retry 3 "$base/$archive" -o "$dir/$archive" || return 1
  if ! curl -fsSL --retry 3 "$base/SHA256SUMS" -o "$dir/SHA256SUMS"; then
    log "cannot download $base/SHA256SUMS to verify $archive; refusing to run it"
    exit 2
  fi
  expected="$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1; exit }' "$dir/SHA256SUMS")"
  if [ -z "$expected" ]; then
    log "SHA256SUMS of v$version has no checksum for $archive; refusing to run it"
    exit 2
  fi
  actual="$(sha256_of "$dir/$archive")" || { log "no sha256sum or shasum to verify $archive"; exit 2; }
  if [ "$actual" != "$expected" ]; then
    log "checksum mismatch for $archive: SHA256SUMS says $expected, the download is $actual; refusing to run it"
    exit 2
  fi
  log "verified $archive (sha256 $actual)"
  tar -xzf "$dir/$archive" -C "$dir" || return 1
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
else
  bin="$(install_release)"
  status=$?
  # Exit status 2: an archive that does not match its checksum; never fall back.
  [ "$status" -eq 2 ] && exit 2
  if [ "$status" -ne 0 ]; then
    [ -n "$version" ] && [ "$version" != source ] && log "no release binary for $version; building from source"
    bin="$(install_source)" || { log "cargo install failed"; exit 2; }
  fi
fi

# Splits a path input: one path per line, spaces kept; a single line is split on spaces
# unless it names an existing path (relative to the workspace) as a whole.
# The paths are left in the array `split`.
split_paths() {
  local input="$1" line p
  split=()
  if [[ "$input" != *$'\n'* ]]; then
    input="${input#"${input%%[![:space:]]*}"}"
    input="${input%"${input##*[![:space:]]}"}"
    [ -n "$input" ] || return 0
    local whole="$workspace/$input"
    case "$input" in /*) whole="$input" ;; esac
    if [ -e "$whole" ]; then
      split+=("$input")
    else
      for p in $input; do split+=("$p"); done
    fi
    return 0
  fi
  while IFS= read -r line; do
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    [ -n "$line" ] && split+=("$line")
  done <<< "$input"
}

# The default mode: diff on a pull request, unless the step names paths or a baseline,
# which only a lint takes (a workflow written for the lint keeps linting).
mode="${INPUT_MODE:-}"
if [ -z "$mode" ]; then
  mode=lint
  case "${GITHUB_EVENT_NAME:-}" in
    pull_request | pull_request_target)
      if [ "${INPUT_PATH:-.}" = . ] && [ -z "${INPUT_BASELINE:-}" ]; then mode=diff; fi ;;
  esac
fi
case "$mode" in
  lint | diff) ;;
  *) log "mode must be lint or diff, not '$mode'"; exit 2 ;;
esac

args=()
[ -n "${INPUT_CONFIG:-}" ] && args+=(--config "$INPUT_CONFIG")
[ -n "${INPUT_FAIL_ON:-}" ] && args+=(--fail-on "$INPUT_FAIL_ON")
split_paths "${INPUT_CONTEXT:-}"
for c in ${split[@]+"${split[@]}"}; do args+=(--context "$c"); done
[ -n "${INPUT_BASELINE:-}" ] && args+=(--baseline "$INPUT_BASELINE")
case "${INPUT_REQUIRE_NODEPOOLS:-}" in
  "" | false) ;;
  true) args+=(--require-nodepools) ;;
  *) log "require-nodepools must be true or false, not '$INPUT_REQUIRE_NODEPOOLS'"; exit 2 ;;
esac
# `args`: further flags, split on whitespace (never globbed: `set -f`).
for a in ${INPUT_ARGS:-}; do args+=("$a"); done

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
# The Markdown report is always written: it is the job summary, and it tells whether a
# check did not run (a `> **warning:**` line), which the log then says as a ::warning
# whatever its format.
summary_dir="$(mktemp -d "$tmp/karplint-summary.XXXXXX")" || exit 2
summary="$summary_dir/summary.md"
args+=(--format markdown --output "$summary")
if [ -n "$sarif" ]; then
  args+=(--format sarif --output "$sarif")
fi

split_paths "${INPUT_PATH:-.}"
paths=(.)
[ "${#split[@]}" -gt 0 ] && paths=("${split[@]}")

cd "$workspace" || exit 2
if [ "$mode" = diff ]; then
  if [ "${paths[*]}" != . ]; then
    log "mode: diff compares the whole checkout; path is for mode: lint (use the config's include/exclude)"
    exit 2
  fi
  if [ -n "${INPUT_BASELINE:-}" ]; then
    log "mode: diff takes its baseline from the base revision; baseline is for mode: lint"
    exit 2
  fi
  base="${INPUT_BASE:-}"
  if [ -z "$base" ]; then
    if [ -z "${GITHUB_BASE_REF:-}" ]; then
      log "mode: diff needs the base input outside a pull_request event"
      exit 2
    fi
    base="origin/$GITHUB_BASE_REF"
    if ! git rev-parse --verify --quiet "$base^{commit}" > /dev/null; then
      log "fetching $GITHUB_BASE_REF, the pull request's base"
      git fetch --no-tags --depth=1 origin "+refs/heads/$GITHUB_BASE_REF:refs/remotes/origin/$GITHUB_BASE_REF" >&2 ||
        log "cannot fetch $GITHUB_BASE_REF"
    fi
  fi
  "$bin" diff "$base" HEAD "${args[@]}"
else
  "$bin" "${args[@]}" -- "${paths[@]}"
fi
code=$?

# The number of the pull request the run is for: from refs/pull/N/merge, else the event.
pr_number() {
  if [[ "${GITHUB_REF:-}" =~ ^refs/pull/([0-9]+)/ ]]; then
    echo "${BASH_REMATCH[1]}"
  elif [ -f "${GITHUB_EVENT_PATH:-}" ] && command -v jq > /dev/null; then
    jq -r '.pull_request.number // empty' "$GITHUB_EVENT_PATH"
  fi
}

# Writes the Markdown file $1 as karplint's comment on the pull request: the comment whose
# first line is the marker is updated, else one is added. Failing to comment is a warning.
comment_on_pr() {
  local body="$1" pr api page id="" found ids
  local marker="<!-- karplint-diff -->"
  [ -n "${INPUT_GITHUB_TOKEN:-}" ] || { log "no github-token: no pull-request comment"; return 0; }
  pr="$(pr_number)"
  [ -n "$pr" ] || { log "no pull request number: no comment"; return 0; }
  command -v jq > /dev/null || { echo "::warning title=karplint::no jq on the runner: no pull-request comment"; return 0; }
  api="${GITHUB_API_URL:-https://api.github.com}/repos/${GITHUB_REPOSITORY:-}"
  local curl_args=(-fsS --retry 2 -H "Authorization: Bearer $INPUT_GITHUB_TOKEN"
    -H "Accept: application/vnd.github+json" -H "X-GitHub-Api-Version: 2022-11-28")
  for page in $(seq 1 50); do
    found="$(curl "${curl_args[@]}" "$api/issues/$pr/comments?per_page=100&page=$page")" || {
      echo "::warning title=karplint::cannot list the comments of pull request #$pr (does the token have pull-requests: write?)"
      return 0
    }
    ids="$(jq -r --arg m "$marker" '.[] | select((.body // "") | startswith($m)) | .id' <<< "$found")"
    id="${ids%%$'\n'*}"
    [ -n "$id" ] && break
    [ "$(jq 'length' <<< "$found")" -lt 100 ] && break
  done
  jq -Rs '{body: .}' < "$body" > "$summary_dir/comment.json" || return 0
  if [ -n "$id" ]; then
    curl "${curl_args[@]}" -X PATCH --data @"$summary_dir/comment.json" \
      "$api/issues/comments/$id" > /dev/null &&
      log "updated the comment on pull request #$pr"
  else
    curl "${curl_args[@]}" -X POST --data @"$summary_dir/comment.json" \
      "$api/issues/$pr/comments" > /dev/null &&
      log "commented on pull request #$pr"
  fi || echo "::warning title=karplint::cannot write the comment on pull request #$pr (does the token have pull-requests: write?)"
}

if [ -f "$summary" ]; then
  # The github format already made these lines ::warning annotations.
  if [ "${INPUT_FORMAT:-github}" != github ]; then
    while IFS= read -r line; do
      warning="${line#'> **warning:** '}"
      # On standard error, which the runner reads for workflow commands too: standard
      # output holds the report (JSON or SARIF a later step may parse).
      [ "$warning" != "$line" ] && echo "::warning title=karplint checks-not-run::$warning" >&2
    done < "$summary"
  fi
  [ -n "${GITHUB_STEP_SUMMARY:-}" ] && cat "$summary" >> "$GITHUB_STEP_SUMMARY"
  [ "$mode" = diff ] && [ "$code" -lt 2 ] && comment_on_pr "$summary"
fi
rm -rf -- "$summary_dir"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "exit-code=$code" >> "$GITHUB_OUTPUT"
  if [ -n "$sarif" ]; then echo "sarif-file=$sarif" >> "$GITHUB_OUTPUT"; fi
fi
exit "$code"
