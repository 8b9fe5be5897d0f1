//! Every example in README.md is checked against the binary: the blocks are found by their
//! fence and the heading above them, so an edit that makes one wrong fails here. The first
//! two shell blocks stay the showcase and the tests; the plan table, the JSON shape, the
//! config file, the flags and subcommands, the Action's inputs and the pre-commit hooks are
//! what karplint really has.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// A fenced block of README.md, with the heading it stands under.
#[derive(Debug)]
struct Block {
    heading: String,
    lang: String,
    text: String,
}

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

fn blocks(readme: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut open: Option<Block> = None;
    for line in readme.lines() {
        if let Some(b) = open.as_mut() {
            if line.trim_start() == "```" {
                out.extend(open.take());
            } else {
                b.text.push_str(line);
                b.text.push('\n');
            }
        } else if let Some(lang) = line.strip_prefix("```") {
            open = Some(Block {
                heading: heading.clone(),
                lang: lang.trim().to_string(),
                text: String::new(),
            });
        } else if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim().to_string();
        }
    }
    assert!(open.is_none(), "README.md has an unclosed code block");
    out
}

/// The one block under `heading` in `lang` whose text starts with `start`.
fn block(heading: &str, lang: &str, start: &str) -> String {
    let all = blocks(&readme());
    let found: Vec<&Block> = all
        .iter()
        .filter(|b| b.heading == heading && b.lang == lang && b.text.starts_with(start))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "README.md: expected one ```{lang} block starting {start:?} under \"{heading}\""
    );
    found[0].text.clone()
}

