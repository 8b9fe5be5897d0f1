//! Model stage, what the model keeps of open-ended maps: object labels, annotations and
//! container environment variables.
//!
//! The model keeps only what some rule reads, so that a large tree's model stays much
//! smaller than its input: labels, annotations (`last-applied-configuration`, Helm and
//! Argo CD bookkeeping) and environment variables (often hundreds per workload) would
//! otherwise be most of it. What is kept is decided here and nowhere else:
//!
//! | map | kept |
//! |---|---|
//! | `metadata.labels` of Pods and Nodes | all ([`ALL_LABELS_ON`]) |
//! | `metadata.labels` of the other workload kinds (controllers) | [`CONTROLLER_LABELS`] |
//! | `metadata.labels` of every other kind | none |
//! | pod-template labels (`spec.template.metadata.labels`) | all (they are the pods' labels) |
//! | `metadata.annotations` of every object, pod template and claim template | keys with an [`ANNOTATION_PREFIXES`] prefix |
//! | container and init-container `env` | [`ENV_VARS`] |
//!
//! Other string maps (`nodeSelector`, resource lists, NodePool template labels, eksctl
//! node-group labels, claim-template labels) are kept whole.
//!
//! A rule reads these maps through accessors that check the key against this table in
//! debug builds ([`crate::model::Object::label`], [`Annotations::entry`],
//! [`crate::facts::WorkloadFacts::env_values`]): a rule that reads a key the model drops
//! panics in `cargo test` (the fixture tests run every rule), naming the caller's file and
//! line and the key, instead of silently seeing nothing. Release builds check nothing.
//! The object labels and annotations are private to these accessors; `Container::env` is
//! not (facts copy it whole), so a name compared outside `env_values` goes unchecked. A
//! read is checked only on paths the tests run: a rule's fixtures must reach it (as
//! `fixtures/missing-device-plugin/quiet-pod-eni.yaml` reaches `ENABLE_POD_ENI`).

use super::Kind;
use super::de::{Spanned, SpannedMap, Str, Text};
use serde::{Deserialize, Deserializer};

/// A label, annotation prefix or environment variable the model keeps, with what reads it.
#[derive(Debug, Clone, Copy)]
pub struct Kept {
    /// The key (for annotations: a prefix of the keys).
    pub key: &'static str,
    /// The rules, facts or stages that read it (for the reader of this table).
    #[allow(dead_code)]
    pub read_by: &'static str,
    /// Why they read it.
    #[allow(dead_code)]
    pub why: &'static str,
}

/// A kind whose objects keep all their labels.
#[derive(Debug, Clone, Copy)]
pub struct KeepsAllLabels {
    pub kind: Kind,
    /// What reads them (for the reader of this table).
    #[allow(dead_code)]
    pub read_by: &'static str,
    #[allow(dead_code)]
    pub why: &'static str,
}

/// Kinds whose objects keep all their labels.
pub const ALL_LABELS_ON: &[KeepsAllLabels] = &[
    KeepsAllLabels {
        kind: Kind::Pod,
        read_by: "karpenter::topology::pod_labels (unsatisfiable-pod-affinity, unsatisfiable-topology-spread, pvc-workload-not-spread, workload facts for consolidation-blocked), replicas-exceed-capacity",
        why: "a bare Pod's labels are its pod labels: PodDisruptionBudget, pod (anti-)affinity, topology spread and Fargate profile selectors match any of them",
    },
    KeepsAllLabels {
        kind: Kind::Node,
        read_by: "karpenter::cluster (static node groups, is_static_node), karpenter::topology::node_domains, karpenter-label-on-static-node, deprecated-karpenter-api",
        why: "a Node is static capacity: any of its labels may satisfy a pod's nodeSelector or affinity, and its instance-type, zone and Karpenter labels are read by name",
    },
];

/// Labels kept on workload controllers (every workload kind but Pod); the others are
/// dropped: the labels their pods get are the pod template's, kept whole.
pub const CONTROLLER_LABELS: &[Kept] = &[Kept {
    key: "app.kubernetes.io/name",
    read_by: "karpenter::cluster::is_karpenter_controller (static-only placement)",
    why: "`app.kubernetes.io/name: karpenter` names the Karpenter controller, whose pods never run on nodes Karpenter launches",
}];

