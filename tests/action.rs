//! The GitHub Action's script (`scripts/action.sh`), run as the runner runs it: with the
//! environment variables GitHub sets and the `INPUT_*` variables `action.yml` maps, against
//! the binary under test (`KARPLINT_BIN`) so no install happens.

use std::path::Path;
use std::process::Command;

fn action(workspace: &Path, runner_temp: &Path, inputs: &[(&str, &str)]) -> std::process::Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut c = Command::new("bash");
    c.arg(root.join("scripts/action.sh"))
        .current_dir(runner_temp)
        .env("KARPLINT_BIN", env!("CARGO_BIN_EXE_karplint"))
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
    ] {
        c.env_remove(k);
    }
    for (k, v) in inputs {
        c.env(k, v);
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
