//! Living with karplint at volume and in pipelines, on the built binary: `plan` takes
//! every output flag lint takes, the human report says the severity and rule in words and
//! ends with counts per rule, `--statistics`, `--format concise`, `--quiet`, `--color`,
//! cut lists that say how many more, GitHub annotations in order and counted, Markdown
//! capped below GitHub's 1 MiB.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn karplint() -> Command {
    let mut c = Command::cargo_bin("karplint").expect("binary");
    c.env_remove("NO_COLOR")
        .env_remove("FORCE_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("KARPLINT_TIMINGS")
        .env("COLUMNS", "100")
        .arg("--no-config");
    c
}

/// Runs karplint; (exit code, stdout, stderr).
fn run(c: &mut Command) -> (i32, String, String) {
    let out = c.output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    (
        out.status.code().expect("exited"),
        String::from_utf8(out.stdout).expect("UTF-8"),
        stderr,
    )
}

const PENDING: &str = "fixtures/untolerated-taint/fire-no-toleration.yaml";
const PLACED: &str = "fixtures/untolerated-taint/quiet-tainted-and-plain.yaml";
const SHOWCASE: &str = "fixtures/showcase";

#[test]
fn global_flags_stand_before_the_subcommand() {
    for flags in [&["-j", "2"][..], &["--no-color"], &["--color", "never"]] {
        let (code, out, err) = run(karplint().args(flags).args(["plan", PLACED]));
        assert_eq!(code, 0, "{flags:?}: {err}");
        assert!(out.starts_with("WORKLOAD"), "{flags:?}: {out}");
    }
    // After it too, and the same run.
    let before = run(karplint().args(["-j", "1", "plan", PLACED]));
    let after = run(karplint().args(["plan", "-j", "1", PLACED]));
    assert_eq!(before, after);
}

#[test]
fn plan_rows_say_where_the_workload_is_written() {
    let (_, out, _) = run(karplint().args(["plan", "--format", "json", PENDING]));
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["version"], 1, "{v:#}");
    let row = &v["workloads"][0];
    assert_eq!(row["file"], PENDING, "{row:#}");
    let text = std::fs::read_to_string(PENDING).expect("fixture");
    let line = row["line"].as_u64().expect("line") as usize;
    let name = row["object"]["name"].as_str().expect("name");
    assert_eq!(
        text.lines().nth(line - 1).map(str::trim),
        Some(format!("name: {name}").as_str()),
        "{row:#}"
    );
    assert_eq!(row["column"], 9, "{row:#}");
    let (_, table, _) = run(karplint().args(["plan", PENDING]));
    assert!(
        table.lines().next().unwrap_or("").contains("LOCATION"),
        "{table}"
    );
    assert!(table.contains(&format!("{PENDING}:{line}")), "{table}");
}

#[test]
fn plan_fails_on_pending_workloads_unless_fail_on_never() {
    assert_eq!(run(karplint().args(["plan", PENDING])).0, 1);
    assert_eq!(
        run(karplint().args(["plan", "--fail-on", "warning", PENDING])).0,
        1
    );
    assert_eq!(
        run(karplint().args(["plan", "--fail-on", "never", PENDING])).0,
        0
    );
    assert_eq!(run(karplint().args(["plan", PLACED])).0, 0);
    // --quiet lists only the workloads that fail the run: two whose pod no NodePool takes,
    // one whose third replica the batch leaves Pending.
    let (code, out, _) = run(karplint().args(["plan", "--quiet", SHOWCASE]));
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 3, "{out}");
    assert_eq!(
        out.lines().filter(|l| l.contains("(pending)")).count(),
        2,
        "{out}"
    );
    assert!(out.contains(" 3 (1 pending) "), "{out}");
}

#[test]
fn plan_writes_every_lint_format_or_refuses_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("plan.json");
    let (code, md, err) = run(karplint()
        .args([
            "plan", "--format", "markdown", "--format", "json", "-o", "-", "-o",
        ])
        .arg(&json)
        .arg(PENDING));
    assert_eq!(code, 1, "{err}");
    assert!(md.starts_with("## karplint plan\n"), "{md}");
    assert!(md.contains("| Workload | Location |"), "{md}");
    assert!(md.contains(&format!("`{PENDING}:")), "{md}");
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("written")).expect("JSON");
    assert_eq!(v["workloads"][0]["outcome"], "pending", "{v:#}");
    let (_, concise, _) = run(karplint().args(["plan", "--format", "concise", PENDING]));
    assert!(
        concise.starts_with(&format!("{PENDING}:")) && concise.contains(": pending: Deployment "),
        "{concise}"
    );
    for format in ["sarif", "github"] {
        let (code, out, err) = run(karplint().args(["plan", "--format", format, PENDING]));
        assert_eq!(code, 2, "{format}: {out}");
        assert!(
            err.contains(&format!("`plan` has no {format} format")),
            "{err}"
        );
        assert!(out.is_empty(), "{out}");
    }
}

