//! Which entries of a kustomization would make the render tool fetch something: a URL, a
//! git repository (`github.com/org/repo//dir?ref=v1`, `git@host:repo`, `git::…`), an OCI or
//! HTTP Helm repository. A kustomization naming one anywhere kustomize may load from is not
//! rendered, whatever the local tree holds: kustomize reads a remote spelling as remote
//! before it looks on disk.

use serde_json::Value;

/// The fields whose entries are paths (or inline YAML, which is skipped).
const LISTS: [&str; 9] = [
    "resources",
    "bases",
    "components",
    "transformers",
    "generators",
    "validators",
    "crds",
    "configurations",
    "patchesStrategicMerge",
];

/// The first field of `k` (a kustomization read as a generic value) with an entry that
/// would be fetched, named as the note says it: `transformers`, `patches[].path`,
/// `configMapGenerator[].files`, `helmCharts[].repo`, …
pub fn remote_field(k: &Value) -> Option<String> {
    let Value::Object(map) = k else { return None };
    for field in LISTS {
        if entries(map.get(field)).any(url_like) {
            return Some(field.to_string());
        }
    }
    for field in ["patches", "patchesJson6902", "replacements"] {
        if items(map.get(field)).any(|i| text(i.get("path")).is_some_and(url_like)) {
            return Some(format!("{field}[].path"));
        }
    }
    for field in ["configMapGenerator", "secretGenerator"] {
        for item in items(map.get(field)) {
            for key in ["files", "envs"] {
                // `files` entries may be `key=path`.
                let path = |e: &str| e.split_once('=').map_or(e, |(_, p)| p).to_string();
                if entries(item.get(key)).any(|e| url_like(&path(e))) {
                    return Some(format!("{field}[].{key}"));
                }
            }
            if text(item.get("env")).is_some_and(url_like) {
                return Some(format!("{field}[].env"));
            }
        }
    }
    if map
        .get("openapi")
        .and_then(|o| text(o.get("path")))
        .is_some_and(url_like)
    {
        return Some("openapi.path".into());
    }
    for (field, key) in [
        ("helmCharts", "repo"),
        ("helmChartInflationGenerator", "chartRepoUrl"),
    ] {
        if items(map.get(field)).any(|i| text(i.get(key)).is_some_and(|r| !r.trim().is_empty())) {
            return Some(format!("{field}[].{key}"));
        }
    }
    None
}

/// The one-line string entries of a list field (inline YAML patches span lines).
fn entries(v: Option<&Value>) -> impl Iterator<Item = &str> {
    let list = match v {
        Some(Value::Array(a)) => a.as_slice(),
        _ => &[],
    };
    list.iter()
        .filter_map(Value::as_str)
        .filter(|s| !s.contains('\n'))
}

/// The mapping items of a list field.
fn items(v: Option<&Value>) -> impl Iterator<Item = &serde_json::Map<String, Value>> {
    let list = match v {
        Some(Value::Array(a)) => a.as_slice(),
        _ => &[],
    };
    list.iter().filter_map(Value::as_object)
}

fn text(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
}

/// Hosts kustomize reads as git repositories without a scheme.
const GIT_HOSTS: [&str; 5] = [
    "github.com",
    "gitlab.com",
    "bitbucket.org",
    "dev.azure.com",
    "ssh.dev.azure.com",
];

/// Whether kustomize would read `entry` as something to fetch rather than a local path.
pub fn url_like(entry: &str) -> bool {
    let e = entry.trim();
    if e.contains("://")
        || [
            "git@", "git::", "gh:", "ssh:", "http:", "https:", "oci:", "file:",
        ]
        .iter()
        .any(|p| e.starts_with(p))
    {
        return true;
    }
    if ["?ref=", "?version=", "?timeout=", "?submodules="]
        .iter()
        .any(|q| e.contains(q))
    {
        return true;
    }
    let first = e.split('/').next().unwrap_or_default();
    if GIT_HOSTS.contains(&first) {
        return true;
    }
    // `host.example/org/repo//dir` or `host.example/org/repo.git`: a repository.
    let host_like = first.contains('.') && !first.starts_with('.') && e.contains('/');
    host_like && (e.contains("//") || e.ends_with(".git") || e.contains(".git/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kustomize_reads_these_spellings_as_remote() {
        for e in [
            "https://example.com/app.yaml",
            "http://127.0.0.1:8080/x",
            "github.com/org/repo//deploy?ref=v1",
            "git@github.com:org/repo.git",
            "git::https://host/repo",
            "ssh://git@host/repo",
            "gitlab.com/org/repo",
            "git.example.com/org/repo//base",
            "oci://registry/charts",
            "../base?ref=main",
        ] {
            assert!(url_like(e), "{e}");
        }
        for e in [
            "../base",
            "app.yaml",
            "./deploy/v1.2/app.yaml",
            "patch.yaml",
        ] {
            assert!(!url_like(e), "{e}");
        }
    }

    #[test]
    fn every_field_kustomize_may_fetch_is_checked() {
        let cases = [
            ("transformers: [https://x/t.yaml]", "transformers"),
            ("generators: [https://x/g.yaml]", "generators"),
            ("validators: [https://x/v.yaml]", "validators"),
            ("patches: [{path: 'https://x/p.yaml'}]", "patches[].path"),
            (
                "patchesJson6902: [{path: 'https://x/p.yaml'}]",
                "patchesJson6902[].path",
            ),
            (
                "patchesStrategicMerge: [https://x/p.yaml]",
                "patchesStrategicMerge",
            ),
            (
                "configMapGenerator: [{name: a, files: ['k=https://x/f']}]",
                "configMapGenerator[].files",
            ),
            (
                "secretGenerator: [{name: a, envs: ['https://x/e']}]",
                "secretGenerator[].envs",
            ),
            ("openapi: {path: 'https://x/o.json'}", "openapi.path"),
            ("crds: [https://x/c.yaml]", "crds"),
            ("configurations: [https://x/c.yaml]", "configurations"),
            (
                "helmCharts: [{name: c, repo: 'https://charts.example'}]",
                "helmCharts[].repo",
            ),
            ("resources: [github.com/org/repo]", "resources"),
        ];
        for (yaml, field) in cases {
            let v: Value = serde_saphyr::from_str(yaml).expect("yaml");
            assert_eq!(remote_field(&v).as_deref(), Some(field), "{yaml}");
        }
        let local: Value =
            serde_saphyr::from_str("resources: [app.yaml]\npatches: [{path: p.yaml}]\n")
                .expect("yaml");
        assert_eq!(remote_field(&local), None);
    }
}
