//! What karplint reads and writes around the manifests: streams named as paths,
//! one file under two spellings, config files that are not what they seem, reports that
//! must not land on an input, and bounds on what is read and started (`-j`, stack sizes,
//! `--max-file-size` for standard input, the config and the instance types, excluded
//! directories). Then inputs that are not manifests: Terraform and Handlebars
//! templates, files the tree's ignore files ignore, and hidden directories. Each test runs
//! the built binary.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

mod common;
use common::{GOOD, Run, json_run};

/// The built binary in `dir`, killed after 60 seconds.
fn karplint(dir: &Path) -> Command {
    common::karplint(dir, 60)
}

fn run(dir: &Path, args: &[&str]) -> Run {
    let mut c = karplint(dir);
    c.args(["--format", "json", "--fail-on", "never", "--no-config"])
        .args(args);
    json_run(c)
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("app.yaml"), GOOD).expect("write");
    dir
}

// --- streams named as paths ----------------------------------------------------------------------

#[test]
fn dev_stdin_is_read_as_a_stream() {
    let dir = tree();
    let mut c = karplint(dir.path());
    c.args([
        "--format",
        "json",
        "--fail-on",
        "never",
        "--no-config",
        "/dev/stdin",
    ])
    .write_stdin(GOOD);
    let r = json_run(c);
    assert_eq!(r.files(), 1, "{:#}", r.json);
    assert_eq!(r.rules("missing-resource-requests"), 1, "{:#}", r.json);
}

#[test]
fn process_substitution_and_fifo_are_read_as_streams() {
    let dir = tree();
    let bin = assert_cmd::cargo::cargo_bin("karplint");
    let out = std::process::Command::new("bash")
        .current_dir(dir.path())
        .arg("-c")
        .arg(format!(
            "{} --format json --fail-on never --no-config <(cat app.yaml)",
            bin.display()
        ))
        .output()
        .expect("bash");
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["summary"]["files"], 1, "{json:#}");
    assert_eq!(
        json["diagnostics"].as_array().map_or(0, Vec::len),
        2,
        "{json:#}"
    );

    // A FIFO in the tree, named on the command line: read once, linted, named in findings.
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo unavailable; FIFO case skipped");
        return;
    }
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, GOOD))
    };
    let r = run(dir.path(), &["pipe"]);
    writer.join().expect("writer").expect("written");
    assert_eq!(r.files(), 1, "{:#}", r.json);
    let d = &r.json["diagnostics"][0];
    assert_eq!(d["file"], "pipe", "{:#}", r.json);
    assert_eq!(d["line"], 4, "{:#}", r.json);
}

// --- one file under two spellings ----------------------------------------------------------------

#[test]
fn one_file_under_two_spellings_is_linted_once() {
    let dir = tree();
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    std::os::unix::fs::symlink("app.yaml", dir.path().join("link.yaml")).expect("symlink");
    for args in [
        &[".", "./app.yaml"][..],
        &["app.yaml", "sub/../app.yaml"],
        &["app.yaml", "link.yaml"],
        // One tree: the link is not followed, or followed to a file the walk also lists.
        &["."],
        &["--follow", "."],
    ] {
        let r = run(dir.path(), args);
        assert_eq!(r.files(), 1, "{args:?}: {:#}", r.json);
        assert_eq!(
            r.rules("missing-resource-requests"),
            1,
            "{args:?}: {:#}",
            r.json
        );
    }
    // A changed file that is also under --context: linted, and not read again as context.
    let r = run(dir.path(), &["app.yaml", "--context", "."]);
    assert_eq!(r.files(), 1, "{:#}", r.json);
    let r = run(dir.path(), &["./app.yaml", "--context", "app.yaml"]);
    assert_eq!(r.files(), 1, "{:#}", r.json);
}

// --- config errors quote an excerpt, never the file ----------------------------------------------

