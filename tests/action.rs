//! The GitHub Action's script (`scripts/action.sh`), run as the runner runs it: with the
//! environment variables GitHub sets and the `INPUT_*` variables `action.yml` maps, against
//! the binary under test (`KARPLINT_BIN`) so no install happens.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use std::path::Path;
use std::process::Command;

fn action(workspace: &Path, runner_temp: &Path, inputs: &[(&str, &str)]) -> std::process::Output {
    let bin = env!("CARGO_BIN_EXE_karplint");
    action_with(
        workspace,
        runner_temp,
        inputs,
        &[("KARPLINT_BIN", Some(bin))],
    )
}

/// The action's script with `inputs`, and `env` set (`Some`) or removed (`None`) last.
fn action_with(
    workspace: &Path,
    runner_temp: &Path,
    inputs: &[(&str, &str)],
    env: &[(&str, Option<&str>)],
) -> std::process::Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut c = Command::new("bash");
    c.arg(root.join("scripts/action.sh"))
        .current_dir(runner_temp)
        .env("GITHUB_ACTION_PATH", root)
        .env("GITHUB_WORKSPACE", workspace)
        .env("RUNNER_TEMP", runner_temp)
        .env("GITHUB_STEP_SUMMARY", runner_temp.join("step_summary.md"))
        .env("GITHUB_OUTPUT", runner_temp.join("output.txt"))
        .env("NO_COLOR", "1");
    for k in [
        "INPUT_PATH",
        "INPUT_CONFIG",
        "INPUT_CONTEXT",
        "INPUT_FAIL_ON",
        "INPUT_FORMAT",
        "INPUT_SARIF_FILE",
        "INPUT_VERSION",
        "INPUT_BASELINE",
        "INPUT_REQUIRE_NODEPOOLS",
        "INPUT_ARGS",
        "INPUT_MODE",
        "INPUT_BASE",
        "INPUT_GITHUB_TOKEN",
        "GITHUB_EVENT_NAME",
        "GITHUB_BASE_REF",
        "GITHUB_REF",
        "GITHUB_EVENT_PATH",
        "ACTION_REF",
        "KARPLINT_BIN",
        "KARPLINT_RELEASE_URL",
    ] {
        c.env_remove(k);
    }
    for (k, v) in inputs {
        c.env(k, v);
    }
    for (k, v) in env {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c.output().unwrap()
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/integrations");
    let dst = ws.path().join("manifests");
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
    ws
}

#[test]
fn annotations_summary_sarif_and_exit_code() {
    let ws = workspace();
    let temp = tempfile::tempdir().unwrap();
    std::fs::write(temp.path().join("step_summary.md"), "# earlier step\n").unwrap();
    let out = action(
        ws.path(),
        temp.path(),
        &[
            ("INPUT_PATH", "manifests"),
            ("INPUT_FORMAT", "github"),
            ("INPUT_SARIF_FILE", "karplint.sarif"),
        ],
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("::error file=manifests/legacy%2Cstorage.yaml,line=9,col=3,"),
        "{stdout}"
    );
    assert!(
        stdout.contains("::warning file=manifests/web.yaml,"),
        "{stdout}"
    );
    let summary = std::fs::read_to_string(temp.path().join("step_summary.md")).unwrap();
    assert!(
        summary.starts_with("# earlier step\n## karplint\n"),
        "{summary}"
    );
    assert!(summary.contains("| Severity | Rule |"), "{summary}");
    // SARIF is written under $RUNNER_TEMP, never into the checkout; the output names it.
    assert!(!ws.path().join("karplint.sarif").exists());
    let sarif_path = temp.path().canonicalize().unwrap().join("karplint.sarif");
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif_path).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let output = std::fs::read_to_string(temp.path().join("output.txt")).unwrap();
    assert_eq!(
        output,
        format!("exit-code=1\nsarif-file={}\n", sarif_path.display())
    );
}

/// Every file under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = walk(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap().to_path_buf())
        .collect();
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

