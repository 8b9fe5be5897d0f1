//! `pvc-workload-not-spread`: a replicated workload whose pods each get their own volumes
//! (StatefulSet `volumeClaimTemplates`, generic ephemeral volumes) and that nothing spreads
//! across nodes, so Karpenter packs them together and they hit the attach limit
//! (karpenter-model §8).

use super::{Context, Findings, Placed, Rule};
use crate::karpenter::sim::Verdict;
use crate::karpenter::topology::{self, LABEL_HOSTNAME};
use crate::karpenter::volumes::{self, ClaimVolume};
use crate::model::workload::PodSpec;

declare_rule!(
    PvcWorkloadNotSpread,
    "pvc-workload-not-spread",
    Warning,
    "replicas with their own volumes and no hostname spread: Karpenter packs them onto one node up to the volume attach limit"
);

impl Rule for PvcWorkloadNotSpread {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        let Some(w) = obj.workload() else { return };
        let Some(spec) = w.pod_spec() else { return };
        let replicated = obj.kind.runs_indefinitely();
        let replicas = w.replica_count();
        if !replicated || replicas < 2 || spreads_by_host(spec) {
            return;
        }
        // Only pods Karpenter provisions for are packed by Karpenter.
        if !matches!(
            o.verdict(),
            Some(Verdict::Schedules(_) | Verdict::Pending(_))
        ) {
            return;
        }
        let per_pod: Vec<ClaimVolume> = volumes::claim_volumes(cx.index, obj)
            .into_iter()
            .filter(|v| v.per_pod && attachable(v))
            .collect();
        let Some(first) = per_pod.first() else { return };
        let span = w
            .replicas
            .as_ref()
            .map(|r| obj.span(r))
            .unwrap_or(first.span);
        let labels = topology::pod_labels(obj);
        let selector: Vec<String> = labels
            .iter()
            .take(2)
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let selector = if selector.is_empty() {
            "app: <label of these pods>".to_string()
        } else {
            selector.join(", ")
        };
        let names: Vec<&str> = per_pod.iter().map(|v| v.name.as_str()).collect();
        let mut f = META.finding(obj,
            span,
            format!(
                "{replicas} replicas each attach their own volume(s) ({}) and nothing spreads them across nodes; Karpenter packs them onto as few nodes as it can and a new node's volume attach limit is unknown to it, so pods can fail with `FailedAttachVolume`",
                names.join(", ")
            ),
        )
        .label("replicas with per-pod volumes, not spread")
        .help(format!(
            "spread the pods across nodes: add to the pod spec\ntopologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: kubernetes.io/hostname\n    whenUnsatisfiable: DoNotSchedule\n    labelSelector:\n      matchLabels: {{{selector}}}"
        ));
        for v in &per_pod {
            if let Some(sc) = v.storage_class {
                f = f.related(
                    sc,
                    sc.name_span(),
                    format!("volume \"{}\" uses StorageClass \"{}\"", v.name, sc.name()),
                );
            }
        }
        out.push(f);
    }
}

/// Whether a volume counts against a node's attach limit: block volumes do, network file
/// systems (EFS, FSx, NFS, S3) do not. Unknown classes count.
fn attachable(v: &ClaimVolume) -> bool {
    let Some(p) = v.sc().and_then(|sc| sc.provisioner.as_ref()) else {
        return true;
    };
    let p = p.value.as_str();
    !(p.contains("efs.csi")
        || p.contains("fsx.csi")
        || p.contains("s3.csi")
        || p.contains("nfs")
        || p.contains("file.csi"))
}

/// A hostname anti-affinity (required or preferred) or hostname spread constraint.
fn spreads_by_host(spec: &PodSpec) -> bool {
    let aa = &spec.affinity.pod_anti_affinity;
    aa.required
        .iter()
        .map(|t| &t.value)
        .chain(aa.preferred.iter().map(|p| &p.pod_affinity_term.value))
        .any(|t| t.topology_key.value == LABEL_HOSTNAME)
        || spec
            .topology_spread_constraints
            .iter()
            .any(|c| c.topology_key.value == LABEL_HOSTNAME)
}