fn karplint(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("karplint").expect("binary");
    c.current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("KARPLINT_TIMINGS")
        .env("COLUMNS", "200");
    c
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn first_two_shell_blocks_run_the_showcase_and_the_tests() {
    let all = blocks(&readme());
    let shell: Vec<&str> = all
        .iter()
        .filter(|b| b.lang == "sh")
        .map(|b| b.text.as_str())
        .take(2)
        .collect();
    assert_eq!(
        shell,
        ["cargo run --release -- fixtures/showcase\n", "cargo test\n"]
    );
    assert!(root().join("fixtures/showcase").is_dir());
}

/// Splits a table line on runs of two or more spaces.
fn columns(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

#[test]
fn plan_example_has_the_shape_of_plan_output() {
    let example = block("How the scheduling rules decide", "text", "WORKLOAD");
    let lines: Vec<&str> = example.lines().collect();
    let out = karplint(root())
        .args(["--no-config", "plan", "fixtures/showcase"])
        .output()
        .unwrap();
    let real = String::from_utf8(out.stdout).unwrap();
    // The table ends at its summary line; the cost section follows it.
    let real: Vec<&str> = real.lines().collect();
    let summary = (real.iter())
        .position(|l| l.starts_with("karplint plan:"))
        .expect("summary line");
    let real = &real[..=summary];
    // The same header, column for column.
    assert_eq!(columns(lines[0]), columns(real[0]), "{}", real[0]);
    let width = columns(real[0]).len();
    // Each example row has a cell per column (the reason is the rest of the line), its
    // location is path:line, and its outcome reads as the real rows do.
    let rows = &lines[1..lines.len() - 1];
    assert!(!rows.is_empty());
    let real_pools: BTreeSet<&str> = real[1..real.len() - 1]
        .iter()
        .map(|r| columns(r)[4])
        .collect();
    assert!(real_pools.contains("(pending)"), "{real_pools:?}");
    for row in rows {
        let cells = columns(row);
        assert!(cells.len() >= width, "{row}");
        assert!(
            [
                "Deployment",
                "StatefulSet",
                "DaemonSet",
                "Job",
                "CronJob",
                "Pod"
            ]
            .iter()
            .any(|k| cells[0].starts_with(k)),
            "{row}"
        );
        let (path, line) = cells[1].rsplit_once(':').expect("path:line");
        assert!(
            path.ends_with(".yaml") && line.parse::<usize>().is_ok(),
            "{row}"
        );
        // `3`, or `3 (1 pending)` when the batch leaves replicas Pending.
        let (replicas, pending) = cells[2]
            .split_once(' ')
            .unwrap_or((cells[2], "(0 pending)"));
        assert!(replicas.parse::<usize>().is_ok(), "{row}");
        assert!(
            (pending
                .strip_prefix('(')
                .and_then(|p| p.strip_suffix(" pending)")))
            .is_some_and(|n| n.parse::<usize>().is_ok()),
            "{row}"
        );
        assert!(cells[3].contains(" / "), "{row}");
        assert!(
            cells[4] == "(pending)" || !cells[4].starts_with('('),
            "{row}"
        );
    }
    // The closing line, with the real line's wording.
    let words = |l: &str| -> Vec<String> {
        l.split(|c: char| c.is_ascii_digit())
            .map(str::to_string)
            .collect()
    };
    let last = lines[lines.len() - 1];
    assert_eq!(words(last), words(real[real.len() - 1]), "{last}");
}

/// Object keys of a JSON value, sorted.
fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn json_example_has_every_key_of_the_json_output() {
    let example: Value =
        serde_json::from_str(&block("JSON output", "json", "{\"version\": 1,")).unwrap();
    // A run with findings, a suppression, a skipped file and a baseline.
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("manifests");
    std::fs::create_dir_all(m.join("chart/templates")).unwrap();
    std::fs::copy(
        root().join("fixtures/in-tree-storage-plugin/fire.yaml"),
        m.join("storage.yaml"),
    )
    .unwrap();
    std::fs::write(
        m.join("web.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n  annotations:\n    karplint.io/ignore: missing-resource-requests\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          image: nginx\n",
    )
    .unwrap();
    std::fs::write(
        m.join("chart/Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        m.join("chart/templates/d.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.json"),
        "{\"version\": 1, \"findings\": []}",
    )
    .unwrap();
    let out = karplint(dir.path())
        .args([
            "--no-config",
            "--format",
            "json",
            "--baseline",
            "b.json",
            "manifests",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(keys(&v), keys(&example));
    assert_eq!(v["version"], example["version"]);
    assert_eq!(keys(&v["summary"]), keys(&example["summary"]));
    assert!(v["summary"]["suppressed"].as_u64() > Some(0), "{v}");
    let documented = keys(&example["diagnostics"][0]);
    for d in v["diagnostics"].as_array().unwrap() {
        let mut k = keys(d);
        assert!(k.is_subset(&documented), "{k:?}");
        k.insert("help".into());
        assert!(
            documented
                .iter()
                .all(|key| k.contains(key) || key == "help"),
            "{k:?}"
        );
        let object = keys(&d["object"]);
        let mut with_role = object.clone();
        with_role.insert("role".into());
        assert_eq!(with_role, keys(&example["diagnostics"][0]["object"]));
        for r in d["related"].as_array().unwrap() {
            assert_eq!(keys(r), keys(&example["diagnostics"][0]["related"][0]));
        }
    }
    assert!(!v["skipped"].as_array().unwrap().is_empty(), "{v}");
    for s in v["skipped"].as_array().unwrap() {
        assert_eq!(keys(s), keys(&example["skipped"][0]));
    }
    // Every kind of note karplint makes is listed.
    let kinds: BTreeSet<String> = example["notes"][0]["kind"]
        .as_str()
        .unwrap()
        .split('|')
        .map(str::to_string)
        .collect();
    for n in v["notes"].as_array().unwrap() {
        assert_eq!(keys(n), keys(&example["notes"][0]));
        assert!(kinds.contains(n["kind"].as_str().unwrap()), "{n}");
    }
    for kind in note_kinds_in_source() {
        assert!(
            kinds.contains(&kind),
            "note kind {kind:?} is not in README's JSON example"
        );
    }
}

/// The kinds passed to `Note::new("…", …)` anywhere in src/.
fn note_kinds_in_source() -> BTreeSet<String> {
    let mut kinds = BTreeSet::new();
    for e in walkdir::WalkDir::new(root().join("src")) {
        let e = e.unwrap();
        if e.path().extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).unwrap();
        for (i, _) in text.match_indices("Note::new(") {
            let rest = text[i + "Note::new(".len()..].trim_start();
            if let Some(rest) = rest.strip_prefix('"') {
                kinds.insert(rest[..rest.find('"').unwrap()].to_string());
            }
        }
    }
    assert!(kinds.contains("config"), "{kinds:?}");
    kinds
}

#[test]
fn config_example_is_accepted_by_the_config_loader() {
    let example = block("Configuration", "yaml", "# .karplint.yaml");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".karplint.yaml"), &example).unwrap();
    // The files it names, relative to it.
    for d in [
        "platform/karpenter",
        "platform/limits",
        "platform/staging",
        "clusters/prod",
        "clusters/staging",
        "aws",
        "apps",
    ] {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    std::fs::copy(
        root().join("tests/fixtures/describe-instance-types.json"),
        dir.path().join("aws/instance-types.json"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("apps/web.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
    )
    .unwrap();
    let out = karplint(dir.path())
        .args(["--format", "json", "apps"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["kind"] == "config"
                && n["message"] == "config .karplint.yaml applied, judged as Karpenter v1.8"),
        "{v}"
    );
    // The loader is strict: the same file with a typo is refused.
    std::fs::write(
        dir.path().join(".karplint.yaml"),
        example.replace("failOn:", "fail_on:"),
    )
    .unwrap();
    karplint(dir.path()).arg("apps").assert().code(2);
}

/// Flags of other tools that README mentions (cargo, curl, sha256sum, the benchmark and
/// oracle scripts, pre-commit): they must not be karplint's, so a karplint flag is never
/// let through as someone else's.
const OTHER_TOOLS_FLAGS: &[&str] = &[
    "--release",
    "--locked",
    "--git",
    "--tag",
    "--check",
    "--ignore-missing",
    "--files",
    "--runs",
    "--pool-heavy",
    "--corpus",
    "--workloads",
    "--pools",
    "--overlays",
    "--seed",
    "--out",
    "--dir",
    "--scenarios",
    "--example",
    "--rm",
    "--paginate",
    "--jq",
    "--body-file",
];

#[test]
fn flags_and_subcommands_in_readme_exist() {
    let help = |args: &[&str]| {
        let out = karplint(root()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    let top = help(&["--help"]);
    let plan = help(&["plan", "--help"]);
    let flags: BTreeSet<String> = format!("{top}\n{plan}")
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(str::to_string)
        .collect();
    let text = readme();
    let mentioned: BTreeSet<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("--") && w.len() > 2 && w.as_bytes()[2].is_ascii_lowercase())
        .collect();
    assert!(mentioned.contains("--baseline"), "{mentioned:?}");
    for flag in &mentioned {
        if OTHER_TOOLS_FLAGS.contains(flag) {
            assert!(
                !flags.contains(*flag),
                "{flag} is karplint's: take it off the list"
            );
        } else {
            assert!(
                flags.contains(*flag),
                "README mentions {flag}, which karplint --help does not list"
            );
        }
    }
    // Subcommands: `karplint NAME` in the usage block.
    let usage = block("Using it", "text", "karplint [OPTIONS]");
    for line in usage.lines() {
        let word = line.split_whitespace().nth(1).unwrap_or("");
        if word.chars().all(|c| c.is_ascii_lowercase()) && !word.is_empty() {
            assert!(
                top.lines()
                    .any(|l| l.trim_start().starts_with(&format!("{word} "))),
                "README's usage names `karplint {word}`, which --help does not list"
            );
        }
    }
    for shell in ["bash", "zsh", "fish"] {
        karplint(root())
            .args(["completions", shell])
            .assert()
            .code(0);
    }
}

/// The keys under `with:` in README's workflow examples are inputs of action.yml, and the
/// hook ids in its pre-commit examples are hooks of .pre-commit-hooks.yaml.
#[test]
fn action_inputs_and_hook_ids_in_readme_exist() {
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let inputs_start = action.find("\ninputs:\n").unwrap();
    let inputs_end = action.find("\noutputs:\n").unwrap();
    let inputs: BTreeSet<&str> = action[inputs_start..inputs_end]
        .lines()
        .filter_map(|l| l.strip_prefix("  ")?.strip_suffix(':'))
        .filter(|l| !l.starts_with(' '))
        .collect();
    assert!(
        inputs.contains("baseline") && inputs.contains("path"),
        "{inputs:?}"
    );
    let hooks_text = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    let hooks: BTreeSet<&str> = hooks_text
        .lines()
        .filter_map(|l| l.strip_prefix("- id: "))
        .collect();
    let mut with_keys = 0;
    let mut hook_ids = 0;
    for b in blocks(&readme()).iter().filter(|b| b.lang == "yaml") {
        let mut in_karplint_step = false;
        let mut in_with = None;
        for line in b.text.lines() {
            let indent = line.len() - line.trim_start().len();
            let t = line.trim_start().trim_start_matches("- ");
            if t.starts_with("uses: ") {
                in_karplint_step = t.starts_with("uses: karplint/karplint@");
                in_with = None;
            } else if t == "with:" && in_karplint_step {
                in_with = Some(indent);
            } else if let Some(w) = in_with {
                if indent <= w {
                    in_with = None;
                } else if let Some((key, _)) = t.split_once(':')
                    && !t.starts_with('#')
                {
                    assert!(
                        inputs.contains(key),
                        "README passes `{key}:` to the action, which action.yml does not take"
                    );
                    with_keys += 1;
                }
            }
            if b.text
                .contains("repo: https://github.com/karplint/karplint")
                && let Some(id) = t.strip_prefix("id: ")
            {
                let id = id.split_whitespace().next().unwrap_or("");
                assert!(
                    hooks.contains(id),
                    "README names hook {id:?}, not in .pre-commit-hooks.yaml"
                );
                hook_ids += 1;
            }
        }
    }
    assert!(with_keys >= 6, "{with_keys} action inputs checked");
    assert!(hook_ids >= 2, "{hook_ids} hook ids checked");
}