#[test]
fn nothing_is_written_into_the_checkout() {
    let ws = workspace();
    let temp = tempfile::tempdir().unwrap();
    // A pull request plants a link where a report would go.
    let target = temp.path().join("victim");
    std::fs::write(&target, "precious\n").unwrap();
    std::os::unix::fs::symlink(&target, ws.path().join("karplint.sarif")).unwrap();
    let before = tree(ws.path());
    let out = action(
        ws.path(),
        temp.path(),
        &[
            ("INPUT_PATH", "manifests"),
            ("INPUT_SARIF_FILE", "karplint.sarif"),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(tree(ws.path()), before);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
    assert!(temp.path().join("karplint.sarif").is_file());
    // A SARIF path in the checkout, or one climbing out of $RUNNER_TEMP, is refused.
    let inside = ws.path().join("karplint.sarif");
    for bad in [inside.to_str().unwrap(), "../karplint.sarif"] {
        let out = action(
            ws.path(),
            temp.path(),
            &[("INPUT_PATH", "manifests"), ("INPUT_SARIF_FILE", bad)],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("sarif-file"), "{stderr}");
    }
    assert_eq!(tree(ws.path()), before);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
}

#[test]
fn fail_on_context_and_config_inputs() {
    let ws = workspace();
    let temp = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("ci.yaml"),
        "rules:\n  in-tree-storage-plugin: warning\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join("limits.yaml"),
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: d, namespace: shop}\nspec:\n  limits:\n    - type: Container\n      defaultRequest: {cpu: 100m, memory: 128Mi}\n",
    )
    .unwrap();
    let out = action(
        ws.path(),
        temp.path(),
        &[
            ("INPUT_PATH", "manifests"),
            ("INPUT_CONFIG", "ci.yaml"),
            ("INPUT_CONTEXT", "limits.yaml"),
            ("INPUT_FAIL_ON", "error"),
            ("INPUT_FORMAT", "json"),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rules: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"in-tree-storage-plugin"), "{rules:?}");
    assert!(!rules.contains(&"missing-resource-requests"), "{rules:?}");
    assert!(!rules.contains(&"missing-limit-range"), "{rules:?}");
    // A bad config is exit 2, passed through.
    std::fs::write(ws.path().join("ci.yaml"), "rulez: {}\n").unwrap();
    let out = action(
        ws.path(),
        temp.path(),
        &[("INPUT_PATH", "manifests"), ("INPUT_CONFIG", "ci.yaml")],
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn missing_release_falls_back_to_cargo_install() {
    // With no curl-able release and no cargo on PATH, the script tries the release, then
    // cargo, and fails with exit 2: both install paths are exercised without network.
    let ws = workspace();
    let temp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = tempfile::tempdir().unwrap();
    for tool in ["uname", "mkdir", "tar", "cat", "dirname"] {
        if let Ok(p) = which(tool) {
            std::os::unix::fs::symlink(p, bin.path().join(tool)).unwrap();
        }
    }
    std::fs::write(
        bin.path().join("curl"),
        "#!/bin/sh\necho \"curl $*\" >&2\nexit 22\n",
    )
    .unwrap();
    std::fs::write(
        bin.path().join("cargo"),
        "#!/bin/sh\necho \"cargo $*\" >&2\nexit 101\n",
    )
    .unwrap();
    for t in ["curl", "cargo"] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.path().join(t), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    // An explicit version, and the default: the action's own Cargo.toml version.
    for (input, version) in [("v9.9.9", "9.9.9"), ("", env!("CARGO_PKG_VERSION"))] {
        let out = Command::new(which("bash").unwrap())
            .arg(root.join("scripts/action.sh"))
            .env_clear()
            .env("PATH", bin.path())
            .env("GITHUB_ACTION_PATH", root)
            .env("GITHUB_WORKSPACE", ws.path())
            .env("RUNNER_TEMP", temp.path())
            .env("INPUT_VERSION", input)
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("/v{version}/karplint-{version}-")),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "no release binary for {version}; building from source"
            )),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "cargo install --locked --quiet --path {}",
                root.display()
            )),
            "{stderr}"
        );
    }
}

