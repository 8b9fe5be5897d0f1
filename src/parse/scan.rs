//! A byte scan that tells, before parsing, which files may hold objects the whole run needs
//! before any workload is linted: NodePools, node classes, DaemonSets, PVCs, budgets,
//! LimitRanges, RuntimeClasses, Namespaces, Nodes, autoscalers, eksctl configs and Karpenter's other kinds.
//! Those files are parsed first and held; the others (workloads, ConfigMaps, CRDs, …) are
//! linted one by one and dropped.
//!
//! The scan only has to be right often, not always: the pipeline checks every streamed
//! file's objects and, if one of them is of a held kind after all (a `kind` spelled with an
//! escape, an alias or on its own line), runs again with that file held. A file the scan
//! holds needlessly (a ConfigMap quoting `kind: NodePool`) only costs memory.

/// The `kind` values of held objects (`Kind::classify` names, and the kinds of Karpenter's
/// API groups that are kept without a model).
const HELD_KINDS: &[&[u8]] = &[
    b"AWSNodeTemplate",
    b"ClusterConfig",
    b"DaemonSet",
    b"EC2NodeClass",
    b"HorizontalPodAutoscaler",
    b"LimitRange",
    b"Machine",
    b"Namespace",
    b"Node",
    b"NodeClaim",
    b"NodeClass",
    b"NodeOverlay",
    b"NodePool",
    b"PersistentVolume",
    b"PersistentVolumeClaim",
    b"PodDisruptionBudget",
    b"Provisioner",
    b"RuntimeClass",
    b"ScaledObject",
    b"StorageClass",
];

/// The held kinds that change how every other workload is judged: the capacity Karpenter
/// launches and what admission adds to pods, rather than one workload's own budget,
/// claims or autoscaler.
const CLUSTER_SHAPING_KINDS: &[&[u8]] = &[
    b"AWSNodeTemplate",
    b"ClusterConfig",
    b"DaemonSet",
    b"EC2NodeClass",
    b"LimitRange",
    b"Node",
    b"NodeClass",
    b"NodeOverlay",
    b"NodePool",
    b"Provisioner",
    b"RuntimeClass",
    b"StorageClass",
];

/// Does the text have a `kind: X` (YAML or JSON, any quoting) whose `X` is a held kind?
pub fn may_hold_cluster_objects(text: &[u8]) -> bool {
    may_hold_kinds(text, HELD_KINDS)
}

/// Does the text have a `kind: X` whose `X` changes how every other workload is judged
/// ([`CLUSTER_SHAPING_KINDS`]): a NodePool, a node class, a DaemonSet, a LimitRange, …?
pub fn may_shape_the_cluster(text: &[u8]) -> bool {
    may_hold_kinds(text, CLUSTER_SHAPING_KINDS)
}

/// Does the text have a `kind: X` whose `X` is one of `kinds`?
fn may_hold_kinds(text: &[u8], kinds: &[&[u8]]) -> bool {
    let finder = memchr::memmem::Finder::new(b"kind");
    let mut from = 0;
    while let Some(at) = finder.find(&text[from..]).map(|p| from + p) {
        from = at + 4;
        if at > 0 && (text[at - 1].is_ascii_alphanumeric() || text[at - 1] == b'_') {
            continue;
        }
        let mut i = from;
        let skip = |i: &mut usize, set: &[u8]| {
            while text.get(*i).is_some_and(|b| set.contains(b)) {
                *i += 1;
            }
        };
        skip(&mut i, b"\"'");
        skip(&mut i, b" \t");
        if text.get(i) != Some(&b':') {
            continue;
        }
        i += 1;
        skip(&mut i, b" \t");
        skip(&mut i, b"\"'");
        let start = i;
        skip(
            &mut i,
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        );
        if kinds.contains(&&text[start..i]) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::may_hold_cluster_objects as holds;

    #[test]
    fn only_the_kinds_every_workload_is_judged_against_shape_the_cluster() {
        use super::may_shape_the_cluster as shapes;
        for kind in [
            "NodePool",
            "EC2NodeClass",
            "DaemonSet",
            "LimitRange",
            "RuntimeClass",
        ] {
            assert!(shapes(format!("kind: {kind}\n").as_bytes()), "{kind}");
        }
        for kind in [
            "PodDisruptionBudget",
            "PersistentVolumeClaim",
            "Namespace",
            "Deployment",
        ] {
            assert!(!shapes(format!("kind: {kind}\n").as_bytes()), "{kind}");
            assert_eq!(
                holds(format!("kind: {kind}\n").as_bytes()),
                kind != "Deployment"
            );
        }
    }

    #[test]
    fn finds_held_kinds_in_any_quoting() {
        assert!(holds(b"apiVersion: karpenter.sh/v1\nkind: NodePool\n"));
        assert!(holds(b"{\"apiVersion\": \"v1\", \"kind\": \"Namespace\"}"));
        assert!(holds(
            b"items:\n- {kind: 'PersistentVolumeClaim', apiVersion: v1}"
        ));
        assert!(holds(b"kind:\tDaemonSet\r\n"));
    }

    #[test]
    fn passes_workloads_and_unmodelled_kinds() {
        assert!(!holds(
            b"apiVersion: apps/v1\nkind: Deployment\n---\nkind: ConfigMap\n"
        ));
        // Longer names and keys that only end in `kind` are not held kinds.
        assert!(!holds(b"kind: NodePoolList2x\nsubkind: NodePool\n"));
        assert!(!holds(b"kind: Nodes\n"));
        // A value on its own line (CRD schemas: `kind:` then a mapping) is not read.
        assert!(!holds(b"properties:\n  kind:\n    type: string\n"));
        assert!(!holds(b""));
    }
}
