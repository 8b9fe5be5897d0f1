//! What a NodeClaim is once it launched: a node whose labels the next round's
//! `ExistingNode` reads (`NewLabelRequirements(node.Labels())`), and on which only the
//! DaemonSets those labels admit run (`getCompatibleDaemonPods`).

use crate::karpenter::requirements::{
    LABEL_HOSTNAME, LabelFlavor, Requirement, Requirements, TypeRow,
};

/// Keys Karpenter adds to a NodeClaim only to judge DaemonSets, never written as labels
/// (`schedulingSimulationKeys`).
const SIMULATION_KEYS: [&str; 2] = ["karpenter.sh/registered", "karpenter.sh/initialized"];

/// The launched NodeClaim's custom keys, each narrowed to the one value its node is
/// labelled with (`NodeClaimTemplate.resolveCustomLabelsFromRequirements`, at
/// `ToNodeClaim`): every key but the well-known ones, `kubernetes.io/hostname` and
/// [`SIMULATION_KEYS`] that allows some value. Karpenter picks that value at random
/// (`Requirement.Any`: a member of `In`, a random integer for `Exists` and `NotIn`);
/// karplint picks the smallest ([`Requirement::any`]). A key that allows no value
/// (`DoesNotExist`) gets no label and stays as it is.
pub(super) fn resolve_custom_labels(requirements: &mut Requirements, flavor: LabelFlavor) {
    let resolved: Vec<Requirement> = (requirements.iter())
        .filter(|r| {
            let key = r.key();
            !flavor.is_well_known(key) && key != LABEL_HOSTNAME && !SIMULATION_KEYS.contains(&key)
        })
        .filter(|r| r.is_complement() || r.values().len() > 1)
        .filter_map(|r| Some(Requirement::in_values(r.key(), [r.any()?])))
        .collect();
    for r in resolved {
        requirements.replace(r);
    }
}

/// The node's labels as requirements: the NodeClaim's requirements that name one value,
/// then the labels of the instance type it launched as.
pub(super) fn node_labels(requirements: &Requirements, launched: Option<TypeRow>) -> Requirements {
    let single = (requirements.iter())
        .filter(|r| !r.is_complement() && r.values().len() == 1)
        .cloned()
        .map(|r| r.with_min_values(None));
    let typed = (launched.into_iter())
        .flat_map(|t| t.labels())
        .map(|(k, v)| Requirement::in_values(k, [v]));
    single.chain(typed).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter::requirements::Operator;

    fn req(key: &str, op: &str, values: &[&str]) -> Requirement {
        let op: Operator = op.parse().unwrap();
        Requirement::new(key, op, values.iter().copied()).unwrap()
    }

    /// Upstream `nodeclaimtemplate_test.go` / `resolveCustomLabelsFromRequirements`: a
    /// custom `Exists` or `NotIn` becomes one value, `In` of one value stays, well-known
    /// keys and `DoesNotExist` are left alone.
    #[test]
    fn resolve_custom_labels_from_requirements() {
        let mut reqs: Requirements = [
            req("team", "Exists", &[]),
            req("tier", "NotIn", &["0", "1"]),
            req("app", "In", &["web"]),
            req("color", "In", &["red", "blue"]),
            req("gone", "DoesNotExist", &[]),
            req("karpenter.k8s.aws/instance-family", "NotIn", &["c6i"]),
            req("karpenter.sh/initialized", "Exists", &[]),
        ]
        .into_iter()
        .collect();
        resolve_custom_labels(&mut reqs, LabelFlavor::KarpenterAws);
        let shown = |key: &str| reqs.get(key).map(ToString::to_string);
        assert_eq!(shown("team").as_deref(), Some("team In [0]"));
        assert_eq!(shown("tier").as_deref(), Some("tier In [2]"));
        assert_eq!(shown("app").as_deref(), Some("app In [web]"));
        assert_eq!(shown("color").as_deref(), Some("color In [blue]"));
        assert_eq!(shown("gone").as_deref(), Some("gone DoesNotExist"));
        assert_eq!(
            shown("karpenter.k8s.aws/instance-family").as_deref(),
            Some("karpenter.k8s.aws/instance-family NotIn [c6i]")
        );
        assert_eq!(
            shown("karpenter.sh/initialized").as_deref(),
            Some("karpenter.sh/initialized Exists")
        );
    }

    /// Upstream `isDaemonPodCompatibleWithNode`: a DaemonSet that selects `team: green` runs
    /// on no node whose `team` label another value took, and one that asks `team` to exist
    /// runs there; a key the node lacks fails unless asked leniently.
    #[test]
    fn daemon_pod_compatible_with_node_labels() {
        let mut claim: Requirements = [req("team", "Exists", &[])].into_iter().collect();
        resolve_custom_labels(&mut claim, LabelFlavor::KarpenterAws);
        let labels = node_labels(&claim, None);
        let pod = |r: Requirement| -> Requirements { [r].into_iter().collect() };
        assert!(!labels.met_as_labels(&pod(req("team", "In", &["green"]))));
        assert!(labels.met_as_labels(&pod(req("team", "Exists", &[]))));
        assert!(!labels.met_as_labels(&pod(req("kubernetes.io/arch", "In", &["amd64"]))));
        assert!(labels.met_as_labels(&pod(req("kubernetes.io/arch", "NotIn", &["arm64"]))));
    }
}