fn which(tool: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .ok_or(())
}

/// The release target the action downloads on this machine, as `target_triple` in
/// scripts/action.sh names it.
fn host_target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        other => panic!("no release target for {other:?}"),
    }
}

fn executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// A release server as a directory: `v<version>/` holds the archive for this machine (a
/// `karplint` that runs the binary under test) and SHA256SUMS over it.
fn release_dir(version: &str) -> (tempfile::TempDir, String) {
    let rel = tempfile::tempdir().unwrap();
    let dir = rel.path().join(format!("v{version}"));
    let stage = rel.path().join("stage");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&stage).unwrap();
    executable(
        &stage.join("karplint"),
        &format!(
            "#!/bin/sh\nexec '{}' \"$@\"\n",
            env!("CARGO_BIN_EXE_karplint")
        ),
    );
    let archive = format!("karplint-{version}-{}.tar.gz", host_target());
    let status = Command::new("tar")
        .arg("-C")
        .arg(&stage)
        .arg("-czf")
        .arg(dir.join(&archive))
        .arg("karplint")
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::write(
        dir.join("SHA256SUMS"),
        format!(
            "{}  karplint-{version}-other-target.tar.gz\n{}  {archive}\n",
            "0".repeat(64),
            sha256(&dir.join(&archive))
        ),
    )
    .unwrap();
    (rel, archive)
}

#[test]
fn release_archive_is_verified_against_sha256sums() {
    let ws = workspace();
    let (rel, archive) = release_dir("9.9.9");
    let url = format!("file://{}", rel.path().display());
    let run = || {
        let temp = tempfile::tempdir().unwrap();
        let out = action_with(
            ws.path(),
            temp.path(),
            &[("INPUT_PATH", "manifests"), ("INPUT_VERSION", "v9.9.9")],
            &[("KARPLINT_RELEASE_URL", Some(&url))],
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        (out.status.code(), stdout, stderr)
    };
    let (code, stdout, stderr) = run();
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("karplint-action: verified {archive} (sha256 ")),
        "{stderr}"
    );
    assert!(stdout.contains("::error file=manifests/"), "{stdout}");

    // The archive changed after the checksums were written: the step fails, karplint
    // never runs, and nothing is built instead.
    let sums = rel.path().join("v9.9.9/SHA256SUMS");
    let good = std::fs::read_to_string(&sums).unwrap();
    let bad = good.replace(
        &sha256(&rel.path().join("v9.9.9").join(&archive)),
        &"f".repeat(64),
    );
    std::fs::write(&sums, &bad).unwrap();
    let (code, stdout, stderr) = run();
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!(
            "karplint-action: checksum mismatch for {archive}: SHA256SUMS says {}, the download is ",
            "f".repeat(64)
        )),
        "{stderr}"
    );
    assert!(stderr.contains("refusing to run it"), "{stderr}");
    assert!(!stderr.contains("building"), "{stderr}");
    assert_eq!(stdout, "");

    // No checksum for the archive, or no SHA256SUMS at all: the same.
    std::fs::write(&sums, "0000  karplint-9.9.9-other-target.tar.gz\n").unwrap();
    let (code, stdout, stderr) = run();
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!(
            "SHA256SUMS of v9.9.9 has no checksum for {archive}"
        )),
        "{stderr}"
    );
    std::fs::remove_file(&sums).unwrap();
    let (code, _, stderr) = run();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("cannot download"), "{stderr}");
}

/// A `cargo` that records its arguments and "installs" the binary under test at `--root`;
/// a `curl` that records its arguments and fails.
fn fake_tools() -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("calls.log");
    executable(
        &bin.path().join("cargo"),
        &format!(
            "#!/bin/bash\necho \"cargo $*\" >> '{log}'\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=\"$2\"; shift; done\nmkdir -p \"$root/bin\"\nln -sf '{exe}' \"$root/bin/karplint\"\n",
            log = log.display(),
            exe = env!("CARGO_BIN_EXE_karplint")
        ),
    );
    executable(
        &bin.path().join("curl"),
        &format!(
            "#!/bin/sh\necho \"curl $*\" >> '{}'\nexit 22\n",
            log.display()
        ),
    );
    bin
}