/// Prefixes of the annotations kept (on objects, pod templates and claim templates); the
/// others are skipped while parsing, without building their values.
pub const ANNOTATION_PREFIXES: &[Kept] = &[
    Kept {
        key: "karplint.io/",
        read_by: "suppress (`karplint.io/ignore`)",
        why: "the annotation that suppresses findings on an object or its pod template",
    },
    Kept {
        key: "karpenter.sh/",
        read_by: "consolidation-blocked (`karpenter.sh/do-not-disrupt`), deprecated-karpenter-api (`karpenter.sh/do-not-evict`, `karpenter.sh/do-not-consolidate`)",
        why: "Karpenter's own pod and node annotations",
    },
    Kept {
        key: "autoscaling.knative.dev/",
        read_by: "model::crd::knative_pods (Knative Service and Configuration replicas)",
        why: "`min-scale` / `minScale` on a revision template sets how many pods it keeps",
    },
    Kept {
        key: "storageclass.kubernetes.io/",
        read_by: "karpenter::volumes (volume-zone-conflict, pvc-workload-not-spread, claim facts)",
        why: "`is-default-class` names the StorageClass of a claim without `storageClassName`",
    },
    Kept {
        key: "storageclass.beta.kubernetes.io/",
        read_by: "karpenter::volumes (volume-zone-conflict, pvc-workload-not-spread, claim facts)",
        why: "the beta `is-default-class`, still honoured by Kubernetes",
    },
];

/// Container environment variables kept (containers and init containers); the others are
/// dropped as they are read.
pub const ENV_VARS: &[Kept] = &[Kept {
    key: "ENABLE_POD_ENI",
    read_by: "missing-device-plugin, through WorkloadFacts::env_values",
    why: "the VPC CNI registers `vpc.amazonaws.com/pod-eni` only with `ENABLE_POD_ENI=true`",
}];

/// What an object's own `metadata.labels` keeps.
#[derive(Debug, Clone, Copy)]
pub enum Labels {
    All,
    Only(&'static [Kept]),
    None,
}

/// What the labels of an object of this kind keep.
pub fn object_labels(kind: Kind) -> Labels {
    if ALL_LABELS_ON.iter().any(|e| e.kind == kind) {
        Labels::All
    } else if kind.is_workload() {
        Labels::Only(CONTROLLER_LABELS)
    } else {
        Labels::None
    }
}

impl Labels {
    pub fn keeps(self, key: &str) -> bool {
        match self {
            Labels::All => true,
            Labels::Only(kept) => kept.iter().any(|k| k.key == key),
            Labels::None => false,
        }
    }
}

pub fn annotation_kept(key: &str) -> bool {
    ANNOTATION_PREFIXES.iter().any(|p| key.starts_with(p.key))
}

pub fn env_kept(name: &str) -> bool {
    ENV_VARS.iter().any(|e| e.key == name)
}

const ADD: &str = "add it to the table in src/model/kept.rs, saying what reads it";

/// Debug builds: panics, at the caller's caller, when a rule reads a label `kind` drops.
#[cfg_attr(debug_assertions, track_caller)]
pub(crate) fn debug_check_label(kind: Kind, key: &str) {
    debug_assert!(
        object_labels(kind).keeps(key),
        "reads label `{key}` of a {kind:?}, which the model drops while parsing: {ADD}"
    );
}

/// Debug builds: panics, at the caller's caller, when a rule reads all the labels of a
/// kind that keeps only some.
#[cfg_attr(debug_assertions, track_caller)]
pub(crate) fn debug_check_all_labels(kind: Kind) {
    debug_assert!(
        matches!(object_labels(kind), Labels::All),
        "reads all the labels of a {kind:?}, most of which the model drops while parsing: read the pod template's labels, or {ADD}"
    );
}

#[cfg_attr(debug_assertions, track_caller)]
fn debug_check_annotation(key: &str) {
    debug_assert!(
        annotation_kept(key),
        "reads annotation `{key}`, which the model drops while parsing: {ADD}"
    );
}

/// Debug builds: panics, at the caller's caller, when a rule reads an environment variable
/// the model drops.
#[cfg_attr(debug_assertions, track_caller)]
pub(crate) fn debug_check_env(name: &str) {
    debug_assert!(
        env_kept(name),
        "reads environment variable `{name}`, which the model drops while parsing: {ADD}"
    );
}

/// `metadata.annotations`, holding only the [`ANNOTATION_PREFIXES`] annotations. Read by
/// key, so that a read of an annotation the model drops fails the tests.
#[derive(Debug, Clone, Default)]
pub struct Annotations(SpannedMap);

impl Annotations {
    #[cfg_attr(debug_assertions, track_caller)]
    pub fn get(&self, key: &str) -> Option<&Spanned<Text>> {
        debug_check_annotation(key);
        self.0.get(key)
    }

