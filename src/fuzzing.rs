//! Fuzzing support: the whole pipeline on bytes held in memory, and a generator that turns
//! arbitrary bytes into manifest-shaped YAML.
//!
//! Shared by the cargo-fuzz targets in `fuzz/` and by `tests/fuzz.rs`, which replays the
//! kept regression inputs and runs a short randomized pass on stable Rust. Not a stable API.

use crate::engine;
use crate::report::{self, human, json};

/// Runs parse → model → index → rules → both renderers on `data` (read as `karplint -`
/// would, lossily as UTF-8). Panics only if karplint does: that is what the fuzzer looks for.
pub fn lint_bytes(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    lint_text(&text);
}

/// As [`lint_bytes`], on text.
pub fn lint_text(text: &str) {
    // As the CLI does: worker stacks deep enough for the parser's depth limit.
    static POOL: std::sync::Once = std::sync::Once::new();
    POOL.call_once(|| {
        let _ = rayon::ThreadPoolBuilder::new()
            .stack_size(64 << 20)
            .build_global();
    });
    let Ok(report) = engine::lint_str(text) else {
        return;
    };
    let texts = report::Texts::load(&report);
    let _ = human::render(
        &report,
        &texts,
        human::Style {
            color: false,
            width: 80,
        },
    );
    let _ = json::render(&report, &texts);
}

/// Reads choices from fuzzer bytes; zeros once they run out.
struct Choices<'a>(&'a [u8]);

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn pick<'b>(&mut self, xs: &[&'b str]) -> &'b str {
        xs[usize::from(self.byte()) % xs.len()]
    }
    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

const KINDS: &[(&str, &str)] = &[
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "CronJob"),
    ("v1", "Pod"),
    ("v1", "LimitRange"),
    ("v1", "PersistentVolume"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Namespace"),
    ("v1", "List"),
    ("v1", "ConfigMap"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("karpenter.sh/v1", "NodePool"),
    ("karpenter.sh/v1beta1", "NodePool"),
    ("karpenter.sh/v1alpha5", "Provisioner"),
    ("karpenter.k8s.aws/v1", "EC2NodeClass"),
    ("policy/v1", "PodDisruptionBudget"),
];

const KEYS: &[&str] = &[
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "spec",
    "template",
    "replicas",
    "containers",
    "initContainers",
    "resources",
    "requests",
    "limits",
    "cpu",
    "memory",
    "nodeSelector",
    "affinity",
    "nodeAffinity",
    "tolerations",
    "key",
    "operator",
    "values",
    "effect",
    "topologySpreadConstraints",
    "maxSkew",
    "topologyKey",
    "requirements",
    "taints",
    "startupTaints",
    "disruption",
    "weight",
    "kubelet",
    "maxPods",
    "items",
    "jobTemplate",
    "volumeClaimTemplates",
    "awsElasticBlockStore",
    "provisioner",
    "limits",
    "selector",
    "matchLabels",
    "matchExpressions",
    "defaultRequest",
    "default",
    "type",
    "image",
];

const SCALARS: &[&str] = &[
    "x",
    "0644",
    "0o17",
    "1e3",
    "500m",
    "1Gi",
    "-1",
    "9223372036854775808",
    "yes",
    "on",
    "~",
    "null",
    "true",
    "\"\"",
    "''",
    "\"a\\tb\"",
    "In",
    "NotIn",
    "Exists",
    "Gt",
    "NoSchedule",
    "kubernetes.io/arch",
    "topology.kubernetes.io/zone",
    "karpenter.sh/capacity-type",
    "{{ .Values.x }}",
    "é",
    "\u{feff}",
    "[]",
    "{}",
    "[a, b]",
    "{a: 1}",
    "&a x",
    "*a",
    "!!str 1",
    "|\n  block",
    ">-\n  folded",
    "- a",
    "? k",
    "1.5",
    ".inf",
    "0x10",
    "2Ki",
    "100000000000Ei",
];

/// Builds a manifest-shaped YAML stream from fuzzer bytes: real kinds and field names with
/// odd values, nesting and document breaks, so the fuzzer reaches the typed model and the
/// rules rather than stopping at the first syntax error.
pub fn manifest_from_bytes(data: &[u8]) -> String {
    let mut c = Choices(data);
    let mut out = String::new();
    let docs = 1 + c.byte() % 4;
    for d in 0..docs {
        if d > 0 || c.byte().is_multiple_of(4) {
            out.push_str(if c.byte().is_multiple_of(8) {
                "---\r\n"
            } else {
                "---\n"
            });
        }
        let (api, kind) = KINDS[usize::from(c.byte()) % KINDS.len()];
        out.push_str(&format!("apiVersion: {api}\nkind: {kind}\n"));
        let fields = 1 + c.byte() % 8;
        for _ in 0..fields {
            node(&mut c, &mut out, 0);
            if c.done() {
                break;
            }
        }
    }
    out
}

fn node(c: &mut Choices, out: &mut String, depth: usize) {
    let indent = "  ".repeat(depth);
    let key = c.pick(KEYS);
    match c.byte() % 6 {
        0 | 1 if depth < 8 => {
            out.push_str(&format!("{indent}{key}:\n"));
            for _ in 0..1 + c.byte() % 4 {
                node(c, out, depth + 1);
            }
        }
        2 if depth < 8 => {
            out.push_str(&format!("{indent}{key}:\n"));
            for _ in 0..1 + c.byte() % 3 {
                out.push_str(&format!("{indent}- "));
                if c.byte().is_multiple_of(2) {
                    out.push_str(&format!("{}\n", c.pick(SCALARS)));
                } else {
                    let mut inner = String::new();
                    node(c, &mut inner, depth + 1);
                    out.push_str(inner.trim_start());
                }
            }
        }
        _ => out.push_str(&format!("{indent}{key}: {}\n", c.pick(SCALARS))),
    }
}

/// The skim of unmodelled kinds must never accept a document serde-saphyr rejects (it would
/// hide a `parse-error`): neither into `IgnoredAny`, nor through the document visitor once
/// a header was read. Panics when it does.
pub fn skim_agrees(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for (_, doc) in crate::parse::split_documents(&text) {
        assert!(
            !crate::parse::skim::plainly_valid(doc) || crate::parse::skim::ignored_any_accepts(doc),
            "skim accepted a document serde-saphyr rejects: {doc:?}"
        );
        assert!(
            !crate::parse::skim::hides_an_error(doc),
            "skim accepted a document the document path rejects: {doc:?}"
        );
    }
}

/// The typed model's fast path must read every document it accepts exactly as
/// serde-saphyr does (the same objects, spans and rejected values); on anything else it
/// declines. Panics when it reads one otherwise.
pub fn fast_agrees(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for (_, doc) in crate::parse::split_documents(&text) {
        let disagreement = crate::parse::fast_disagrees(doc);
        assert!(
            disagreement.is_none(),
            "the fast path and serde-saphyr read {doc:?} otherwise: {disagreement:?}"
        );
    }
}