#[test]
fn pinned_to_a_commit_builds_that_commit() {
    let ws = workspace();
    let tools = fake_tools();
    let path = format!(
        "{}:{}",
        tools.path().display(),
        std::env::var("PATH").unwrap()
    );
    // The runner checks a pinned action out to _actions/<owner>/<repo>/<ref>.
    let actions = tempfile::tempdir().unwrap();
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let pinned = actions.path().join("_actions/karplint/karplint").join(sha);
    std::fs::create_dir_all(&pinned).unwrap();
    std::fs::write(
        pinned.join("Cargo.toml"),
        "[package]\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let log = tools.path().join("calls.log");
    let run = |action_path: &Path, inputs: &[(&str, &str)], env: &[(&str, Option<&str>)]| {
        let _ = std::fs::remove_file(&log);
        let temp = tempfile::tempdir().unwrap();
        let mut all = vec![
            ("PATH", Some(path.as_str())),
            ("GITHUB_ACTION_PATH", action_path.to_str()),
        ];
        all.extend_from_slice(env);
        let out = action_with(ws.path(), temp.path(), inputs, &all);
        let calls = std::fs::read_to_string(&log).unwrap_or_default();
        (out, calls)
    };
    let (out, calls) = run(&pinned, &[("INPUT_PATH", "manifests")], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "action pinned to commit {sha}: building that commit"
        )),
        "{stderr}"
    );
    assert!(!calls.contains("curl"), "{calls}");
    assert!(
        calls.contains(&format!("--path {}", pinned.display())),
        "{calls}"
    );

    // GitHub's action_ref, for an action not under _actions (the same SHA).
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("Cargo.toml"), "version = \"0.1.0\"\n").unwrap();
    let (out, calls) = run(
        plain.path(),
        &[("INPUT_PATH", "manifests")],
        &[("ACTION_REF", Some(sha))],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!calls.contains("curl"), "{calls}");

    // A tag downloads the release of the action's version; an explicit version wins
    // over a pinned commit.
    let tagged = actions.path().join("_actions/karplint/karplint/v0.1.0");
    std::fs::create_dir_all(&tagged).unwrap();
    std::fs::write(tagged.join("Cargo.toml"), "version = \"0.1.0\"\n").unwrap();
    let (_, calls) = run(&tagged, &[("INPUT_PATH", "manifests")], &[]);
    assert!(calls.contains("/v0.1.0/karplint-0.1.0-"), "{calls}");
    let (_, calls) = run(
        &pinned,
        &[("INPUT_PATH", "manifests"), ("INPUT_VERSION", "0.0.9")],
        &[],
    );
    assert!(calls.contains("/v0.0.9/karplint-0.0.9-"), "{calls}");
}

#[test]
fn paths_with_spaces() {
    let ws = workspace();
    let spaced = ws.path().join("my manifests");
    std::fs::rename(ws.path().join("manifests"), &spaced).unwrap();
    std::fs::create_dir(ws.path().join("other dir")).unwrap();
    std::fs::write(
        ws.path().join("other dir/limits.yaml"),
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: d, namespace: shop}\nspec:\n  limits:\n    - type: Container\n      defaultRequest: {cpu: 100m, memory: 128Mi}\n",
    )
    .unwrap();
    let lint = |inputs: &[(&str, &str)]| {
        let temp = tempfile::tempdir().unwrap();
        let mut all = vec![("INPUT_FORMAT", "json")];
        all.extend_from_slice(inputs);
        let out = action(ws.path(), temp.path(), &all);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
        let mut files: Vec<String> = (v["diagnostics"].as_array().unwrap().iter())
            .map(|d| d["file"].as_str().unwrap().to_string())
            .collect();
        files.dedup();
        (files, v)
    };
    // One line naming a directory with a space.
    let (files, _) = lint(&[("INPUT_PATH", "my manifests")]);
    assert!(!files.is_empty());
    assert!(
        files.iter().all(|f| f.starts_with("my manifests/")),
        "{files:?}"
    );
    // One path per line, spaces kept; context likewise.
    let (files, v) = lint(&[
        ("INPUT_PATH", "my manifests/web.yaml\n  other dir  \n"),
        ("INPUT_CONTEXT", "other dir/limits.yaml"),
    ]);
    assert_eq!(files, ["my manifests/web.yaml"], "{v}");
    let rules: Vec<&str> = (v["diagnostics"].as_array().unwrap().iter())
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert!(!rules.contains(&"missing-limit-range"), "{rules:?}");
    // A single line that names no path is split on spaces, as before.
    std::fs::rename(&spaced, ws.path().join("manifests")).unwrap();
    std::fs::write(
        ws.path().join("extra.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: extra}\n",
    )
    .unwrap();
    let (_, v) = lint(&[("INPUT_PATH", "manifests extra.yaml")]);
    assert_eq!(v["summary"]["files"], 4, "{v}");
}