#[test]
fn human_findings_read_like_rustc() {
    let (code, out, _) = run(karplint().arg(SHOWCASE));
    assert_eq!(code, 1);
    assert!(
        out.starts_with("warning[missing-limit-range]: namespace \"shop\""),
        "{out}"
    );
    assert!(
        out.contains("\nerror[incompatible-requirements]: no NodePool can schedule this pod"),
        "{out}"
    );
    assert!(
        out.contains("\nnote: NodePool \"general\" (weight 10): "),
        "{out}"
    );
    assert!(!out.contains("Advice"), "{out}");
    assert!(!out.contains(" \n"), "a line ends with a space:\n{out}");
    // The closing summary: counts per rule, errors first, and where to read more.
    let summary = out
        .split("findings by rule:\n")
        .nth(1)
        .expect("a summary by rule");
    assert!(
        summary.starts_with("  in-tree-storage-plugin         1 error(s), 1 warning(s)\n"),
        "{summary}"
    );
    assert!(
        summary.contains("  missing-resource-requests      2 warning(s)\n"),
        "{summary}"
    );
    assert!(summary.contains("`karplint explain RULE`"), "{summary}");
    assert!(summary.contains("karplint: 2 file(s)"), "{summary}");
}

#[test]
fn statistics_count_per_rule_and_severity() {
    let (code, out, _) = run(karplint().args(["--statistics", SHOWCASE]));
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["RULE", "ERROR", "WARNING", "INFO", "TOTAL"]
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["in-tree-storage-plugin", "1", "1", "0", "2"]
    );
    let total = lines
        .iter()
        .find(|l| l.starts_with("TOTAL"))
        .expect("total");
    assert_eq!(
        total.split_whitespace().collect::<Vec<_>>(),
        ["TOTAL", "4", "7", "0", "11"]
    );
    assert!(!out.contains('╭'), "no snippets:\n{out}");
}

#[test]
fn concise_is_one_line_per_finding() {
    let (_, json, _) = run(karplint().args(["--format", "json", SHOWCASE]));
    let json: Value = serde_json::from_str(&json).expect("JSON");
    let (code, out, _) = run(karplint().args(["--format", "concise", "--quiet", SHOWCASE]));
    assert_eq!(code, 1);
    let expected: Vec<String> = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            format!(
                "{}:{}:{}: error[{}] {}",
                d["file"].as_str().unwrap_or(""),
                d["line"],
                d["column"],
                d["rule"].as_str().unwrap_or(""),
                d["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);
    let (_, all, _) = run(karplint().args(["--format", "concise", SHOWCASE]));
    let findings = all
        .lines()
        .filter(|l| l.contains(": warning[") || l.contains(": error["));
    assert_eq!(findings.count(), 11, "{all}");
    assert!(all.contains("\nkarplint: 2 file(s)"), "{all}");
}

#[test]
fn quiet_prints_only_what_fails_the_run() {
    let (code, out, _) = run(karplint().args(["--quiet", SHOWCASE]));
    assert_eq!(code, 1);
    assert_eq!(out.matches("\nerror[").count() + 1, 4, "{out}");
    assert!(!out.contains("warning["), "{out}");
    assert!(
        !out.contains("karplint:") && !out.contains("findings by rule"),
        "{out}"
    );
    let (code, out, _) = run(karplint().args(["-q", "--fail-on", "never", SHOWCASE]));
    assert_eq!((code, out.as_str()), (0, ""));
    let (_, out, _) = run(karplint().args(["-q", "--fail-on", "warning", SHOWCASE]));
    assert_eq!(out.matches("warning[").count(), 7, "{out}");
}

#[test]
fn colour_can_be_forced_and_refused() {
    let esc = |c: &mut Command| {
        run(c.args(["--format", "concise", SHOWCASE]))
            .1
            .contains('\u{1b}')
    };
    assert!(!esc(&mut karplint()), "not a terminal: no colour");
    assert!(esc(karplint().args(["--color", "always"])));
    assert!(esc(karplint().env("FORCE_COLOR", "1")));
    assert!(esc(karplint().env("CLICOLOR_FORCE", "1")));
    assert!(!esc(karplint().env("FORCE_COLOR", "0")));
    assert!(!esc(karplint()
        .env("FORCE_COLOR", "1")
        .env("NO_COLOR", "1")));
    assert!(!esc(karplint().env("FORCE_COLOR", "1").arg("--no-color")));
    assert!(!esc(karplint()
        .env("CLICOLOR_FORCE", "1")
        .args(["--color", "never"])));
    let (code, _, err) = run(karplint().args(["--color", "always", "--no-color", SHOWCASE]));
    assert_eq!(code, 2, "{err}");
    // The human header is coloured too, and reads the same without the codes.
    let (_, human, _) = run(karplint().args(["--color", "always", SHOWCASE]));
    assert!(
        human.contains("\u{1b}[1m\u{1b}[31merror[incompatible-requirements]\u{1b}[0m"),
        "{human}"
    );
}

/// `n` Deployments without requests in namespace `team`, which has no LimitRange.
fn without_requests(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i:04}\n  namespace: team\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n"
            )
        })
        .collect()
}

