#!/usr/bin/env bash
# Scaffolds a new rule: the files a rule author touches, with TODO markers where the rule's
# own knowledge goes (see CONTRIBUTING.md, "Adding a rule").
#
#   scripts/new-rule.sh [--root DIR] RULE-ID error|warning|info "summary"
#
# Creates src/rules/<rule_id>.rs (declare_rule! and an empty `impl Rule`),
# lints/<rule-id>.md (the sections every rule doc has), fixtures/<rule-id>/fire.yaml and
# quiet.yaml, and inserts the rule's line into the `rules!` list of src/rules/mod.rs in
# id order. DIR (default: the repository holding this script) is where those paths are.
# Exit codes: 0 done, 2 bad arguments, an existing id, or a src/rules/mod.rs it cannot read;
# nothing is written unless every check passes.
set -euo pipefail
export LC_ALL=C

usage="usage: scripts/new-rule.sh [--root DIR] RULE-ID error|warning|info \"summary\""
die() {
    echo "new-rule: $*" >&2
    exit 2
}

root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ "${1:-}" == "--root" ]]; then
    [[ $# -ge 2 ]] || die "$usage"
    root="$2"
    shift 2
fi
[[ $# -eq 3 ]] || die "$usage"
id="$1"
severity="$2"
summary="$3"

[[ "$id" =~ ^[a-z][a-z0-9]*(-[a-z0-9]+)*$ ]] ||
    die "rule id \"$id\" is not kebab-case (lower-case words joined by single '-', e.g. untolerated-taint)"
case "$severity" in
    error) variant=Error ;;
    warning) variant=Warning ;;
    info) variant=Info ;;
    *) die "severity \"$severity\" is not one of error, warning, info" ;;
esac
[[ -n "$summary" ]] || die "the summary is empty: give the one line \`karplint rules\` prints"
[[ "$summary" != *$'\n'* ]] || die "the summary must be one line"

module="${id//-/_}"
name="$(awk -F- '{ for (i = 1; i <= NF; i++) printf "%s%s", toupper(substr($i, 1, 1)), substr($i, 2) }' <<<"$id")"
mod_rs="$root/src/rules/mod.rs"
rule_rs="$root/src/rules/$module.rs"
doc="$root/lints/$id.md"
fixtures="$root/fixtures/$id"

[[ -f "$mod_rs" ]] || die "$mod_rs not found (is --root the repository root?)"
[[ "$id" != showcase ]] || die "rule id \"showcase\" already exists as fixtures/showcase/"
for existing in "$rule_rs" "$doc" "$fixtures"; do
    [[ ! -e "$existing" ]] || die "rule \"$id\" already exists: ${existing#"$root"/}"
done
if grep -q "\"$id\"" "$mod_rs" || grep -Eq "^    (mod )?[a-z0-9_]+::$name,$" "$mod_rs"; then
    die "rule \"$id\" already exists: src/rules/mod.rs names it"
fi

# src/rules/mod.rs with the rule's line in the `rules!` list, in id order (read from each
# entry's struct name, since rules in a folder such as scheduling/ share a module prefix).
new_mod_rs="$(mktemp)"
trap 'rm -f "$new_mod_rs"' EXIT
awk -v module="$module" -v id="$id" -v name="$name" '
    function kebab(camel,    i, c, out) {
        for (i = 1; i <= length(camel); i++) {
            c = substr(camel, i, 1)
            if (c ~ /[A-Z]/) { out = out (i > 1 ? "-" : "") tolower(c) } else { out = out c }
        }
        return out
    }
    function flush() { if (!done) { print "    mod " module "::" name ","; done = 1 } }
    /^rules! \{$/ { in_list = 1; print; next }
    in_list && /^    (mod )?[a-z0-9_]+::[A-Za-z0-9]+,$/ {
        e = $NF; sub(/^.*::/, "", e); sub(/,$/, "", e)
        if (kebab(e) > id) flush()
        print; next
    }
    in_list && /^\}$/ { flush(); in_list = 0 }
    { print }
    END { if (!done) exit 3 }
' "$mod_rs" >"$new_mod_rs" ||
    die "cannot find the \`rules!\` list in src/rules/mod.rs"

escaped="${summary//\\/\\\\}"
escaped="${escaped//\"/\\\"}"

mkdir -p "$fixtures"
cat >"$rule_rs" <<EOF
//! \`$id\`: TODO: one paragraph on what this rule finds and why karplint checks it.

use super::Rule;

declare_rule!(
    $name,
    "$id",
    $variant,
    "$escaped"
);

impl Rule for $name {
    // Findings about one linted object, with Karpenter's verdict on its pod template
    // (\`o.verdict()\`); needs \`use super::{Context, Findings, Placed};\` and
    // \`use crate::diagnostic::Finding;\`. Findings that need the whole run go in
    // \`check_run(&self, cx: &Context, workloads: &Workloads, out: &mut Vec<Finding>)\`.
    //
    // fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
    //     let span = o.obj.name_span(); // TODO: the exact offending key or value
    //     out.push(
    //         META.finding(o.obj, span, "lower-case message, no period")
    //             .help("TODO: an imperative sentence that says how to fix it"),
    //     );
    // }
}
EOF
if command -v rustfmt >/dev/null 2>&1; then
    rustfmt --edition 2024 "$rule_rs" || true
fi

cat >"$doc" <<EOF
# $id

## What it checks
TODO: what karplint looks at and when this rule fires (and when it deliberately does not).

## Why it matters
TODO: the failure users see: quote the Karpenter event or kubelet error (e.g.
\`Failed to schedule pod, …\`) so it can be searched.

## Example
\`\`\`yaml
# TODO: a complete manifest that fires $id
\`\`\`

## Fix
\`\`\`yaml
# TODO: the example above, fixed, which does not fire $id
\`\`\`
EOF

cat >"$fixtures/fire.yaml" <<EOF
# TODO: objects that must fire $id, each line it reports on marked \`# expect: $id\`
# (tests/fixtures.rs lints every fire* file on its own).
EOF
cat >"$fixtures/quiet.yaml" <<EOF
# TODO: objects close to fire.yaml that must not fire $id (every quiet* file).
EOF

cp "$new_mod_rs" "$mod_rs"

cat <<EOF
created src/rules/$module.rs, lints/$id.md, fixtures/$id/fire.yaml, fixtures/$id/quiet.yaml
registered $name in src/rules/mod.rs
next: write the hook, the doc's TODOs and the fixtures; add a \`| \`$id\` | $severity | … |\`
row to README.md's rules table; then \`KARPLINT_BLESS=1 cargo test --test fixtures\` to mark the lines it
reports on, \`INSTA_UPDATE=always cargo test --test rules\` (or
\`cargo insta review\`) to write tests/snapshots/rules__fixtures__$id.snap, and review it
EOF