#[test]
fn baseline_input_reports_only_new_findings() {
    let ws = workspace();
    let out = Command::new(env!("CARGO_BIN_EXE_karplint"))
        .current_dir(ws.path())
        .args(["--write-baseline", ".karplint-baseline.json", "manifests"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let temp = tempfile::tempdir().unwrap();
    let out = action(
        ws.path(),
        temp.path(),
        &[
            ("INPUT_PATH", "manifests"),
            ("INPUT_BASELINE", ".karplint-baseline.json"),
        ],
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(!stdout.contains("::error file="), "{stdout}");
    assert!(
        stdout.contains("in the baseline .karplint-baseline.json not reported"),
        "{stdout}"
    );
    let summary = std::fs::read_to_string(temp.path().join("step_summary.md")).unwrap();
    assert!(summary.contains("finding(s) in the baseline"), "{summary}");
}

/// A run that read no NodePool passes, but says so as a ::warning in the log whatever the
/// format and as a warning line of the summary; `require-nodepools` fails it with exit 2.
#[test]
fn no_nodepool_warns_and_require_nodepools_fails() {
    let ws = workspace();
    let temp = tempfile::tempdir().unwrap();
    let inputs = [
        ("INPUT_PATH", "manifests"),
        ("INPUT_FORMAT", "json"),
        ("INPUT_FAIL_ON", "never"),
    ];
    let out = action(ws.path(), temp.path(), &inputs);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // Standard output is the JSON report, whole.
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap();
    assert!(
        stderr.contains(
            "::warning title=karplint checks-not-run::no NodePool or Provisioner found: scheduling rules were not run"
        ),
        "{stderr}"
    );
    let summary = std::fs::read_to_string(temp.path().join("step_summary.md")).unwrap();
    assert!(
        summary.contains("> **warning:** no NodePool or Provisioner found"),
        "{summary}"
    );
    // The github format makes the note an annotation itself: once, not twice.
    let temp = tempfile::tempdir().unwrap();
    let out = action(
        ws.path(),
        temp.path(),
        &[("INPUT_PATH", "manifests"), ("INPUT_FAIL_ON", "never")],
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout.matches("no NodePool or Provisioner found").count(),
        1,
        "{stdout}"
    );

    let temp = tempfile::tempdir().unwrap();
    let mut required = inputs.to_vec();
    required.push(("INPUT_REQUIRE_NODEPOOLS", "true"));
    let out = action(ws.path(), temp.path(), &required);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("(--require-nodepools)"), "{stderr}");
    let output = std::fs::read_to_string(temp.path().join("output.txt")).unwrap();
    assert_eq!(output, "exit-code=2\n");

    let mut bad = inputs.to_vec();
    bad.push(("INPUT_REQUIRE_NODEPOOLS", "yes"));
    let out = action(ws.path(), tempfile::tempdir().unwrap().path(), &bad);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be true or false"));
}

/// `args` passes flags the action has no input for.
#[test]
fn args_input_passes_flags() {
    let ws = workspace();
    let run = |args: &str| {
        let temp = tempfile::tempdir().unwrap();
        let out = action(
            ws.path(),
            temp.path(),
            &[
                ("INPUT_PATH", "manifests"),
                ("INPUT_FORMAT", "json"),
                ("INPUT_ARGS", args),
            ],
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), v["summary"]["errors"].as_u64().unwrap())
    };
    let (code, errors) = run("");
    assert_eq!(code, Some(1));
    assert!(errors > 0);
    assert_eq!(run("  --fail-on never\n"), (Some(0), errors));
    assert_eq!(
        run("--rule in-tree-storage-plugin=off --fail-on never").1,
        errors - 1
    );
}

/// The release workflow builds an archive for every target the action downloads.
#[test]
fn release_workflow_builds_what_the_action_downloads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workflow = std::fs::read_to_string(root.join(".github/workflows/release.yml")).unwrap();
    let script = std::fs::read_to_string(root.join("scripts/action.sh")).unwrap();
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(script.contains(&format!(") echo {target} ;;")), "{target}");
        assert!(workflow.contains(&format!("target: {target},")), "{target}");
    }
    assert!(workflow.contains("target: x86_64-pc-windows-msvc,"));
    assert!(workflow.contains("sha256sum karplint-* > SHA256SUMS"));
    assert!(workflow.contains("tags: [\"v*\"]"));
}