fn tree(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("apps.yaml"), text).expect("write");
    dir
}

fn in_dir(dir: &Path) -> Command {
    let mut c = karplint();
    c.current_dir(dir);
    c
}

#[test]
fn a_cut_list_says_how_many_more() {
    let dir = tree(&without_requests(9));
    let (_, out, _) = run(in_dir(dir.path()).args(["--format", "json", "."]));
    let v: Value = serde_json::from_str(&out).expect("JSON");
    let d = (v["diagnostics"].as_array().expect("diagnostics").iter())
        .find(|d| d["rule"] == "missing-limit-range")
        .expect("missing-limit-range");
    let related: Vec<&str> = (d["related"].as_array().expect("related").iter())
        .filter_map(|r| r["message"].as_str())
        .collect();
    assert_eq!(related.len(), 5, "{related:#?}");
    assert_eq!(related[4], "and 4 more workload(s) without requests");
    // The note stands where the last one named does.
    assert_eq!(d["related"][4]["line"], d["related"][3]["line"]);
}

#[test]
fn github_annotations_put_errors_first_and_say_how_many_show() {
    let (_, out, _) = run(karplint().args(["--format", "github", SHOWCASE]));
    let first = out.lines().next().unwrap_or("");
    assert_eq!(
        first,
        "karplint: 4 error, 8 warning and 0 notice annotation(s); GitHub shows 12 of them"
    );
    // The run's warning (a check that did not run) leads the warnings: never crowded out.
    let first_warning = out
        .lines()
        .find(|l| l.starts_with("::warning"))
        .unwrap_or("");
    assert!(
        first_warning.starts_with("::warning title=karplint checks-not-run::"),
        "{out}"
    );
    let levels: Vec<&str> = (out.lines().skip(1))
        .map(|l| l.split([' ', ':']).find(|w| !w.is_empty()).unwrap_or(""))
        .collect();
    let mut sorted = levels.clone();
    sorted.sort_by_key(|l| ["error", "warning", "notice"].iter().position(|x| x == l));
    assert_eq!(levels, sorted, "{out}");
    assert_eq!(levels.iter().filter(|l| **l == "error").count(), 4, "{out}");
    // Over GitHub's limits: what is shown, and where the rest is.
    let dir = tree(&without_requests(30));
    let (_, out, _) = run(in_dir(dir.path()).args(["--format", "github", "."]));
    let first = out.lines().next().unwrap_or("");
    assert!(
        first.starts_with("karplint: 0 error, 32 warning and 0 notice annotation(s); GitHub shows 10 of them (at most 10 of each level per step and 50 per job): the other 22 are in this log only"),
        "{first}"
    );
}

#[test]
fn markdown_stays_below_a_mebibyte_and_says_what_it_left_out() {
    // ~3,000 findings with long help texts: about 2 MB of table.
    let dir = tree(&without_requests(3000));
    let (code, out, err) = run(in_dir(dir.path()).args([
        "--format", "markdown", "--format", "json", "-o", "-", "-o", "all.json", ".",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(out.len() < 1024 * 1024, "{} bytes", out.len());
    let rows = out.lines().filter(|l| l.starts_with("| 🟡")).count();
    assert!(rows > 100 && rows < 3001, "{rows} rows");
    assert!(
        out.contains(&format!("**{rows} of 3001 findings shown**")),
        "{}",
        &out[out.len().saturating_sub(600)..]
    );
    assert!(
        out.contains("the full report is in `all.json`"),
        "{}",
        &out[out.len() - 600..]
    );
    let (_, alone, _) = run(in_dir(dir.path()).args(["--format", "markdown", "."]));
    assert!(alone.contains("run `karplint --format json` for all of them"));
}

#[test]
fn the_summary_names_ten_skipped_files_and_counts_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let templates = dir.path().join("chart/templates");
    std::fs::create_dir_all(&templates).expect("mkdir");
    std::fs::write(
        dir.path().join("chart/Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .expect("write");
    for i in 0..12 {
        std::fs::write(
            templates.join(format!("t{i:02}.yaml")),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
        )
        .expect("write");
    }
    let (_, out, _) = run(in_dir(dir.path()).arg("."));
    assert_eq!(out.matches("\n  skipped ").count(), 10, "{out}");
    assert!(
        out.contains("\n  and 2 more file(s) skipped (`--format json` lists them all)\n"),
        "{out}"
    );
    let (_, json, _) = run(in_dir(dir.path()).args(["--format", "json", "."]));
    let v: Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["skipped"].as_array().map(Vec::len), Some(12), "{v:#}");
}
