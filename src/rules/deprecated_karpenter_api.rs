//! `deprecated-karpenter-api`: Karpenter objects, annotations and labels from API
//! generations Karpenter v1 no longer serves or honours (karpenter-model §1.2, §7): one finding per
//! object, on its `apiVersion` (or the first deprecated key of a workload or Node), naming
//! the v1 replacement of everything deprecated in it.

use super::{Context, Findings, Placed, Rule};
use crate::diagnostic::{Finding, Severity};
use crate::karpenter::cluster::LABEL_PROVISIONER_NAME;
use crate::karpenter::requirements::LABEL_NODEPOOL;
use crate::karpenter::version::KarpenterVersion;
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
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        let version = cx.cluster.karpenter;
        let keys = deprecated_keys(obj);
        if let Some(f) = api_finding(obj, version) {
            // One finding per object: the NodePool template's annotations join it.
            out.push(with_keys(f, obj, &keys, version));
        } else if let Some(f) = key_finding(obj, &keys, version) {
            out.push(f);
        }
    }
}

/// What Karpenter `version` makes of an old API generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Served {
    /// The generation `version` documents and stores.
    Current,
    /// Still served, to migrate; the next release does not serve it.
    Deprecated,
    /// Not served.
    Removed,
}

/// The last release where `api_version` (`v1alpha5`/`v1alpha1` or `v1beta1`) is current,
/// and the last that still serves it. Read at the release tags of core's CRDs
/// (`pkg/apis/crds`): v0.32 ships the v1alpha5 `Provisioner` and `Machine` CRDs beside the
/// v1beta1 ones, v0.33 drops them; v1.0's NodePool CRD serves v1beta1 beside the stored v1
/// (`storage: false`), v1.1's serves v1 alone. The AWS provider's `AWSNodeTemplate` and
/// `EC2NodeClass` follow the same releases.
fn generation(api_version: &str) -> Option<(KarpenterVersion, KarpenterVersion)> {
    match api_version {
        // Current before v0.32, the oldest release modelled.
        "v1alpha5" | "v1alpha1" => Some((
            KarpenterVersion::new(0, 31),
            KarpenterVersion::new(0, 32),
        )),
        "v1beta1" => Some((KarpenterVersion::new(0, 37), KarpenterVersion::V1_0)),
        _ => None,
    }
}