#[test]
fn config_error_never_prints_the_link_target_whole() {
    let dir = tree();
    // Like /etc/passwd: every line a plain scalar, so the file is one multi-line string.
    let passwd: String = (0..40)
        .map(|i| format!("user{i}:x:{i}:{i}:secret-{i}:/home/user{i}:/bin/sh\n"))
        .collect();
    std::fs::write(dir.path().join("passwd"), &passwd).expect("write");
    std::os::unix::fs::symlink("passwd", dir.path().join(".karplint.yaml")).expect("symlink");
    let out = karplint(dir.path()).arg("app.yaml").output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        !stderr.contains("secret-1:"),
        "second line leaked: {stderr}"
    );
    assert!(!stderr.contains("secret-39"), "last line leaked: {stderr}");
    assert!(stderr.len() < 1500, "{} bytes: {stderr}", stderr.len());

    // Like /proc/self/environ: NUL-separated, one line: nothing of it is quoted.
    let environ: String = (0..40).map(|i| format!("VAR{i}=token-{i}\0")).collect();
    std::fs::write(dir.path().join("environ"), &environ).expect("write");
    let out = karplint(dir.path())
        .args(["--config", "environ", "app.yaml"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("token-"), "environ leaked: {stderr}");
    assert!(stderr.contains("not a YAML config"), "{stderr}");

    // A long offending line is cut to an excerpt around the error.
    let long = format!("failOn: {}\n", "x".repeat(5000));
    std::fs::write(dir.path().join("long.yaml"), long).expect("write");
    let out = karplint(dir.path())
        .args(["--config", "long.yaml", "app.yaml"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("long.yaml:1:9"), "{stderr}");
    assert!(stderr.len() < 1500, "{} bytes: {stderr}", stderr.len());
}

#[test]
fn instance_types_errors_quote_an_excerpt() {
    let dir = tree();
    let name = "x".repeat(3000);
    std::fs::write(
        dir.path().join("types.json"),
        format!("{{\"InstanceTypes\": [{{\"InstanceType\": \"{name}\"}}]}}"),
    )
    .expect("write");
    let out = karplint(dir.path())
        .args(["--no-config", "--instance-types", "types.json", "app.yaml"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("types.json"), "{stderr}");
    assert!(stderr.len() < 400, "{} bytes: {stderr}", stderr.len());
}

// --- -o never overwrites an input ----------------------------------------------------------------

#[test]
fn output_refuses_to_overwrite_an_input() {
    let dir = tree();
    std::fs::write(dir.path().join("ctx.yaml"), "kind: LimitRange\n").expect("write");
    for args in [
        &["app.yaml", "--output", "app.yaml"][..],
        &["--output", "./app.yaml", "."],
        &["app.yaml", "--context", "ctx.yaml", "--output", "ctx.yaml"],
    ] {
        let out = karplint(dir.path())
            .args(["--format", "json"])
            .args(args)
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("refusing to write"), "{stderr}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.yaml")).unwrap(),
        GOOD
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ctx.yaml")).unwrap(),
        "kind: LimitRange\n"
    );
    // A new file is written as before.
    let out = karplint(dir.path())
        .args(["--format", "json", "--output", "report.json", "app.yaml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert!(dir.path().join("report.json").is_file());
}

#[cfg(unix)]
#[test]
fn output_refuses_a_hard_link_to_an_input_and_writes_to_a_device() {
    let dir = tree();
    std::fs::hard_link(dir.path().join("app.yaml"), dir.path().join("link.yaml")).expect("link");
    let out = karplint(dir.path())
        .args(["--format", "json", "--output", "link.yaml", "app.yaml"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("refusing to write"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.yaml")).unwrap(),
        GOOD
    );
    // A device replaces no input.
    let out = karplint(dir.path())
        .args(["--format", "json", "--output", "/dev/null", "app.yaml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
}

// --- config discovery stops at the repository root -----------------------------------------------

#[test]
fn config_discovery_stops_at_the_repository_root() {
    let outer = tempfile::tempdir().expect("tempdir");
    // A config above the checkout: not the repository's, must not apply.
    std::fs::write(outer.path().join(".karplint.yaml"), "rulez: {}\n").expect("write");
    let repo = outer.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
    std::fs::create_dir_all(repo.join("deploy")).expect("mkdir");
    std::fs::write(repo.join("deploy/app.yaml"), GOOD).expect("write");
    let out = karplint(&repo.join("deploy"))
        .args(["--fail-on", "never", "app.yaml"])
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("config"), "no config applies: {stdout}");

    // The repository's own config applies, and the output names it.
    std::fs::write(
        repo.join(".karplint.yaml"),
        "rules:\n  missing-limit-range: off\n",
    )
    .expect("write");
    let out = karplint(&repo.join("deploy"))
        .args(["--fail-on", "never", "app.yaml"])
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("note: config ../.karplint.yaml applied")
            || stdout.contains("/repo/.karplint.yaml applied"),
        "{stdout}"
    );
    assert!(!stdout.contains("missing-limit-range"), "{stdout}");
    // Machine formats carry it as a note of kind `config`.
    let out = karplint(&repo.join("deploy"))
        .args(["--fail-on", "never", "--format", "json", "app.yaml"])
        .output()
        .expect("runs");
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let notes = json["notes"].as_array().expect("notes");
    assert!(
        notes.iter().any(|n| n["kind"] == "config"
            && n["message"]
                .as_str()
                .unwrap_or("")
                .contains(".karplint.yaml applied")),
        "{json}"
    );
}

// --- bounds on what is read and started ----------------------------------------------------------

#[test]
fn thread_count_is_capped() {
    let dir = tree();
    let r = run(dir.path(), &["-j", "100000", "app.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.rules("missing-resource-requests"), 1);
    assert!(r.stderr.contains("-j 100000 is more than"), "{}", r.stderr);
}

#[test]
fn worker_stacks_shrink_under_a_memory_rlimit() {
    let dir = tree();
    let bin = assert_cmd::cargo::cargo_bin("karplint");
    // 8 workers × 64 MiB of stack reservation is 512 MiB: over a 400 MiB address-space limit.
    // glibc's per-thread malloc arenas (64 MiB of address space each) are another limit,
    // which this test is not about: one arena keeps it from failing by chance.
    let out = std::process::Command::new("bash")
        .current_dir(dir.path())
        .env("MALLOC_ARENA_MAX", "1")
        .arg("-c")
        .arg(format!(
            "ulimit -v 409600 && exec {} -j 8 --format json --fail-on never --no-config app.yaml",
            bin.display()
        ))
        .output()
        .expect("bash");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("MiB stacks"), "{stderr}");
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["summary"]["files"], 1, "{json:#}");
}

#[test]
fn stdin_config_and_instance_types_obey_max_file_size() {
    let dir = tree();
    let big = format!("{GOOD}{}", "# padding\n".repeat(200));
    // Standard input over the limit: an error, not a silent partial read.
    let mut c = karplint(dir.path());
    c.args([
        "--format",
        "json",
        "--no-config",
        "--max-file-size",
        "1000",
        "-",
    ])
    .write_stdin(big.clone());
    let r = json_run(c);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("<stdin>: more than 1000 bytes"),
        "{}",
        r.stderr
    );

    let config = format!("rules: {{}}\n{}", "# padding\n".repeat(200));
    std::fs::write(dir.path().join("big-config.yaml"), config).expect("write");
    let out = karplint(dir.path())
        .args([
            "--config",
            "big-config.yaml",
            "--max-file-size",
            "1000",
            "app.yaml",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("1000-byte limit"), "{stderr}");

    std::fs::write(
        dir.path().join("types.json"),
        format!("{{\"InstanceTypes\": []{}}}", " ".repeat(2000)),
    )
    .expect("write");
    let out = karplint(dir.path())
        .args(["--no-config", "--instance-types", "types.json"])
        .args(["--max-file-size", "1000", "app.yaml"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("1000-byte limit"), "{stderr}");

    // An endless stream stops at the limit.
    let out = karplint(dir.path())
        .args([
            "--config",
            "/dev/zero",
            "--max-file-size",
            "100000",
            "app.yaml",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let r = run(dir.path(), &["--max-file-size", "100000", "/dev/zero"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("/dev/zero: more than"), "{}", r.stderr);
}

#[test]
fn excluded_directories_are_not_walked() {
    let dir = tree();
    let vendor = dir.path().join("vendor");
    std::fs::create_dir(&vendor).expect("mkdir");
    std::os::unix::fs::symlink("..", vendor.join("loop")).expect("symlink");
    std::fs::write(vendor.join("x.yaml"), GOOD).expect("write");
    let r = run(dir.path(), &["--follow", "--exclude", "vendor", "."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.files(), 1, "{:#}", r.json);
    // Not excluded, the loop is still an error that names it.
    let r = run(dir.path(), &["--follow", "."]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("loop"), "{}", r.stderr);
}

// --- inputs that are not manifests ---------------------------------------------------------------

/// `tests/fixtures/templates`: templates derived from public EKS repositories.
fn templates_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/templates")
}

/// The template files walked, plus those only linted when named (`*.tftpl`, `*.hbs`, and
/// `*.yaml.tpl`, which the default globs do not take).
const NAMED_TEMPLATES: [&str; 4] = [
    ".",
    "userdata.tftpl",
    "service.yaml.hbs",
    "workload.yaml.tpl",
];

#[test]
fn terraform_and_handlebars_templates_are_skipped_with_their_language() {
    let r = run(&templates_dir(), &NAMED_TEMPLATES);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.rules("parse-error"), 0, "{:#}", r.json);
    // Five files skipped whole, one document skipped in a file otherwise linted.
    assert_eq!(r.json["summary"]["skipped"], 5, "{:#}", r.json);
    assert_eq!(r.json["summary"]["skipped_documents"], 1, "{:#}", r.json);

    let out = karplint(&templates_dir())
        .args(["--no-config", "--no-color", "--fail-on", "never"])
        .args(NAMED_TEMPLATES)
        .output()
        .expect("runs");
    let s = String::from_utf8_lossy(&out.stdout);
    for (file, language) in [
        (
            "nodepool-terraform.yaml",
            "Terraform template (templatefile)",
        ),
        ("workload.yaml.tpl", "Terraform template (templatefile)"),
        ("userdata.tftpl", "Terraform template (templatefile)"),
        ("deployment-handlebars.yaml", "Handlebars template"),
        ("service.yaml.hbs", "Handlebars template"),
    ] {
        assert!(
            s.contains(&format!("skipped {file}: unrendered {language}")),
            "{file} not skipped as a {language}:\n{s}"
        );
    }
    assert!(
        s.contains(
            "skipped the document at nodeclass-terraform.yaml:15: unrendered Terraform template"
        ),
        "{s}"
    );
    assert!(!s.contains("Helm"), "no template here is Helm's:\n{s}");
}

#[test]
fn interpolation_in_a_valid_string_is_just_text() {
    // The node class's `"${cluster_name}-node"` strings parse: it is linted, not skipped.
    let r = run(&templates_dir(), &["nodeclass-terraform.yaml"]);
    assert_eq!(r.json["summary"]["skipped"], 0, "{:#}", r.json);
    assert_eq!(r.json["summary"]["documents"], 1, "{:#}", r.json);
    assert_eq!(r.json["summary"]["objects"], 1, "{:#}", r.json);

    // A document broken for another reason stays a parse-error, `${…}` or not.
    let dir = tree();
    std::fs::write(
        dir.path().join("broken.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"${name}\"\ndata:\n  a: [1\n",
    )
    .expect("write");
    // A duplicate key is an error too when the file quotes `${…}` elsewhere (a Spark
    // config from data-on-eks): only a template with `%{ if }` branches writes a key twice.
    std::fs::write(
        dir.path().join("duplicate.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spark\ndata:\n  \"spark.eventLog.dir\": \"s3a://${S3_BUCKET}/logs\"\n  \"spark.hadoop.fs.s3a.multipart.size\": \"128M\"\n  \"spark.hadoop.fs.s3a.multipart.size\": \"67108864\"\n",
    )
    .expect("write");
    let r = run(dir.path(), &["broken.yaml", "duplicate.yaml"]);
    assert_eq!(r.of("parse-error", "broken.yaml").len(), 1, "{:#}", r.json);
    assert_eq!(
        r.of("parse-error", "duplicate.yaml").len(),
        1,
        "{:#}",
        r.json
    );
    assert_eq!(r.json["summary"]["skipped"], 0, "{:#}", r.json);
}

/// A tree that is not a git repository, with ignore files of each kind.
fn ignoring_tree() -> tempfile::TempDir {
    let dir = tree();
    let p = dir.path();
    for sub in [
        "node_modules/chart",
        "vendor",
        "local",
        ".git/info",
        "config/git",
    ] {
        std::fs::create_dir_all(p.join(sub)).expect("mkdir");
    }
    for file in [
        "node_modules/chart/deploy.yaml",
        "vendor/deploy.yaml",
        "local/deploy.yaml",
        "generated.yaml",
    ] {
        std::fs::write(p.join(file), GOOD).expect("write");
    }
    std::fs::write(p.join(".gitignore"), "node_modules/\ngenerated.yaml\n").expect("write");
    std::fs::write(p.join(".ignore"), "vendor/\n").expect("write");
    std::fs::write(p.join(".git/info/exclude"), "local/\n").expect("write");
    // A global gitignore that would ignore everything: never read.
    std::fs::write(p.join("config/git/ignore"), "*.yaml\n").expect("write");
    dir
}

#[test]
fn ignore_files_are_honoured_and_the_global_gitignore_is_not() {
    let dir = ignoring_tree();
    let mut c = karplint(dir.path());
    c.env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("HOME", dir.path())
        .args(["--format", "json", "--fail-on", "never", "--no-config", "."]);
    let r = json_run(c);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.files(), 1, "only app.yaml: {:#}", r.json);

    // Without a .git directory at all, .gitignore still applies.
    std::fs::remove_dir_all(dir.path().join(".git")).expect("rm");
    let r = run(dir.path(), &["."]);
    assert_eq!(r.files(), 2, "app.yaml and local/: {:#}", r.json);

    // --no-ignore lints them all; a file named on the command line is linted anyway.
    let r = run(dir.path(), &["--no-ignore", "."]);
    assert_eq!(r.files(), 5, "{:#}", r.json);
    let r = run(dir.path(), &[".", "node_modules/chart/deploy.yaml"]);
    assert_eq!(r.files(), 3, "{:#}", r.json);
}

/// A tree with hidden directories of every kind, `.git` among them.
fn hidden_tree(extra: usize) -> tempfile::TempDir {
    let dir = tree();
    let p = dir.path();
    let mut dirs = vec![
        ".github/workflows".to_owned(),
        ".terraform".into(),
        ".git".into(),
    ];
    dirs.extend((0..extra).map(|i| format!(".extra{i}")));
    for d in &dirs {
        std::fs::create_dir_all(p.join(d)).expect("mkdir");
        std::fs::write(p.join(d).join("x.yaml"), GOOD).expect("write");
    }
    std::fs::write(p.join(".hidden-manifest.yaml"), GOOD).expect("write");
    dir
}

#[test]
fn hidden_directories_are_counted_named_and_linted_with_hidden() {
    let dir = hidden_tree(0);
    let r = run(dir.path(), &["."]);
    assert_eq!(r.files(), 1, "{:#}", r.json);
    // .github, .terraform and the hidden file; .git is never counted.
    assert_eq!(r.json["summary"]["skipped_hidden"], 3, "{:#}", r.json);

    let out = karplint(dir.path())
        .args(["--no-config", "--no-color", "--fail-on", "never", "."])
        .output()
        .expect("runs");
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("2 hidden directories and 1 hidden file skipped (.github, .terraform, .hidden-manifest.yaml); use --hidden to lint them"),
        "{s}"
    );

    // --hidden lints them, and never .git.
    let r = run(dir.path(), &["--hidden", "."]);
    assert_eq!(r.files(), 4, "{:#}", r.json);
    assert_eq!(r.json["summary"]["skipped_hidden"], 0, "{:#}", r.json);
    assert!(
        r.diagnostics()
            .iter()
            .all(|d| !d["file"].as_str().is_some_and(|f| f.contains(".git/"))),
        "{:#}",
        r.json
    );

    // Many: the first few are named, the rest counted.
    let dir = hidden_tree(6);
    let out = karplint(dir.path())
        .args(["--no-config", "--no-color", "--fail-on", "never", "."])
        .output()
        .expect("runs");
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("8 hidden directories and 1 hidden file skipped (.extra0,"),
        "{s}"
    );
    assert!(s.contains("and 4 more); use --hidden"), "{s}");
}

// --- excludes apply to files named on the command line -------------------------------------------

/// The notes of a JSON report as (kind, message).
fn notes(r: &Run) -> Vec<(String, String)> {
    (r.json["notes"].as_array().map_or(&[][..], |v| v))
        .iter()
        .map(|n| {
            let s = |k: &str| n[k].as_str().unwrap_or_default().to_string();
            (s("kind"), s("message"))
        })
        .collect()
}

#[test]
fn excludes_apply_to_named_files_unless_no_force_exclude() {
    let dir = tree();
    let vendor = dir.path().join("vendor");
    std::fs::create_dir(&vendor).expect("mkdir");
    std::fs::write(vendor.join("x.yaml"), GOOD).expect("write");
    // As a pre-commit hook calls it: the changed files, one by one.
    let r = run(
        dir.path(),
        &["--exclude", "vendor", "app.yaml", "vendor/x.yaml"],
    );
    assert_eq!(r.files(), 1, "{:#}", r.json);
    assert!(
        r.of("missing-resource-requests", "vendor/x.yaml")
            .is_empty()
    );
    let said = notes(&r);
    assert!(
        said.iter().any(|(k, m)| k == "skipped"
            && m.contains("vendor/x.yaml")
            && m.contains("--no-force-exclude")),
        "{said:?}"
    );
    // The config's excludes too.
    std::fs::write(
        dir.path().join(".karplint.yaml"),
        "exclude: [\"vendor/**\"]\n",
    )
    .expect("write");
    let mut c = karplint(dir.path());
    c.args(["--format", "json", "--fail-on", "never", "vendor/x.yaml"]);
    let r = json_run(c);
    assert_eq!(r.files(), 0, "{:#}", r.json);
    // --no-force-exclude lints what is named.
    let r = run(
        dir.path(),
        &["--exclude", "vendor", "--no-force-exclude", "vendor/x.yaml"],
    );
    assert_eq!(r.files(), 1, "{:#}", r.json);
    assert_eq!(r.of("missing-resource-requests", "vendor/x.yaml").len(), 1);
}

/// `exclude: [platform]` keeps the platform team's objects out of the report; `context:
/// [platform]` still reads them as cluster facts, named as a directory or as files.
#[test]
fn an_excluded_path_named_as_context_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("platform")).expect("mkdir");
    let pool = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: ml\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      taints:\n        - {key: dedicated, value: ml, effect: NoSchedule}\n";
    std::fs::write(dir.path().join("platform/pool.yaml"), pool).expect("write");
    std::fs::write(dir.path().join("app.yaml"), GOOD).expect("write");
    for context in ["platform", "platform/pool.yaml", "./platform"] {
        let r = run(
            dir.path(),
            &["--exclude", "platform", "--context", context, "."],
        );
        assert_eq!(r.files(), 2, "{context}: {:#}", r.json);
        assert_eq!(r.rules("untolerated-taint"), 1, "{context}: {:#}", r.json);
    }
}

#[test]
fn globs_that_match_nothing_are_noted() {
    let dir = tree();
    std::fs::create_dir(dir.path().join("vendor")).expect("mkdir");
    std::fs::write(dir.path().join("vendor/x.yaml"), GOOD).expect("write");
    let r = run(
        dir.path(),
        &[
            "--exclude",
            "vendor",
            "--exclude",
            "vednor",
            "--include",
            "*.yml",
            "--include",
            "*.yaml",
            ".",
        ],
    );
    assert_eq!(r.files(), 1, "{:#}", r.json);
    let said: Vec<String> = (notes(&r).into_iter())
        .filter(|(k, _)| k == "config")
        .map(|(_, m)| m)
        .collect();
    assert_eq!(
        said,
        ["globs matched no path: include `*.yml`, exclude `vednor`"],
        "{:#}",
        r.json
    );
    // Every glob matched: no note.
    let r = run(dir.path(), &["--exclude", "vendor", "."]);
    assert!(notes(&r).iter().all(|(k, _)| k != "config"), "{:#}", r.json);
    // Files named one by one meet few globs: no note then.
    let r = run(dir.path(), &["--exclude", "vednor", "app.yaml"]);
    assert!(notes(&r).iter().all(|(k, _)| k != "config"), "{:#}", r.json);
    // A directory both .gitignore and an exclude glob leave out: the glob is no typo.
    std::fs::write(dir.path().join(".gitignore"), "vendor/\n").expect("write");
    let r = run(dir.path(), &["--exclude", "vendor", "."]);
    assert_eq!(r.files(), 1, "{:#}", r.json);
    assert!(notes(&r).iter().all(|(k, _)| k != "config"), "{:#}", r.json);
}

// --- "did you mean" for rule ids and enum values -------------------------------------------------

#[test]
fn misspelt_rule_ids_and_values_get_did_you_mean() {
    let dir = tree();
    let stderr = |c: &mut Command| {
        let out = c.output().expect("runs");
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = stderr(karplint(dir.path()).args(["explain", "untolerated-taints"]));
    assert!(e.contains("did you mean `untolerated-taint`?"), "{e}");
    let e = stderr(karplint(dir.path()).args(["--rule", "missing-limit-ranges=off", "."]));
    assert!(e.contains("did you mean `missing-limit-range`?"), "{e}");
    let e = stderr(karplint(dir.path()).args(["--rule", "missing-limit-range=warn", "."]));
    assert!(e.contains("did you mean `warning`?"), "{e}");
    for (config, want) in [
        ("failOn: warn\n", "did you mean `warning`?"),
        ("rules:\n  parse-error: eror\n", "did you mean `error`?"),
        ("kustomize: allways\n", "did you mean `always`?"),
        (
            "cluster:\n  nodeGroups:\n    - {name: a, instanceType: m5.large, taints: [{key: k, effect: NoSchedul}]}\n",
            "did you mean `NoSchedule`?",
        ),
    ] {
        std::fs::write(dir.path().join(".karplint.yaml"), config).expect("write");
        let e = stderr(karplint(dir.path()).arg("."));
        assert!(e.contains(want), "{config}: {e}");
    }
}

// --- what the cluster receives --------------------------------------------------------------------

/// A NodePool and its EC2NodeClass, as two clusters' directories often both hold them.
const POOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: r
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
";

/// Copies of one object the same in every field are one object, as the API server stores
/// one: the findings are those of a single copy, and a note names the copies.
#[test]
fn identical_copies_are_one_object_with_a_note() {
    let huge = GOOD.replace(
        "        image: nginx\n",
        "        image: nginx\n        resources: {requests: {cpu: \"900\", memory: 1Gi}}\n",
    );
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("app.yaml"), &huge).expect("write");
    std::fs::write(dir.path().join("pool.yaml"), POOL).expect("write");
    let once = run(dir.path(), &["."]);
    for copy in ["staging.yaml", "sandbox.yaml"] {
        std::fs::write(dir.path().join(copy), format!("# a copy\n{POOL}")).expect("write");
    }
    let thrice = run(dir.path(), &["."]);
    let messages = |r: &Run| -> Vec<String> {
        (r.diagnostics().iter())
            .map(|d| format!("{} {}", d["rule"], d["message"]))
            .collect()
    };
    assert!(
        messages(&once)
            .iter()
            .any(|m| m.contains("no-instance-type-fits")),
        "{:?}",
        messages(&once)
    );
    assert_eq!(messages(&thrice), messages(&once));
    let assumed: Vec<String> = notes(&thrice)
        .into_iter()
        .filter(|(k, _)| k == "assumed")
        .map(|(_, m)| m)
        .collect();
    assert_eq!(assumed.len(), 1, "{assumed:?}");
    assert!(
        assumed[0].starts_with("4 identical copies of objects defined earlier in the run")
            && assumed[0].contains("NodePool \"default\" in sandbox.yaml (as in pool.yaml)"),
        "{}",
        assumed[0]
    );
}

/// Two definitions of a workload with the same pods are one object of the cluster: the
/// batch places its replicas once. Here a NodePool whose limits hold one node: placed
/// twice, the copy's replica would need a second node and stay Pending.
#[test]
fn identical_workload_copies_are_placed_once() {
    let pool = POOL.replace(
        "      requirements:\n",
        "      requirements:\n        - {key: node.kubernetes.io/instance-type, operator: In, values: [c6i.xlarge]}\n",
    ) + "---\n";
    let pool = pool.replacen(
        "spec:\n  template:",
        "spec:\n  limits: {cpu: \"4\"}\n  template:",
        1,
    );
    let app = GOOD.replace(
        "        image: nginx\n",
        "        image: nginx\n        resources: {requests: {cpu: \"2\", memory: 1Gi}}\n",
    );
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("pool.yaml"), pool).expect("write");
    std::fs::write(dir.path().join("app.yaml"), &app).expect("write");
    let once = run(dir.path(), &["."]);
    std::fs::write(dir.path().join("copy.yaml"), format!("# a copy\n{app}")).expect("write");
    let twice = run(dir.path(), &["."]);
    let scheduling = |r: &Run| r.rules("replicas-exceed-capacity");
    assert_eq!(
        (scheduling(&once), scheduling(&twice)),
        (0, 0),
        "{:?}",
        twice.json
    );
    assert!(
        (notes(&twice).iter()).any(|(k, m)| k == "assumed"
            && m.starts_with("1 workload(s) defined again later in the run with the same pods")
            && m.contains("Deployment \"good\" in copy.yaml (as in app.yaml)")),
        "{:?}",
        notes(&twice)
    );
    // A definition whose pods differ is placed beside the first (which of the two the
    // cluster holds is not known), and the two spend the limits.
    let more = app.replace("cpu: \"2\"", "cpu: 2100m");
    std::fs::write(dir.path().join("copy.yaml"), more).expect("write");
    assert_eq!(scheduling(&run(dir.path(), &["."])), 1);
}

/// A Pod whose container has no image is a template another tool fills in: no request
/// finding, and a note says so.
#[test]
fn image_less_pods_are_templates_with_a_note() {
    let dir = tempfile::tempdir().expect("tempdir");
    let template = "apiVersion: v1\nkind: Pod\nmetadata: {name: executor}\nspec:\n  containers:\n  - name: spark-kubernetes-executor\n";
    std::fs::write(dir.path().join("executor.yaml"), template).expect("write");
    let r = run(dir.path(), &["."]);
    assert_eq!(r.rules("missing-resource-requests"), 0);
    assert!(
        notes(&r).contains(&(
            "assumed".into(),
            "1 Pod has a container without an image and is read as a pod template that another tool fills in (Spark's podTemplateFile, EMR on EKS): its requests were not checked, its node selection was: executor (executor.yaml)".into()
        )),
        "{:?}",
        notes(&r)
    );
}
