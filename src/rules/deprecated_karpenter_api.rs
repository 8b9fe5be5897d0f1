//! `deprecated-karpenter-api`: Karpenter objects, annotations and labels from API
//! generations Karpenter v1 no longer serves or honours (SPEC §1.2, §7): one finding per
//! object, on its `apiVersion` (or the first deprecated key of a workload or Node), naming
//! the v1 replacement of everything deprecated in it.

use super::{Context, Findings, Placed, Rule};
use crate::diagnostic::{Finding, Severity};
use crate::karpenter::cluster::LABEL_PROVISIONER_NAME;
use crate::karpenter::requirements::LABEL_NODEPOOL;
use crate::model::karpenter::{KarpenterApi, NodePool};
use crate::model::workload::NodeSelectorRequirement;
use crate::model::{Kind, Object, Span};

declare_rule!(
    DeprecatedKarpenterApi,
    "deprecated-karpenter-api",
    Warning,
    "Karpenter v1alpha5/v1beta1 objects, fields, annotations and labels that Karpenter v1 no longer serves or honours"
);

const DO_NOT_EVICT: &str = "karpenter.sh/do-not-evict";
const DO_NOT_CONSOLIDATE: &str = "karpenter.sh/do-not-consolidate";

impl Rule for DeprecatedKarpenterApi {
    fn check_object(&self, o: &Placed, _cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        if let Some(f) = api_finding(obj) {
            out.push(f);
        } else if let Some(f) = key_finding(obj) {
            out.push(f);
        }
    }
}

/// The v1 kind that replaces an old kind.
fn v1_kind(kind: &str) -> &str {
    match kind {
        "Provisioner" => "NodePool",
        "Machine" => "NodeClaim",
        "AWSNodeTemplate" => "EC2NodeClass",
        k => k,
    }
}

/// Fields of a NodePool that moved or changed in v1, with their spans.
fn moved_fields(np: &NodePool, obj: &Object) -> (Vec<String>, Vec<(Span, String)>) {
    let mut help = Vec::new();
    let mut spans = Vec::new();
    if let Some(k) = &np.kubelet {
        help.push(
            "move `spec.template.spec.kubelet` to the EC2NodeClass's `spec.kubelet`".to_string(),
        );
        let first = k
            .max_pods
            .as_ref()
            .map(|v| obj.span(v))
            .or_else(|| k.pods_per_core.as_ref().map(|v| obj.span(v)))
            .or_else(|| k.kube_reserved.0.first().map(|(k, _)| obj.span(k)))
            .or_else(|| k.system_reserved.0.first().map(|(k, _)| obj.span(k)))
            .or_else(|| k.eviction_hard.0.first().map(|(k, _)| obj.span(k)));
        if let Some(s) = first {
            spans.push((
                s,
                "kubelet settings belong on the EC2NodeClass in v1".into(),
            ));
        }
    }
    if let Some(e) = &np.disruption.expire_after {
        help.push(
            "move `spec.disruption.expireAfter` to `spec.template.spec.expireAfter`".to_string(),
        );
        spans.push((
            obj.span(e),
            "expireAfter moved to spec.template.spec in v1".into(),
        ));
    }
    if let Some(p) = np
        .disruption
        .consolidation_policy
        .as_ref()
        .filter(|p| p.value == "WhenUnderutilized")
    {
        help.push(
            "rename `consolidationPolicy: WhenUnderutilized` to `WhenEmptyOrUnderutilized`"
                .to_string(),
        );
        spans.push((obj.span(p), "renamed WhenEmptyOrUnderutilized in v1".into()));
    }
    if let Some(a) = np
        .node_class_ref
        .as_ref()
        .and_then(|r| r.api_version.as_ref())
    {
        help.push(
            "replace `nodeClassRef.apiVersion` with `group: karpenter.k8s.aws` (and `kind: EC2NodeClass`)"
                .to_string(),
        );
        spans.push((obj.span(a), "v1 spells this `group`".into()));
    }
    (help, spans)
}