    /// The annotation's key and value.
    #[cfg_attr(debug_assertions, track_caller)]
    pub fn entry(&self, key: &str) -> Option<(&Spanned<Str>, &Spanned<Text>)> {
        debug_check_annotation(key);
        self.0.entry(key)
    }

    /// The annotations of any of `keys`, in document order.
    #[cfg_attr(debug_assertions, track_caller)]
    pub fn entries_of<'a>(
        &'a self,
        keys: &'a [&'a str],
    ) -> impl Iterator<Item = (&'a Spanned<Str>, &'a Spanned<Text>)> {
        for key in keys {
            debug_check_annotation(key);
        }
        (self.0.0.iter())
            .filter(|(k, _)| keys.contains(&k.value.as_str()))
            .map(|(k, v)| (k, v))
    }
}

impl<'de> Deserialize<'de> for Annotations {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::de::filtered_map(d, annotation_kept).map(Annotations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_keeps_what_the_model_kept_before_it() {
        assert!(object_labels(Kind::Pod).keeps("team"));
        assert!(object_labels(Kind::Node).keeps("team"));
        for k in [
            Kind::Deployment,
            Kind::StatefulSet,
            Kind::DaemonSet,
            Kind::CronJob,
        ] {
            assert!(object_labels(k).keeps("app.kubernetes.io/name"));
            assert!(!object_labels(k).keeps("team"));
        }
        for k in [Kind::NodePool, Kind::StorageClass, Kind::Other] {
            assert!(!object_labels(k).keeps("app.kubernetes.io/name"));
        }
        assert!(annotation_kept("karpenter.sh/do-not-disrupt"));
        assert!(annotation_kept(
            "storageclass.kubernetes.io/is-default-class"
        ));
        assert!(!annotation_kept(
            "kubectl.kubernetes.io/last-applied-configuration"
        ));
        assert!(env_kept("ENABLE_POD_ENI"));
        assert!(!env_kept("PATH"));
    }

    #[test]
    fn every_entry_says_what_reads_it_and_why() {
        let entries = (CONTROLLER_LABELS.iter())
            .chain(ANNOTATION_PREFIXES)
            .chain(ENV_VARS)
            .map(|e| (e.key, e.read_by, e.why))
            .chain(ALL_LABELS_ON.iter().map(|e| ("", e.read_by, e.why)));
        for (key, read_by, why) in entries {
            assert!(!read_by.is_empty() && !why.is_empty(), "{key}");
        }
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "reads annotation `example.com/x`, which the model drops")]
    fn reading_an_annotation_the_model_drops_fails() {
        Annotations::default().get("example.com/x");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "reads label `team` of a Deployment, which the model drops")]
    fn reading_a_controller_label_the_model_drops_fails() {
        debug_check_label(Kind::Deployment, "team");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "reads all the labels of a StatefulSet")]
    fn reading_all_the_labels_of_a_controller_fails() {
        debug_check_all_labels(Kind::StatefulSet);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "reads environment variable `AWS_REGION`")]
    fn reading_an_env_var_the_model_drops_fails() {
        debug_check_env("AWS_REGION");
    }
}