fn served(api_version: &str, version: KarpenterVersion) -> Served {
    match generation(api_version) {
        Some((current, _)) if version <= current => Served::Current,
        Some((_, last)) if version <= last => Served::Deprecated,
        _ => Served::Removed,
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

/// The v1beta1 fields of a NodePool that [`moved_fields`] explains on a v1 NodePool, as the
/// API server prints their paths: `unknown-field` leaves them to this rule, whose help says
/// where each one went.
pub(super) const MOVED_IN_V1: [&str; 3] = [
    "spec.template.spec.kubelet",
    "spec.disruption.expireAfter",
    "spec.template.spec.nodeClassRef.apiVersion",
];

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

/// Karpenter API objects of an old generation, or v1 NodePools carrying v1beta1 fields,
/// judged on Karpenter `version`: a generation `version` serves is advised to upgrade
/// (info while current, a warning while deprecated), not called removed.
fn api_finding(obj: &Object, version: KarpenterVersion) -> Option<Finding> {
    let (group, api) = obj.karpenter_api()?;
    let kind = obj.kind_name.as_str();
    let np = obj.nodepool();
    let old = matches!(
        (group, api, kind),
        ("karpenter.sh", "v1alpha5", "Provisioner" | "Machine")
            | ("karpenter.k8s.aws", "v1alpha1", "AWSNodeTemplate")
            | ("karpenter.sh", "v1beta1", "NodePool" | "NodeClaim")
            | ("karpenter.k8s.aws", "v1beta1", "EC2NodeClass")
    );
    // Other alpha APIs (karpenter.sh/v1alpha1 NodeOverlay) are current.
    if !old && api != "v1" {
        return None;
    }
    let (severity, message, label, mut help) = match api {
        "v1alpha5" | "v1alpha1" => alpha_api(group, api, kind, version),
        "v1beta1" => beta_api(group, kind, version),
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

/// Severity, message, label and help of a finding.
type Verdict = (Severity, String, String, Vec<String>);

/// A `v1alpha5`/`v1alpha1` object (`api`) on Karpenter `version`: deprecated on v0.32,
/// which serves it beside v1beta1, and not served from v0.33.
fn alpha_api(group: &str, api: &str, kind: &str, version: KarpenterVersion) -> Verdict {
    let (_, last) = generation(api).unwrap_or((version, version));
    // The generation that replaces it on `version`.
    let target = if version < KarpenterVersion::V1_0 {
        "v1beta1"
    } else {
        "v1"
    };
    let mut help = vec![format!(
        "rewrite it as `apiVersion: {group}/{target}` `kind: {}` (the `karpenter-convert` tool does the mechanical part)",
        v1_kind(kind)
    )];
    if kind == "Provisioner" {
        help.push("requirements, labels and taints go under `spec.template`, `providerRef` becomes `spec.template.spec.nodeClassRef`, `kubeletConfiguration` moves to the EC2NodeClass's `spec.kubelet`, `ttlSecondsAfterEmpty`/`consolidation` become `spec.disruption`, and nodes are labelled `karpenter.sh/nodepool` instead of `karpenter.sh/provisioner-name`".into());
    } else if kind == "AWSNodeTemplate" {
        help.push("`subnetSelector`, `securityGroupSelector` and `amiSelector` become `subnetSelectorTerms`, `securityGroupSelectorTerms` and `amiSelectorTerms`, and a `role` is required".into());
    }
    let removed_in = last.next();
    match served(api, version) {
        Served::Current | Served::Deprecated => (
            Severity::Warning,
            format!(
                "{group}/{api} {kind} is deprecated on Karpenter {version}, which serves it only to migrate: {removed_in} and later do not serve it"
            ),
            format!("deprecated on Karpenter {version}; use {group}/{target}"),
            help,
        ),
        Served::Removed => {
            let on = if version < KarpenterVersion::V1_0 {
                version.to_string()
            } else {
                "v1".to_string()
            };
            (
                Severity::Error,
                format!(
                    "{group}/{api} {kind} is not served by Karpenter {on}: this API was replaced in {} and removed in {removed_in}",
                    KarpenterVersion::OLDEST
                ),
                format!("not served since Karpenter {removed_in}; use {group}/{target}"),
                help,
            )
        }
    }
}

/// A `v1beta1` object on Karpenter `version`: current up to v0.37, deprecated on v1.0,
/// not served from v1.1.
fn beta_api(group: &str, kind: &str, version: KarpenterVersion) -> Verdict {
    match served("v1beta1", version) {
        Served::Current => (
            Severity::Info,
            format!(
                "{group}/v1beta1 {kind} is current on Karpenter {version}, but v1.0 deprecates it and v1.1 and later do not serve it"
            ),
            format!("current on Karpenter {version}; v1.0 replaces it with {group}/v1"),
            vec![format!(
                "change `apiVersion` to `{group}/v1` when upgrading to Karpenter v1.0 or later"
            )],
        ),
        Served::Deprecated | Served::Removed => (
            Severity::Warning,
            format!(
                "{group}/v1beta1 {kind} is deprecated: Karpenter v1.0 serves it only to migrate, and v1.1 and later do not serve it"
            ),
            format!("deprecated; use {group}/v1"),
            vec![format!("change `apiVersion` to `{group}/v1`")],
        ),
    }
}

/// `a; b; and c` as one imperative sentence.
fn join_help(parts: &[String]) -> String {
    parts.join("; ")
}

/// A deprecated annotation or label in an object, with the last Karpenter release that
/// honours it.
struct DeprecatedKey {
    span: Span,
    /// "annotation `k`", "label `k`".
    what: String,
    help: String,
    last_honoured: KarpenterVersion,
}

/// The last release that honours the pod annotation `karpenter.sh/do-not-evict` and the
/// node annotation `karpenter.sh/do-not-consolidate`: v0.37 still reads both
/// (`pkg/utils/pod/scheduling.go` `IsDisruptable`, `disruption/consolidation.go`
/// `ShouldDisrupt`, `disruption/validation.go`, each marked "remove as part of v1"); v1.0
/// reads neither.
const OLD_ANNOTATIONS_UNTIL: KarpenterVersion = KarpenterVersion::new(0, 37);
/// The last release that knows the node label `karpenter.sh/provisioner-name`: v0.32 still
/// ships `pkg/apis/v1alpha5/labels.go` and labels the nodes of Provisioners; v0.33 has no
/// Provisioners and no such label.
const PROVISIONER_NAME_UNTIL: KarpenterVersion = KarpenterVersion::new(0, 32);

/// Deprecated annotations on workloads, Nodes and NodePool templates, and the v1alpha5
/// node label in pod selectors and on Nodes.
fn deprecated_keys(obj: &Object) -> Vec<DeprecatedKey> {
    let mut found = Vec::new();
    let annotation = |k: &crate::model::de::Spanned<crate::model::de::Str>| DeprecatedKey {
        span: obj.span(k),
        what: format!("annotation `{}`", k.value),
        help: format!(
            "replace annotation `{}` with `karpenter.sh/do-not-disrupt: \"true\"`",
            k.value
        ),
        last_honoured: OLD_ANNOTATIONS_UNTIL,
    };
    let provisioner_name = |span: Span, help: String| DeprecatedKey {
        span,
        what: format!("label `{LABEL_PROVISIONER_NAME}`"),
        help,
        last_honoured: PROVISIONER_NAME_UNTIL,
    };
    if let Some(np) = obj.nodepool() {
        // Template annotations reach every node the pool launches (`NodeClaimTemplate`),
        // where a node annotation `do-not-consolidate` was read up to v0.37.
        for (k, _) in np.template_annotations.entries_of(&[DO_NOT_CONSOLIDATE]) {
            found.push(annotation(k));
        }
        return found;
    }
    if !(obj.kind.is_workload() || obj.kind == Kind::Node) {
        return found;
    }
    let annotations = match (obj.kind, obj.workload()) {
        (Kind::Pod | Kind::Node, _) | (_, None) => &obj.meta.annotations,
        (_, Some(w)) => &w.template.metadata.annotations,
    };
    for (k, _) in annotations.entries_of(&[DO_NOT_EVICT, DO_NOT_CONSOLIDATE]) {
        found.push(annotation(k));
    }
    if obj.kind == Kind::Node {
        if let Some((k, _)) = obj.label_entry(LABEL_PROVISIONER_NAME) {
            found.push(provisioner_name(
                obj.span(k),
                format!("Karpenter v1 labels nodes `{LABEL_NODEPOOL}` instead"),
            ));
        }
    } else if let Some(spec) = obj.workload().and_then(|w| w.pod_spec()) {
        let select = || format!("select `{LABEL_NODEPOOL}` instead of `{LABEL_PROVISIONER_NAME}`");
        if let Some((k, _)) = spec.node_selector.entry(LABEL_PROVISIONER_NAME) {
            found.push(provisioner_name(obj.span(k), select()));
        }
        let na = &spec.affinity.node_affinity;
        let terms = na
            .required
            .iter()
            .flat_map(|r| r.node_selector_terms.iter().map(|t| &t.value))
            .chain(na.preferred.iter().map(|p| &p.preference.value));
        for t in terms {
            if let Some(e) = provisioner_expression(&t.match_expressions) {
                found.push(provisioner_name(obj.span(&e.key), select()));
            }
        }
    }
    found
}

/// Which releases honour the `keys` (all of them, when `version` does), for a message:
/// `Karpenter v0.37 still honours it, v1.0 and later do not`, or on a release that no
/// longer does, `Karpenter v1 no longer honours it` (`v0.35` below v1.0).
fn honoured_text(keys: &[DeprecatedKey], version: KarpenterVersion) -> String {
    let it = if keys.len() == 1 { "it" } else { "them" };
    let first_ignoring = keys.iter().map(|k| k.last_honoured.next()).min();
    let honoured = keys.iter().filter(|k| version <= k.last_honoured).count();
    match first_ignoring {
        Some(next) if honoured == keys.len() => {
            let some = if keys.iter().all(|k| k.last_honoured.next() == next) {
                it
            } else {
                "some of them"
            };
            format!("Karpenter {version} still honours {it}, {next} and later do not honour {some}")
        }
        _ => {
            let on = if version < KarpenterVersion::V1_0 {
                version.to_string()
            } else {
                "v1".to_string()
            };
            let which = if honoured > 0 { "some of them" } else { it };
            format!("Karpenter {on} no longer honours {which}")
        }
    }
}

/// The label of a key's finding: until or since when it is honoured.
fn honoured_label(key: &DeprecatedKey, version: KarpenterVersion) -> String {
    if version <= key.last_honoured {
        format!("honoured up to Karpenter {}", key.last_honoured)
    } else {
        format!("not honoured since Karpenter {}", key.last_honoured.next())
    }
}

/// One finding for the deprecated `keys` of an object without an API finding.
fn key_finding(
    obj: &Object,
    keys: &[DeprecatedKey],
    version: KarpenterVersion,
) -> Option<Finding> {
    let first = keys.first()?;
    let mut whats: Vec<&str> = keys.iter().map(|k| k.what.as_str()).collect();
    whats.dedup();
    let message = format!(
        "deprecated Karpenter {}: {}",
        whats.join(", "),
        honoured_text(keys, version)
    );
    let mut help: Vec<String> = keys.iter().map(|k| k.help.clone()).collect();
    help.dedup();
    let mut f = META
        .finding(obj, first.span, message)
        .label(honoured_label(first, version))
        .help(join_help(&help));
    for k in keys.iter().skip(1) {
        f = f.related(obj, k.span, format!("also deprecated: {}", k.what));
    }
    Some(f)
}

/// An API finding `f` with the object's deprecated `keys` (a NodePool template's
/// annotations) as related labels and in its help.
fn with_keys(
    mut f: Finding,
    obj: &Object,
    keys: &[DeprecatedKey],
    version: KarpenterVersion,
) -> Finding {
    if keys.is_empty() {
        return f;
    }
    // A deprecated annotation is a warning even beside an API that is current.
    f.severity = f.severity.max(Severity::Warning);
    let mut help = f.help.clone();
    for k in keys {
        f = f.related(
            obj,
            k.span,
            format!(
                "also deprecated: {}; {}",
                k.what,
                honoured_text(std::slice::from_ref(k), version)
            ),
        );
        if !help.contains(&k.help) {
            help = join_help(&[help, k.help.clone()]);
        }
    }
    f.help(help)
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