/// action.yml, the release workflow and the hooks are valid YAML (GitHub refuses an
/// action.yml that is not: an unquoted `: ` in a description is enough), and every input
/// of the action reaches the script as its INPUT_* variable.
#[test]
fn action_and_workflow_files_parse_and_map_every_input() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let parse = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(root.join(name)).unwrap();
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let action = parse("action.yml");
    parse(".github/workflows/release.yml");
    parse(".pre-commit-hooks.yaml");
    let env = &action["runs"]["steps"][0]["env"];
    let script = std::fs::read_to_string(root.join("scripts/action.sh")).unwrap();
    let inputs = action["inputs"].as_object().unwrap();
    assert!(inputs.contains_key("baseline"));
    for name in inputs.keys() {
        let var = format!("INPUT_{}", name.to_uppercase().replace('-', "_"));
        assert_eq!(env[&var], format!("${{{{ inputs.{name} }}}}"), "{var}");
        assert!(script.contains(&format!("${{{var}")), "{var} unused");
    }
}

/// The pre-commit mirror (`pre-commit-mirror/`, published as a repository of its own) has
/// the main repository's hooks with `language: python`, and pins the karplint wheel of
/// this version; the release workflow builds that wheel, the static musl archives and the
/// image; `cargo binstall` finds the archives the release uploads.
#[test]
fn distribution_files_stay_in_step() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let hooks = |p: &str| -> serde_json::Value {
        serde_saphyr::from_str(&read(p)).unwrap_or_else(|e| panic!("{p}: {e}"))
    };
    let mut main = hooks(".pre-commit-hooks.yaml");
    let mirror = hooks("pre-commit-mirror/.pre-commit-hooks.yaml");
    for h in main.as_array_mut().unwrap() {
        assert_eq!(h["language"], "rust");
        h["language"] = "python".into();
    }
    assert_eq!(mirror, main);
    let version = env!("CARGO_PKG_VERSION");
    let pyproject = read("pre-commit-mirror/pyproject.toml");
    assert!(
        pyproject.contains(&format!("version = \"{version}\"")),
        "{pyproject}"
    );
    assert!(
        pyproject.contains(&format!("dependencies = [\"karplint=={version}\"]")),
        "{pyproject}"
    );
    let wheel = read("pyproject.toml");
    assert!(wheel.contains("bindings = \"bin\"") && wheel.contains("name = \"karplint\""));
    let workflow = read(".github/workflows/release.yml");
    for needle in [
        "target: x86_64-unknown-linux-musl,",
        "target: aarch64-unknown-linux-musl,",
        "PyO3/maturin-action@v1",
        "manylinux: musllinux_1_2",
        "pypa/gh-action-pypi-publish",
        "docker/build-push-action",
    ] {
        assert!(workflow.contains(needle), "{needle}");
    }
    let cargo = read("Cargo.toml");
    assert!(cargo.contains(
        "pkg-url = \"{ repo }/releases/download/v{ version }/karplint-{ version }-{ target }{ archive-suffix }\""
    ));
    assert!(read("Dockerfile").contains("ENTRYPOINT [\"karplint\"]"));
}