/// Karpenter API objects of an old generation, or v1 NodePools carrying v1beta1 fields.
fn api_finding(obj: &Object) -> Option<Finding> {
    let (group, version) = obj.karpenter_api()?;
    let kind = obj.kind_name.as_str();
    let np = obj.nodepool();
    let old = matches!(
        (group, version, kind),
        ("karpenter.sh", "v1alpha5", "Provisioner" | "Machine")
            | ("karpenter.k8s.aws", "v1alpha1", "AWSNodeTemplate")
            | ("karpenter.sh", "v1beta1", "NodePool" | "NodeClaim")
            | ("karpenter.k8s.aws", "v1beta1", "EC2NodeClass")
    );
    // Other alpha APIs (karpenter.sh/v1alpha1 NodeOverlay) are current.
    if !old && version != "v1" {
        return None;
    }
    let (severity, message, label, mut help) = match version {
        "v1alpha5" | "v1alpha1" => {
            let mut help = vec![format!(
                "rewrite it as `apiVersion: {group}/v1` `kind: {}` (the `karpenter-convert` tool does the mechanical part)",
                v1_kind(kind)
            )];
            if kind == "Provisioner" {
                help.push("requirements, labels and taints go under `spec.template`, `providerRef` becomes `spec.template.spec.nodeClassRef`, `kubeletConfiguration` moves to the EC2NodeClass's `spec.kubelet`, `ttlSecondsAfterEmpty`/`consolidation` become `spec.disruption`, and nodes are labelled `karpenter.sh/nodepool` instead of `karpenter.sh/provisioner-name`".into());
            } else if kind == "AWSNodeTemplate" {
                help.push("`subnetSelector`, `securityGroupSelector` and `amiSelector` become `subnetSelectorTerms`, `securityGroupSelectorTerms` and `amiSelectorTerms`, and a `role` is required".into());
            }
            (
                Severity::Error,
                format!(
                    "{group}/{version} {kind} is not served by Karpenter v1: this API was replaced in v0.32 and removed in v1.0"
                ),
                format!("not served since Karpenter v1.0; use {group}/v1"),
                help,
            )
        }
        "v1beta1" => (
            Severity::Warning,
            format!(
                "{group}/v1beta1 {kind} is deprecated: Karpenter v1.0 serves it only to migrate, and v1.1 and later do not serve it"
            ),
            format!("deprecated; use {group}/v1"),
            vec![format!("change `apiVersion` to `{group}/v1`")],
        ),
        "v1" => {
            let np = np?;
            let (h, _) = moved_fields(np, obj);
            if h.is_empty() {
                return None;
            }
            (
                Severity::Warning,
                format!("{group}/v1 {kind} has v1beta1 fields that Karpenter v1 does not read"),
                "v1 object with v1beta1 fields".to_string(),
                Vec::new(),
            )
        }
        _ => return None,
    };
    let mut related = Vec::new();
    if let Some(np) = np
        && np.api != KarpenterApi::V1alpha5
    {
        let (h, spans) = moved_fields(np, obj);
        help.extend(h);
        related = spans;
    }
    let mut f = META
        .finding_with(severity, obj, obj.api_version_span, message)
        .label(label)
        .help(join_help(&help));
    for (span, text) in related {
        f = f.related(obj, span, text);
    }
    Some(f)
}

/// `a; b; and c` as one imperative sentence.
fn join_help(parts: &[String]) -> String {
    parts.join("; ")
}

/// Deprecated annotations and the v1alpha5 node label on workloads and Nodes.
fn key_finding(obj: &Object) -> Option<Finding> {
    let mut found: Vec<(Span, String, String)> = Vec::new();
    let annotations = match (obj.kind, obj.workload()) {
        (Kind::Pod | Kind::Node, _) | (_, None) => &obj.meta.annotations,
        (_, Some(w)) => &w.template.metadata.annotations,
    };
    if !(obj.kind.is_workload() || obj.kind == Kind::Node) {
        return None;
    }
    for (k, _) in annotations.entries_of(&[DO_NOT_EVICT, DO_NOT_CONSOLIDATE]) {
        found.push((
            obj.span(k),
            format!("annotation `{}`", k.value),
            format!(
                "replace annotation `{}` with `karpenter.sh/do-not-disrupt: \"true\"`",
                k.value
            ),
        ));
    }
    if obj.kind == Kind::Node {
        if let Some((k, _)) = obj.label_entry(LABEL_PROVISIONER_NAME) {
            found.push((
                obj.span(k),
                format!("label `{LABEL_PROVISIONER_NAME}`"),
                format!("Karpenter v1 labels nodes `{LABEL_NODEPOOL}` instead"),
            ));
        }
    } else if let Some(spec) = obj.workload().and_then(|w| w.pod_spec()) {
        if let Some((k, _)) = spec.node_selector.entry(LABEL_PROVISIONER_NAME) {
            found.push((
                obj.span(k),
                format!("label `{LABEL_PROVISIONER_NAME}`"),
                format!("select `{LABEL_NODEPOOL}` instead of `{LABEL_PROVISIONER_NAME}`"),
            ));
        }
        let na = &spec.affinity.node_affinity;
        let terms = na
            .required
            .iter()
            .flat_map(|r| r.node_selector_terms.iter().map(|t| &t.value))
            .chain(na.preferred.iter().map(|p| &p.preference.value));
        for t in terms {
            if let Some(e) = provisioner_expression(&t.match_expressions) {
                found.push((
                    obj.span(&e.key),
                    format!("label `{LABEL_PROVISIONER_NAME}`"),
                    format!("select `{LABEL_NODEPOOL}` instead of `{LABEL_PROVISIONER_NAME}`"),
                ));
            }
        }
    }
    let (span, what, _) = found.first()?;
    let message = if found.len() == 1 {
        format!("deprecated Karpenter {what}: Karpenter v1 no longer honours it")
    } else {
        let mut whats: Vec<&str> = found.iter().map(|(_, w, _)| w.as_str()).collect();
        whats.dedup();
        format!(
            "deprecated Karpenter {}: Karpenter v1 no longer honours them",
            whats.join(", ")
        )
    };
    let mut help: Vec<String> = found.iter().map(|(_, _, h)| h.clone()).collect();
    help.dedup();
    let mut f = META
        .finding(obj, *span, message)
        .label("not honoured since Karpenter v1.0")
        .help(join_help(&help));
    for (s, w, _) in found.iter().skip(1) {
        f = f.related(obj, *s, format!("also deprecated: {w}"));
    }
    Some(f)
}

/// A `karpenter.sh/provisioner-name` expression that matters: not the v0.32–v0.37 chart's
/// `provisioner-name DoesNotExist` written beside `nodepool DoesNotExist`.
fn provisioner_expression(exprs: &[NodeSelectorRequirement]) -> Option<&NodeSelectorRequirement> {
    let e = exprs
        .iter()
        .find(|e| e.key.value == LABEL_PROVISIONER_NAME)?;
    let beside_nodepool = e.operator.value == "DoesNotExist"
        && exprs
            .iter()
            .any(|x| x.key.value == LABEL_NODEPOOL && x.operator.value == "DoesNotExist");
    (!beside_nodepool).then_some(e)
}