/// A fake of the GitHub REST API's issue comments, on a local port: it lists, adds and
/// updates the comments of one pull request, and records each request's method, path and
/// `Authorization` header.
struct FakeGitHub {
    url: String,
    comments: std::sync::Arc<std::sync::Mutex<Vec<(u64, String)>>>,
    requests: std::sync::Arc<std::sync::Mutex<Vec<(String, String, String)>>>,
}

impl FakeGitHub {
    fn start(existing: Vec<(u64, String)>) -> FakeGitHub {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let comments = std::sync::Arc::new(std::sync::Mutex::new(existing));
        let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (c, r) = (comments.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let mut parts = line.split_whitespace();
                let method = parts.next().unwrap_or("").to_string();
                let path = parts.next().unwrap_or("").to_string();
                let (mut length, mut auth) = (0usize, String::new());
                loop {
                    let mut h = String::new();
                    reader.read_line(&mut h).unwrap();
                    let h = h.trim_end();
                    if h.is_empty() {
                        break;
                    }
                    let (k, v) = h.split_once(": ").unwrap_or((h, ""));
                    match k.to_ascii_lowercase().as_str() {
                        "content-length" => length = v.parse().unwrap(),
                        "authorization" => auth = v.to_string(),
                        _ => {}
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                r.lock().unwrap().push((method.clone(), path.clone(), auth));
                let text = |b: &[u8]| -> String {
                    let v: serde_json::Value = serde_json::from_slice(b).unwrap();
                    v["body"].as_str().unwrap().to_string()
                };
                let mut all = c.lock().unwrap();
                let answer = match method.as_str() {
                    "GET" if path.ends_with("&page=1") => serde_json::Value::Array(
                        (all.iter())
                            .map(|(id, b)| serde_json::json!({"id": id, "body": b}))
                            .collect(),
                    ),
                    "GET" => serde_json::json!([]),
                    "POST" => {
                        let id = 1000 + all.len() as u64;
                        all.push((id, text(&body)));
                        serde_json::json!({"id": id})
                    }
                    "PATCH" => {
                        let id: u64 = path.rsplit('/').next().unwrap().parse().unwrap();
                        let new = text(&body);
                        for (i, b) in all.iter_mut() {
                            if *i == id {
                                *b = new.clone();
                            }
                        }
                        serde_json::json!({"id": id})
                    }
                    _ => serde_json::json!({}),
                };
                let answer = answer.to_string();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        FakeGitHub {
            url,
            comments,
            requests,
        }
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=k", "-c", "user.email=k@example.com"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const DIFF_POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements:\n        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}\n";
const DIFF_APP: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: zonal, namespace: shop}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: z}}\n  template:\n    metadata: {labels: {app: z}}\n    spec:\n      nodeSelector: {topology.kubernetes.io/zone: us-east-1b}\n      containers:\n        - {name: z, image: example.com/z:1, resources: {requests: {cpu: 500m, memory: 1Gi}}}\n";

#[test]
fn diff_mode_comments_on_the_pull_request_and_updates_the_comment_in_place() {
    let ws = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let w = ws.path();
    git(w, &["init", "-q"]);
    std::fs::write(w.join("pool.yaml"), DIFF_POOL).unwrap();
    std::fs::write(w.join("app.yaml"), DIFF_APP).unwrap();
    git(w, &["add", "-A"]);
    git(w, &["commit", "-q", "-m", "base"]);
    // The checkout has the base branch as actions/checkout with fetch-depth 0 leaves it.
    git(w, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    std::fs::write(w.join("pool.yaml"), DIFF_POOL.replace(", us-east-1b]", "]")).unwrap();
    git(w, &["commit", "-q", "-a", "-m", "drop a zone"]);
    let github = FakeGitHub::start(vec![(7, "LGTM".to_string())]);
    let inputs = [("INPUT_GITHUB_TOKEN", "t0ken"), ("INPUT_FORMAT", "github")];
    let env = |k: &'static str, v: &str| (k, Some(v.to_string()));
    let run = || {
        let bin = env!("CARGO_BIN_EXE_karplint");
        let vars = [
            env("KARPLINT_BIN", bin),
            env("GITHUB_EVENT_NAME", "pull_request"),
            env("GITHUB_BASE_REF", "main"),
            env("GITHUB_REF", "refs/pull/42/merge"),
            env("GITHUB_REPOSITORY", "octo/cluster"),
            env("GITHUB_API_URL", &github.url),
        ];
        let vars: Vec<(&str, Option<&str>)> =
            vars.iter().map(|(k, v)| (*k, v.as_deref())).collect();
        action_with(w, temp.path(), &inputs, &vars)
    };
    // The pull request leaves a workload Pending: the step fails, and says why.
    let out = run();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("title=karplint incompatible-requirements::"),
        "{stdout}"
    );
    assert!(stderr.contains("commented on pull request #42"), "{stderr}");
    let summary = std::fs::read_to_string(temp.path().join("step_summary.md")).unwrap();
    assert!(
        summary.starts_with("<!-- karplint-diff -->\n## karplint diff\n"),
        "{summary}"
    );
    assert!(summary.contains("`origin/main` → `HEAD`"), "{summary}");
    {
        let comments = github.comments.lock().unwrap();
        assert_eq!(comments.len(), 2, "{comments:?}");
        assert_eq!(
            comments[0],
            (7, "LGTM".to_string()),
            "other comments are left alone"
        );
        assert!(comments[1].1.contains("### Newly Pending"), "{comments:?}");
    }
    // A later push fixes it: the same comment is updated, no second one is added, and the
    // step passes.
    std::fs::write(w.join("pool.yaml"), DIFF_POOL).unwrap();
    git(w, &["commit", "-q", "-a", "-m", "keep the zone"]);
    let out = run();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("updated the comment on pull request #42"),
        "{stderr}"
    );
    let comments = github.comments.lock().unwrap();
    assert_eq!(comments.len(), 2, "{comments:?}");
    assert!(comments[1].1.starts_with("<!-- karplint-diff -->"));
    assert!(
        !comments[1].1.contains("### Newly Pending"),
        "{}",
        comments[1].1
    );
    let requests = github.requests.lock().unwrap();
    let methods: Vec<&str> = requests.iter().map(|(m, _, _)| m.as_str()).collect();
    assert_eq!(methods, ["GET", "POST", "GET", "PATCH"], "{requests:?}");
    assert!(requests.iter().all(|(_, _, auth)| auth == "Bearer t0ken"));
    assert_eq!(requests[3].1, "/repos/octo/cluster/issues/comments/1001");
}

#[test]
fn diff_mode_refuses_paths_and_baselines_and_needs_a_base() {
    let ws = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    git(ws.path(), &["init", "-q"]);
    let bin = env!("CARGO_BIN_EXE_karplint");
    for (inputs, expect) in [
        (
            vec![("INPUT_MODE", "diff"), ("INPUT_PATH", "manifests")],
            "path is for mode: lint",
        ),
        (
            vec![("INPUT_MODE", "diff"), ("INPUT_BASELINE", "b.json")],
            "baseline is for mode: lint",
        ),
        (vec![("INPUT_MODE", "diff")], "needs the base input"),
        (vec![("INPUT_MODE", "review")], "mode must be lint or diff"),
    ] {
        let out = action_with(
            ws.path(),
            temp.path(),
            &inputs,
            &[("KARPLINT_BIN", Some(bin))],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{inputs:?}: {stderr}");
        assert!(stderr.contains(expect), "{inputs:?}: {stderr}");
    }
}
