//! Simulator, pod side: what a pod template asks of a node, as Karpenter reads it.
//!
//! Requirements are `nodeSelector` ∧ one required `nodeSelectorTerm` ∧ the heaviest
//! preferred term (karpenter-model §3.1), produced as the sequence of attempts Karpenter's
//! relaxation walks through (karpenter-model §3.4): each required term in order with
//! preferences, then without. Requests are max(Σ containers + sidecars, largest init
//! container), replaced per resource by pod-level `spec.resources` where set, + overhead
//! (karpenter-model §6.3). [`Admitted`] reads the pod as admission leaves it: LimitRange
//! default requests, and the RuntimeClass's node selector, tolerations and overhead.
//! Every requirement keeps the span of the selector entry it came from, so a finding can
//! point at the exact line to change.

use super::preferences::{Relaxable, Relaxation};
use super::requirements::{self, Operator, Requirement, Requirements};
use super::taints::{Effect, Toleration, TolerationOperator};
use super::version::KarpenterVersion;
use crate::index::Index;
use crate::model::cluster::{LimitRangeSpec, RuntimeClass};
use crate::model::de::Spanned;
use crate::model::rejected::Operators;
use crate::model::workload::{Container, NodeSelectorRequirement, NodeSelectorTerm, PodSpec};
use crate::model::{Body, Kind, Object, Span};
use crate::quantity::{Quantity, ResourceList};
use std::collections::{BTreeMap, HashMap};

/// Where each key (a normalised label key, or a resource name) came from: a map held as a
/// sorted vector, as a pod has a few.
pub type Spans = litemap::LiteMap<compact_str::CompactString, Span>;

/// One set of requirements Karpenter tries for a pod, with where each key came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attempt {
    pub requirements: Requirements,
    /// The requirements without preferred terms: the nodeSelector and the required term
    /// (`NewStrictPodRequirements`), which topology reads as the pod's own domains.
    pub strict: Requirements,
    /// Normalised key → span of the pod's selector entry for it.
    pub spans: Spans,
    /// Whether preferred terms are part of this attempt.
    pub with_preferences: bool,
    /// Karpenter's last relaxation: `PreferNoSchedule` taints are tolerated
    /// (`Preferences.toleratePreferNoScheduleTaints`).
    pub tolerates_prefer_no_schedule: bool,
}

/// A host port a pod binds on its node (core `pkg/scheduling/hostportusage.go`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPort {
    pub ip: String,
    pub port: i64,
    pub protocol: String,
}

impl HostPort {
    /// Two bindings clash when protocol and port are equal and the addresses are equal or
    /// either is unspecified (`HostPort.Matches`).
    pub fn matches(&self, other: &HostPort) -> bool {
        let unspecified = |ip: &str| ip == "0.0.0.0" || ip == "::";
        self.protocol == other.protocol
            && self.port == other.port
            && (self.ip == other.ip || unspecified(&self.ip) || unspecified(&other.ip))
    }
}

/// The host ports of the pod's containers (not init containers), with Kubernetes'
/// defaults: address `0.0.0.0`, protocol TCP (`GetHostPorts`).
pub fn host_ports(spec: &PodSpec) -> Vec<HostPort> {
    spec.containers
        .iter()
        .flat_map(|c| c.ports.iter())
        .filter_map(|p| {
            let port = p.host_port.as_ref().map(|p| p.value).filter(|p| *p != 0)?;
            Some(HostPort {
                ip: p.host_ip.as_deref().unwrap_or("0.0.0.0").to_string(),
                port,
                protocol: p.protocol.as_deref().unwrap_or("TCP").to_string(),
            })
        })
        .collect()
}

/// Why Karpenter refuses to consider a pod at all (karpenter-model §2.3).
#[derive(Debug, Clone)]
pub enum Ignored {
    /// A selector Karpenter rejects: the pod is ignored, with this reason.
    Restricted {
        key: String,
        span: Span,
        reason: String,
    },
    /// `karpenter.sh/nodepool DoesNotExist`: Karpenter's own controller pods.
    NotOnKarpenterNodes,
}

/// A selector entry that Karpenter cannot parse (bad operator or values): ignored pod.
fn requirement_of(key: &str, op: &str, values: &[&str]) -> Result<Requirement, String> {
    let op: Operator = op.parse().map_err(|e| format!("{e}"))?;
    let values: Vec<&str> = values.to_vec();
    // Placeholders such as `${ZONE}` (envsubst, Terraform templatefile) are unknown values:
    // read them as "any value".
    if values.iter().any(|v| v.contains("${")) {
        return Ok(Requirement::exists(key));
    }
    Requirement::new(key, op, values).map_err(|e| e.to_string())
}

/// The requirement attempts for a pod, in Karpenter's relaxation order, or why Karpenter
/// ignores the pod.
pub fn attempts(obj: &Object, spec: &PodSpec) -> Result<Vec<Attempt>, Ignored> {
    let mut base = Attempt::default();
    for (k, v) in &spec.node_selector.0 {
        check_restricted(obj, &k.value, obj.span(k))?;
        let req = requirement_of(&k.value, "In", &[v.value.as_str()]).map_err(|reason| {
            Ignored::Restricted {
                key: k.value.to_string(),
                span: obj.span(k),
                reason,
            }
        })?;
        base.spans.insert(req.key().into(), obj.span(k));
        base.requirements.add(req);
    }
    let na = &spec.affinity.node_affinity;
    let terms: Vec<&Spanned<NodeSelectorTerm>> = na
        .required
        .as_ref()
        .map(|r| r.node_selector_terms.iter().collect())
        .unwrap_or_default();
    let mut required: Vec<Attempt> = Vec::new();
    for term in &terms {
        let mut a = base.clone();
        add_expressions(obj, &term.value.match_expressions, &mut a, true)?;
        if let Some(f) = term.value.match_fields.first() {
            return Err(Ignored::Restricted {
                key: f.key.value.to_string(),
                span: obj.span(&f.key),
                reason: "matchFields in node affinity is not supported by Karpenter".into(),
            });
        }
        required.push(a);
    }
    if required.is_empty() {
        required.push(base);
    }
    // Preferred terms, heaviest first (stable for equal weights, as Karpenter sorts).
    let mut preferred: Vec<_> = na.preferred.iter().collect();
    preferred.sort_by_key(|p| std::cmp::Reverse(p.weight.as_ref().map(|w| w.value).unwrap_or(0)));
    // `Preferences.Relax`'s node-affinity relaxations, each the next attempt: the earlier
    // required terms go first (each tried with the heaviest preference), then the last
    // term stays and the preferences go one by one, heaviest first.
    let relaxable = Relaxable {
        required_node_terms: required.len(),
        preferred_node_terms: preferred.len(),
        ..Relaxable::default()
    };
    let (mut term, mut preference) = (0, 0);
    let mut out = vec![with_preference(
        obj,
        &required[0],
        preferred.first().copied(),
    )?];
    for relaxation in relaxable.node_order() {
        match relaxation {
            Relaxation::RequiredNodeTerm => term += 1,
            Relaxation::PreferredNodeTerm => preference += 1,
            _ => continue,
        }
        let next = preferred.get(preference).copied();
        out.push(with_preference(obj, &required[term], next)?);
    }
    // Karpenter's own pods: `validateKarpenterManagedLabelCanExist` reads the pod's first
    // attempt (`NewPodRequirements`: nodeSelector, the heaviest preferred term, the first
    // required term), so `karpenter.sh/nodepool DoesNotExist` there, and only there,
    // makes Karpenter ignore the pod.
    let not_on_karpenter = out
        .first()
        .and_then(|a| a.requirements.get(requirements::LABEL_NODEPOOL))
        .is_some_and(|r| r.operator() == Operator::DoesNotExist);
    if not_on_karpenter {
        return Err(Ignored::NotOnKarpenterNodes);
    }
    Ok(out)
}

fn with_preference(
    obj: &Object,
    base: &Attempt,
    pref: Option<&crate::model::workload::PreferredSchedulingTerm>,
) -> Result<Attempt, Ignored> {
    let mut a = base.clone();
    a.strict = base.requirements.clone();
    if let Some(p) = pref {
        a.with_preferences = true;
        // Preferred terms with keys Karpenter would reject are simply not used.
        if add_expressions(obj, &p.preference.value.match_expressions, &mut a, false).is_err() {
            let mut b = base.clone();
            b.with_preferences = false;
            b.strict = base.requirements.clone();
            return Ok(b);
        }
    }
    Ok(a)
}

fn add_expressions(
    obj: &Object,
    exprs: &[NodeSelectorRequirement],
    a: &mut Attempt,
    strict: bool,
) -> Result<(), Ignored> {
    for e in exprs {
        // The API server rejects it (a `parse-error`): read as absent.
        if crate::model::rejected::requirement_rejection(e, Operators::Pod).is_some() {
            continue;
        }
        let key = &e.key.value;
        if strict {
            check_restricted(obj, key, obj.span(&e.key))?;
        }
        let values: Vec<&str> = e.values.iter().map(|v| v.value.as_str()).collect();
        let req = requirement_of(key, &e.operator.value, &values).map_err(|reason| {
            Ignored::Restricted {
                key: key.to_string(),
                span: obj.span(&e.key),
                reason,
            }
        })?;
        a.spans.entry(req.key().into()).or_insert(obj.span(&e.key));
        a.requirements.add(req);
    }
    Ok(())
}

fn check_restricted(_obj: &Object, key: &str, span: Span) -> Result<(), Ignored> {
    match requirements::restricted_pod_label(key) {
        Some(reason) => Err(Ignored::Restricted {
            key: key.to_string(),
            span,
            reason: reason.to_string(),
        }),
        None => Ok(()),
    }
}

/// The admission plugins that change a pod before Karpenter sees it (`cluster.admission`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    /// Kubernetes' `ExtendedResourceToleration` plugin, which EKS enables: a pod that
    /// requests an extended resource tolerates `NoSchedule` taints keyed by it.
    pub extended_resource_toleration: bool,
}

impl Default for Admission {
    /// What EKS runs.
    fn default() -> Self {
        Admission {
            extended_resource_toleration: true,
        }
    }
}

/// Whether a resource name is an extended resource: qualified (`vendor/name`), outside
/// the `kubernetes.io` namespaces and not a quota's `requests.` name. Mirrors
/// `pkg/apis/core/helper.IsExtendedResourceName`.
pub fn is_extended_resource(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

/// The tolerations the `ExtendedResourceToleration` admission plugin adds: `Exists` with
/// effect `NoSchedule` for each extended resource a container or init container requests
/// (a limit alone counts: the API server defaults the request to it first). Mirrors
/// `plugin/pkg/admission/extendedresourcetoleration` `Admit`.
fn extended_resource_tolerations(spec: &PodSpec) -> impl Iterator<Item = Toleration> {
    let mut names: Vec<&str> = (spec.containers.iter())
        .chain(spec.init_containers.iter())
        .filter_map(|c| c.resources.as_ref())
        .flat_map(|r| r.value.requests.iter().chain(r.value.limits.iter()))
        .map(|(k, _)| k)
        .filter(|k| is_extended_resource(k))
        .collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter().map(|name| Toleration {
        key: name.to_string(),
        operator: TolerationOperator::Exists,
        value: String::new(),
        effect: Some(Effect::NoSchedule),
    })
}

/// The pod's tolerations as the API server stores them: those written, converted (invalid
/// entries, with an unknown operator or effect, are dropped, as the API server would reject
/// them anyway), then those the enabled admission plugins add.
pub fn tolerations(spec: &PodSpec, admission: Admission) -> Vec<Toleration> {
    let mut all = written_tolerations(spec);
    if admission.extended_resource_toleration {
        all.extend(extended_resource_tolerations(spec));
    }
    all
}

/// Whether the pod tolerates `karpenter.sh/disrupted:NoSchedule`, the taint Karpenter puts
/// on a node it disrupts: Karpenter never evicts such a pod, which could land right back.
/// Mirrors `pkg/utils/pod/scheduling.go` `ToleratesDisruptedNoScheduleTaint` (core
/// v1.14.3); no admission plugin adds a toleration for that key.
pub fn tolerates_disrupted_taint(spec: &PodSpec) -> bool {
    let taint = super::taints::Taint::new("karpenter.sh/disrupted", "", Effect::NoSchedule);
    super::taints::is_tolerated(&written_tolerations(spec), &taint)
}

fn written_tolerations(spec: &PodSpec) -> Vec<Toleration> {
    convert_tolerations(&spec.tolerations)
}

/// Tolerations as written, converted; invalid entries (an unknown operator or effect,
/// which the API server rejects) dropped.
fn convert_tolerations(written: &[crate::model::workload::Toleration]) -> Vec<Toleration> {
    written
        .iter()
        .filter_map(|t| {
            let operator: TolerationOperator = match &t.operator {
                Some(o) => o.value.parse().ok()?,
                None => TolerationOperator::Equal,
            };
            let effect: Option<Effect> = match &t.effect {
                Some(e) if !e.value.is_empty() => Some(e.value.parse().ok()?),
                _ => None,
            };
            Some(Toleration {
                key: t
                    .key
                    .as_ref()
                    .map(|k| k.value.to_string())
                    .unwrap_or_default(),
                operator,
                value: t
                    .value
                    .as_ref()
                    .map(|v| v.value.0.to_string())
                    .unwrap_or_default(),
                effect,
            })
        })
        .collect()
}

/// What admission writes into the pods of the run, from the run's cluster objects: the
/// requests LimitRanger gives containers that set none, and what the RuntimeClass a pod
/// names merges into it.
#[derive(Debug, Clone, Default)]
pub struct Admitted {
    limit_ranges: LimitRangeDefaults,
    runtime_classes: HashMap<String, RuntimeClassEffects>,
}

/// What the RuntimeClass admission plugin writes into a pod that names the class
/// (`plugin/pkg/admission/runtimeclass` `setOverhead` and `setScheduling`).
#[derive(Debug, Clone, Default)]
struct RuntimeClassEffects {
    /// `scheduling.nodeSelector`, merged into the pod's.
    node_selector: Vec<(String, String)>,
    /// `scheduling.tolerations`, added to the pod's.
    tolerations: Vec<Toleration>,
    /// `overhead.podFixed`, which becomes the pod's `spec.overhead`.
    overhead: ResourceList,
}

impl RuntimeClassEffects {
    fn of(rc: &RuntimeClass) -> Self {
        let overhead_values = rc.overhead.pod_fixed.iter();
        RuntimeClassEffects {
            node_selector: (rc.scheduling.node_selector.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            tolerations: convert_tolerations(&rc.scheduling.tolerations),
            overhead: overhead_values
                .filter_map(|(k, v)| Some((k, Quantity::parse_non_negative(v).ok()?)))
                .fold(ResourceList::new(), |l, (k, q)| l.with(k, q)),
        }
    }
}

impl Admitted {
    /// From the LimitRanges and RuntimeClasses of `index` (the first RuntimeClass of a name
    /// counts).
    pub fn from_index(index: &Index) -> Self {
        let mut runtime_classes = HashMap::new();
        for o in index.of_kind(Kind::RuntimeClass) {
            if let Body::RuntimeClass(rc) = &o.body {
                (runtime_classes.entry(o.name().to_string()))
                    .or_insert_with(|| RuntimeClassEffects::of(rc));
            }
        }
        Admitted {
            limit_ranges: LimitRangeDefaults::from_index(index),
            runtime_classes,
        }
    }

    /// The RuntimeClass of the run the pod names, with the span of its name in the pod.
    fn runtime_class(&self, obj: &Object, spec: &PodSpec) -> Option<(&RuntimeClassEffects, Span)> {
        let name = spec.runtime_class_name.as_deref()?;
        let rc = self.runtime_classes.get(name.value.as_str())?;
        Some((rc, obj.span(name)))
    }

    /// [`requests`] of the pod as admitted: the containers that set no request for a
    /// resource take the namespace's LimitRange default ([`LimitRangeDefaults`]), and the
    /// RuntimeClass's `overhead.podFixed` is the pod's overhead when it sets none (the
    /// plugin rejects a pod whose own overhead differs), which `PodRequests` adds.
    /// A Pod that is a template another tool fills in ([`Object::is_pod_template`]) has
    /// none that karplint judges: the tool sets them (Spark from `spark.executor.*`).
    pub fn requests(&self, obj: &Object, spec: &PodSpec, version: KarpenterVersion) -> Requests {
        if obj.is_pod_template() {
            return Requests {
                total: ResourceList::new().with("pods", Quantity::from_units(1)),
                spans: Spans::new(),
            };
        }
        let defaults = self.limit_ranges.for_object(obj);
        let pod_level = version.pod_level_resources();
        let mut requests = requests_with(obj, spec, pod_level, defaults.as_ref());
        if let Some((rc, _)) = self.runtime_class(obj, spec)
            && spec.overhead.0.is_empty()
        {
            requests.total.add(&rc.overhead);
        }
        requests
    }

    /// [`tolerations`] of the pod as admitted: the RuntimeClass's tolerations added
    /// (`tolerations.MergeTolerations`).
    pub fn tolerations(
        &self,
        obj: &Object,
        spec: &PodSpec,
        admission: Admission,
    ) -> Vec<Toleration> {
        let mut all = tolerations(spec, admission);
        if let Some((rc, _)) = self.runtime_class(obj, spec) {
            for t in &rc.tolerations {
                if !all.contains(t) {
                    all.push(t.clone());
                }
            }
        }
        all
    }

    /// [`attempts`] of the pod as admitted: the RuntimeClass's `scheduling.nodeSelector`
    /// is part of the pod's `nodeSelector`, so of every attempt, located at the pod's
    /// `runtimeClassName`. (A key the pod selects with another value makes the plugin
    /// reject the pod; the pod's own value is kept here.)
    pub fn attempts(&self, obj: &Object, spec: &PodSpec) -> Result<Vec<Attempt>, Ignored> {
        let mut attempts = attempts(obj, spec)?;
        let Some((rc, span)) = self.runtime_class(obj, spec) else {
            return Ok(attempts);
        };
        for (k, v) in &rc.node_selector {
            if spec.node_selector.get(k).is_some() {
                continue;
            }
            check_restricted(obj, k, span)?;
            let req =
                requirement_of(k, "In", &[v.as_str()]).map_err(|reason| Ignored::Restricted {
                    key: k.clone(),
                    span,
                    reason,
                })?;
            for a in &mut attempts {
                a.spans.entry(req.key().into()).or_insert(span);
                a.requirements.add(req.clone());
                a.strict.add(req.clone());
            }
        }
        Ok(attempts)
    }
}

/// The requests LimitRanger gives a container that sets none, per namespace, from the run's
/// LimitRanges (`plugin/pkg/admission/limitranger` `PodLimitFunc`): each LimitRange of the
/// namespace in turn fills in the resources still missing, so the first one to name a
/// resource decides it.
#[derive(Debug, Clone, Default)]
pub struct LimitRangeDefaults(HashMap<String, Vec<Scoped>>);

/// One LimitRange's default requests, with where it applies.
#[derive(Debug, Clone)]
struct Scoped {
    /// `metadata.namespace` is set: every workload of the namespace.
    explicit: bool,
    source: crate::model::SourceId,
    requests: ResourceList,
}

impl LimitRangeDefaults {
    /// The defaults of the LimitRanges of `index`, read in source order.
    pub fn from_index(index: &Index) -> Self {
        let mut by_namespace: HashMap<String, Vec<Scoped>> = HashMap::new();
        for o in index.of_kind(Kind::LimitRange) {
            let Body::LimitRange(spec) = &o.body else {
                continue;
            };
            (by_namespace.entry(o.effective_namespace().to_string()))
                .or_default()
                .push(Scoped {
                    explicit: o.namespace().is_some(),
                    source: o.source,
                    requests: default_requests(spec),
                });
        }
        LimitRangeDefaults(by_namespace)
    }

    /// The default requests for the containers of `obj`, from the LimitRanges that apply
    /// to it ([`limit_range_applies`]): none for a Pod that is a template another tool
    /// fills in ([`Object::is_pod_template`]), which sets the requests itself.
    pub fn for_object(&self, obj: &Object) -> Option<ResourceList> {
        if obj.is_pod_template() {
            return None;
        }
        let scoped = self.0.get(obj.effective_namespace())?;
        let mut out = ResourceList::new();
        for s in scoped
            .iter()
            .filter(|s| s.explicit || s.source == obj.source)
        {
            for (k, q) in s.requests.iter() {
                if out.get(k).is_none() {
                    out.insert(k, q);
                }
            }
        }
        Some(out)
    }
}

/// Whether LimitRange `lr` applies to the pods of `obj`: it is in the namespace they land
/// in, named in its `metadata.namespace`, or it names none and is in the same file. A
/// LimitRange without a namespace lands in the one `kubectl apply -n` gives: only the
/// objects applied with it are known to share that namespace, not examples of another
/// tree that happen to name none either.
pub fn limit_range_applies(lr: &Object, obj: &Object) -> bool {
    lr.effective_namespace() == obj.effective_namespace()
        && (lr.namespace().is_some() || lr.source == obj.source)
}

/// The requests one LimitRange gives a container that sets none
/// (`defaultContainerResourceRequirements`: its `Container` items in order, a later one
/// overwriting an earlier one), each item as the API server stores it
/// (`pkg/apis/core/v1/defaults.go` `SetDefaults_LimitRangeItem`): `defaultRequest`, else
/// `default`, else `max` (which `default` takes when unset), else `min`. Values that do not
/// parse are skipped (the parse stage reports them).
pub fn default_requests(spec: &LimitRangeSpec) -> ResourceList {
    let mut out = ResourceList::new();
    let containers = spec
        .limits
        .iter()
        .filter(|item| item.type_.as_ref().is_some_and(|t| t.value == "Container"));
    for item in containers {
        let mut item_defaults = ResourceList::new();
        for map in [&item.min, &item.max, &item.default, &item.default_request] {
            for (k, v) in map.iter() {
                if let Ok(q) = Quantity::parse_non_negative(v) {
                    item_defaults.insert(k, q);
                }
            }
        }
        for (k, q) in item_defaults.iter() {
            out.insert(k, q);
        }
    }
    out
}

/// A pod's effective requests, and where each resource is requested most.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Requests {
    pub total: ResourceList,
    /// Resource → span of the largest single request (or limit standing in) for it.
    pub spans: Spans,
}

/// One container's requests as admitted: those written (limits standing in for missing
/// requests), then `defaults` for the resources still missing (LimitRanger's
/// `mergeContainerResources`, which runs after the API server's defaulting of requests
/// from limits).
fn container_requests(
    obj: &Object,
    c: &Container,
    defaults: Option<&ResourceList>,
    spans: &mut BTreeMap<compact_str::CompactString, (Quantity, Span)>,
) -> ResourceList {
    let mut out = written_requests(obj, c, spans);
    for (k, q) in defaults.into_iter().flat_map(ResourceList::iter) {
        if out.get(k).is_none() {
            out.insert(k, q);
        }
    }
    out
}

fn written_requests(
    obj: &Object,
    c: &Container,
    spans: &mut BTreeMap<compact_str::CompactString, (Quantity, Span)>,
) -> ResourceList {
    let mut out = ResourceList::new();
    let Some(res) = &c.resources else { return out };
    // Limits stand in for missing requests. A value the API server rejects (reported as a
    // `parse-error` by the parse stage) is not read: a negative one would offset the others.
    for (k, v) in res.value.limits.0.iter().chain(res.value.requests.0.iter()) {
        let Ok(q) = Quantity::parse_non_negative(v.value.as_str()) else {
            continue;
        };
        out.insert(k.value.clone(), q);
        let span = obj.span(v);
        let e = spans.entry(k.value.clone()).or_insert((q, span));
        if q > e.0 {
            *e = (q, span);
        }
    }
    out
}

/// Whether Karpenter reads pod-level `spec.resources` (Kubernetes PodLevelResources);
/// [`super::version::KarpenterVersion::pod_level_resources`] says from which release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodLevelResources {
    /// Karpenter v1.8 and later: they replace the container sum, per resource.
    Honoured,
    /// Karpenter before v1.8: only containers count.
    Ignored,
}

/// Effective pod requests (karpenter-model §6.3) plus `pods: 1`, as Karpenter `version` reads them.
pub fn requests(obj: &Object, spec: &PodSpec, version: KarpenterVersion) -> Requests {
    requests_with(obj, spec, version.pod_level_resources(), None)
}

/// Pod-level resources Kubernetes supports (component-helpers `resource/helpers.go`
/// `IsSupportedPodLevelResource` at v0.34.1): cpu, memory and `hugepages-*`. Others set at
/// pod level are ignored.
fn is_supported_pod_level_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory") || name.starts_with("hugepages-")
}

/// The pod-level requests that replace the container aggregate `containers`, each with
/// the span of the value it came from.
///
/// What the API server stores (`pkg/apis/core/v1/defaults.go` `defaultPodRequests`, KEP-2837):
/// a supported resource with a pod-level request keeps it; one with only a pod-level limit
/// gets the containers' aggregate request if they request it and it may be overcommitted
/// (cpu, memory; not hugepages), else the limit. `PodRequests` then puts each pod-level
/// request in place of the aggregate. Values that do not parse are skipped (the parse
/// stage reports them).
fn pod_level_requests(
    obj: &Object,
    spec: &PodSpec,
    containers: &ResourceList,
) -> Vec<(String, Quantity, Span)> {
    let Some(res) = &spec.resources else {
        return Vec::new();
    };
    let parsed = |m: &'_ crate::model::de::SpannedMap| -> BTreeMap<String, (Quantity, Span)> {
        m.0.iter()
            .filter(|(k, _)| is_supported_pod_level_resource(&k.value))
            .filter_map(|(k, v)| {
                let q = Quantity::parse_non_negative(v.value.as_str()).ok()?;
                Some((k.value.to_string(), (q, obj.span(v))))
            })
            .collect()
    };
    let mut out = parsed(&res.value.requests);
    for (k, limit) in parsed(&res.value.limits) {
        let overcommit = !k.starts_with("hugepages-");
        if out.contains_key(&k) || (overcommit && containers.get(&k).is_some()) {
            continue;
        }
        out.insert(k, limit);
    }
    out.into_iter().map(|(k, (q, s))| (k, q, s)).collect()
}

/// Effective pod requests plus `pods: 1`, with pod-level resources honoured or not.
/// Mirrors component-helpers `resource/helpers.go` `PodRequests` (v0.34.1), which Karpenter
/// core calls through `pkg/utils/resources` `Ceiling`: the container aggregate
/// (`AggregateContainerRequests`), then pod-level requests in its place per resource, then
/// `spec.overhead` on top.
/// `defaults` are the requests admission gives a container that sets none.
pub fn requests_with(
    obj: &Object,
    spec: &PodSpec,
    pod_level: PodLevelResources,
    defaults: Option<&ResourceList>,
) -> Requests {
    let mut spans = BTreeMap::new();
    let mut main = ResourceList::new();
    for c in &spec.containers {
        main.add(&container_requests(obj, c, defaults, &mut spans));
    }
    // Sidecars (restartPolicy: Always) run beside the main containers; an ordinary init
    // container runs alone, beside the sidecars started before it.
    let mut sidecars = ResourceList::new();
    let mut init_max = ResourceList::new();
    for c in &spec.init_containers {
        let r = container_requests(obj, c, defaults, &mut spans);
        if c.restart_policy
            .as_ref()
            .is_some_and(|p| p.value == "Always")
        {
            sidecars.add(&r);
        } else {
            let mut with = r.clone();
            with.add(&sidecars);
            init_max = init_max.max(&with);
        }
    }
    main.add(&sidecars);
    let mut total = main.max(&init_max);
    if pod_level == PodLevelResources::Honoured {
        for (k, q, span) in pod_level_requests(obj, spec, &total) {
            total.insert(k.clone(), q);
            spans.insert(k.into(), (q, span));
        }
    }
    for (k, v) in &spec.overhead.0 {
        if let Ok(q) = Quantity::parse_non_negative(v.value.as_str()) {
            total.add(&ResourceList::new().with(k.value.clone(), q));
        }
    }
    total.insert("pods", Quantity::from_units(1));
    Requests {
        total,
        spans: spans.into_iter().map(|(k, (_, s))| (k, s)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upstream `pkg/apis/core/helper` `TestIsExtendedResourceName` (the cases karplint meets).
    #[test]
    fn is_extended_resource_name() {
        for (name, extended) in [
            ("nvidia.com/gpu", true),
            ("aws.amazon.com/neuron", true),
            ("vpc.amazonaws.com/pod-eni", true),
            ("cpu", false),
            ("hugepages-2Mi", false),
            ("kubernetes.io/something", false),
            ("requests.example.com/foo", false),
        ] {
            assert_eq!(is_extended_resource(name), extended, "{name}");
        }
    }

    /// The pod spec of the only object of `yaml` (a bare Pod's `spec`).
    fn attempts_of(spec: &str) -> Result<Vec<Attempt>, Ignored> {
        let yaml = format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {spec}\n");
        let objects = crate::parse::parse_source(0, &yaml, false, false).objects;
        let o = &objects[0];
        attempts(
            o,
            o.workload().and_then(|w| w.pod_spec()).expect("a pod spec"),
        )
    }

    const NOT_ON_KARPENTER: &str = "{key: karpenter.sh/nodepool, operator: DoesNotExist}";
    const ZONE: &str = "{key: topology.kubernetes.io/zone, operator: In, values: [a]}";

    /// Core `provisioner.go` `validateKarpenterManagedLabelCanExist` over
    /// `NewPodRequirements`: the first required term and the heaviest preferred term count,
    /// later OR-ed terms and lighter preferences do not.
    #[test]
    fn validate_karpenter_managed_label_can_exist() {
        let cases = [
            (
                "the first required term",
                format!(
                    "{{affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{NOT_ON_KARPENTER}]}}]}}}}}}, containers: []}}"
                ),
                true,
            ),
            (
                "a later OR-ed term",
                format!(
                    "{{affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{ZONE}]}}, {{matchExpressions: [{NOT_ON_KARPENTER}]}}]}}}}}}, containers: []}}"
                ),
                false,
            ),
            (
                "the heaviest preferred term",
                format!(
                    "{{affinity: {{nodeAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 10, preference: {{matchExpressions: [{ZONE}]}}}}, {{weight: 50, preference: {{matchExpressions: [{NOT_ON_KARPENTER}]}}}}]}}}}, containers: []}}"
                ),
                true,
            ),
            (
                "a lighter preferred term",
                format!(
                    "{{affinity: {{nodeAffinity: {{preferredDuringSchedulingIgnoredDuringExecution: [{{weight: 50, preference: {{matchExpressions: [{ZONE}]}}}}, {{weight: 10, preference: {{matchExpressions: [{NOT_ON_KARPENTER}]}}}}]}}}}, containers: []}}"
                ),
                false,
            ),
        ];
        for (case, spec, ignored) in cases {
            let got = matches!(attempts_of(&spec), Err(Ignored::NotOnKarpenterNodes));
            assert_eq!(got, ignored, "{case}");
        }
    }
    use crate::model::Kind;

    /// The requests of the Pod whose spec is `spec` (flow-style YAML mapping entries).
    fn requests_of(spec: &str, pod_level: PodLevelResources) -> ResourceList {
        let yaml = format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {{{spec}}}\n");
        let objects = crate::parse::parse_source(0, &yaml, false, false).objects;
        let obj = objects.iter().find(|o| o.kind == Kind::Pod).expect("a Pod");
        let spec = obj
            .workload()
            .and_then(|w| w.pod_spec())
            .expect("a pod spec");
        requests_with(obj, spec, pod_level, None).total
    }

    fn list(pairs: &[(&str, &str)]) -> ResourceList {
        let mut l = ResourceList::new().with("pods", Quantity::from_units(1));
        for (k, v) in pairs {
            l.insert(*k, Quantity::parse(v).unwrap());
        }
        l
    }

    /// component-helpers `TestPodLevelResourceRequests` (v0.34.1), one row per case by its
    /// name (`SkipPodLevelResources: true` is [`PodLevelResources::Ignored`]), then the
    /// rows for what that test leaves out: `spec.overhead` on top (`PodRequests`) and the
    /// API server's defaulting of absent pod-level requests (`defaultPodRequests`).
    #[allow(clippy::too_many_lines, reason = "one table, a row per case")]
    #[test]
    fn pod_level_resource_requests() {
        use PodLevelResources::{Honoured, Ignored};
        const C: &str = "name: c, image: x";
        /// (upstream case name, pod spec, pod-level resources honoured, expected requests)
        type Row = (
            &'static str,
            String,
            PodLevelResources,
            Vec<(&'static str, &'static str)>,
        );
        let rows: Vec<Row> = vec![
            (
                "pod level memory resource with SkipPodLevelResources true",
                "containers: [], resources: {requests: {memory: 2Mi}}".into(),
                Ignored,
                vec![],
            ),
            (
                "pod level memory resource with SkipPodLevelResources false",
                "containers: [], resources: {requests: {memory: 2Mi}}".into(),
                Honoured,
                vec![("memory", "2Mi")],
            ),
            (
                "pod level memory and container level cpu resources with SkipPodLevelResources false",
                format!(
                    "resources: {{requests: {{memory: 2Mi}}}}, containers: [{{{C}, resources: {{requests: {{cpu: 2m}}}}}}]"
                ),
                Honoured,
                vec![("memory", "2Mi"), ("cpu", "2m")],
            ),
            (
                "pod level unsupported resources set at both pod-level and container-level with SkipPodLevelResources false",
                format!(
                    "resources: {{requests: {{storage: 2Mi}}}}, containers: [{{{C}, resources: {{requests: {{storage: 3Mi}}}}}}]"
                ),
                Honoured,
                vec![("storage", "3Mi")],
            ),
            (
                "pod level unsupported resources set at pod-level with SkipPodLevelResources false",
                format!(
                    "resources: {{requests: {{storage: 2Mi}}}}, containers: [{{{C}, resources: {{requests: {{memory: 3Mi}}}}}}]"
                ),
                Honoured,
                vec![("memory", "3Mi")],
            ),
            (
                "both container-level and pod-level resources set with SkipPodLevelResources false",
                format!(
                    "resources: {{requests: {{memory: 6Mi, cpu: 8m}}}}, containers: [{{{C}, resources: {{requests: {{memory: 3Mi, cpu: 2m}}}}}}]"
                ),
                Honoured,
                vec![("memory", "6Mi"), ("cpu", "8m")],
            ),
            (
                "container-level resources and init container set with SkipPodLevelResources true",
                format!(
                    "containers: [{{{C}, resources: {{requests: {{memory: 3Mi, cpu: 2m}}}}}}], initContainers: [{{{C}, resources: {{requests: {{memory: 5Mi, cpu: 4m}}}}}}]"
                ),
                Ignored,
                vec![("memory", "5Mi"), ("cpu", "4m")],
            ),
            (
                "container-level resources, init and sidecar container set with SkipPodLevelResources false",
                format!(
                    "containers: [{{{C}, resources: {{requests: {{memory: 3Mi, cpu: 2m}}}}}}], initContainers: [{{{C}, restartPolicy: Always, resources: {{requests: {{memory: 5Mi, cpu: 4m}}}}}}, {{{C}, resources: {{requests: {{memory: 6Mi, cpu: 8m}}}}}}]"
                ),
                Honoured,
                vec![("memory", "11Mi"), ("cpu", "12m")],
            ),
            (
                "pod-level resources, container-level resources, init and sidecar container set with SkipPodLevelResources false",
                format!(
                    "resources: {{requests: {{memory: 15Mi, cpu: 18m}}}}, containers: [{{{C}, resources: {{requests: {{memory: 3Mi, cpu: 2m}}}}}}], initContainers: [{{{C}, restartPolicy: Always, resources: {{requests: {{memory: 5Mi, cpu: 4m}}}}}}, {{{C}, resources: {{requests: {{memory: 6Mi, cpu: 8m}}}}}}]"
                ),
                Honoured,
                vec![("memory", "15Mi"), ("cpu", "18m")],
            ),
            (
                "pod-level resources, hugepage request/limit multiple page sizes",
                "containers: [], resources: {limits: {hugepages-2Mi: 2Mi, hugepages-1Gi: 1Gi}, requests: {cpu: 1, hugepages-2Mi: 2Mi, hugepages-1Gi: 1Gi}}".into(),
                Honoured,
                vec![("cpu", "1"), ("hugepages-2Mi", "2Mi"), ("hugepages-1Gi", "1Gi")],
            ),
            (
                "pod-level resources, container-level resources, hugepage request/limit multiple page sizes between pod-level and container-level",
                format!(
                    "resources: {{limits: {{hugepages-2Mi: 10Mi}}, requests: {{cpu: 1, hugepages-2Mi: 10Mi}}}}, containers: [{{{C}, resources: {{limits: {{hugepages-1Gi: 1Gi}}, requests: {{memory: 4Mi, hugepages-1Gi: 1Gi}}}}}}]"
                ),
                Honoured,
                vec![("cpu", "1"), ("memory", "4Mi"), ("hugepages-2Mi", "10Mi"), ("hugepages-1Gi", "1Gi")],
            ),
            // PodRequests adds spec.overhead after the pod-level requests replace the sum.
            (
                "PodRequests adds overhead to pod-level requests",
                format!(
                    "resources: {{requests: {{cpu: 2}}}}, overhead: {{cpu: 250m}}, containers: [{{{C}, resources: {{requests: {{cpu: 1}}}}}}]"
                ),
                Honoured,
                vec![("cpu", "2250m")],
            ),
            // defaultPodRequests: a pod-level limit stands in for an absent pod-level request
            // when no container requests the resource…
            (
                "defaultPodRequests takes the pod-level limit when no container requests it",
                format!(
                    "resources: {{limits: {{cpu: 4, memory: 8Gi}}}}, containers: [{{{C}, resources: {{requests: {{memory: 1Gi}}}}}}]"
                ),
                Honoured,
                vec![("cpu", "4"), ("memory", "1Gi")],
            ),
            // … container limits standing in for their requests count as requests…
            (
                "defaultPodRequests takes the container aggregate, limits defaulted",
                format!(
                    "resources: {{limits: {{cpu: 4}}}}, containers: [{{{C}, resources: {{limits: {{cpu: 1}}}}}}]"
                ),
                Honoured,
                vec![("cpu", "1")],
            ),
            // … and hugepages, which cannot be overcommitted, always take the limit.
            (
                "defaultPodRequests takes the pod-level hugepages limit over containers",
                format!(
                    "resources: {{limits: {{hugepages-2Mi: 10Mi}}}}, containers: [{{{C}, resources: {{requests: {{hugepages-2Mi: 6Mi}}, limits: {{hugepages-2Mi: 6Mi}}}}}}]"
                ),
                Honoured,
                vec![("hugepages-2Mi", "10Mi")],
            ),
            (
                "pod-level limits ignored before Karpenter v1.8",
                format!(
                    "resources: {{requests: {{cpu: 4}}, limits: {{memory: 8Gi}}}}, containers: [{{{C}, resources: {{requests: {{cpu: 1}}}}}}]"
                ),
                Ignored,
                vec![("cpu", "1")],
            ),
            // A value the API server rejects is not read (parse-error reports it).
            (
                "invalid pod-level request is skipped",
                format!(
                    "resources: {{requests: {{cpu: lots, memory: -1Gi}}}}, containers: [{{{C}, resources: {{requests: {{cpu: 1, memory: 1Gi}}}}}}]"
                ),
                Honoured,
                vec![("cpu", "1"), ("memory", "1Gi")],
            ),
        ];
        for (name, spec, pod_level, want) in rows {
            assert_eq!(requests_of(&spec, pod_level), list(&want), "{name}");
        }
    }

    /// The objects of `yaml`, the admission state built from them, and the first Pod's
    /// requests, requirement attempts and tolerations as admitted.
    fn admitted(yaml: &str) -> (ResourceList, Vec<Attempt>, Vec<Toleration>) {
        let objects = crate::parse::parse_source(0, yaml, false, false).objects;
        let index = Index::new(&objects);
        let admitted = Admitted::from_index(&index);
        let obj = objects.iter().find(|o| o.kind == Kind::Pod).expect("a Pod");
        let spec = obj.workload().and_then(|w| w.pod_spec()).expect("spec");
        (
            admitted.requests(obj, spec, KarpenterVersion::NEWEST).total,
            admitted.attempts(obj, spec).expect("not ignored"),
            admitted.tolerations(obj, spec, Admission::default()),
        )
    }

    const LIMIT_RANGE: &str = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: l, namespace: team}\nspec:\n  limits:\n    - type: Container\n      defaultRequest: {cpu: \"1\"}\n      default: {memory: 2Gi}\n    - type: Pod\n      max: {cpu: \"64\"}\n---\n";

    /// limitranger `TestMergePodResourceRequirements` and `TestPodLimitFunc` defaulting: a
    /// container or init container without a request takes `defaultRequest` (or `default`
    /// for memory here, `SetDefaults_LimitRangeItem`); a written request, or a limit
    /// standing in for it, is kept; `type: Pod` items give no container default.
    #[test]
    fn merge_pod_resource_requirements() {
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec:\n  initContainers: [{name: i, image: x}]\n  containers:\n    - {name: a, image: x}\n    - {name: b, image: x, resources: {requests: {cpu: 500m}, limits: {memory: 1Gi}}}\n";
        let (requests, _, _) = admitted(&format!("{LIMIT_RANGE}{pod}"));
        assert_eq!(requests, list(&[("cpu", "1500m"), ("memory", "3Gi")]));
        // Another namespace, or a Pod that is a template, takes no default.
        let elsewhere = pod.replace("namespace: team", "namespace: web");
        let (requests, _, _) = admitted(&format!("{LIMIT_RANGE}{elsewhere}"));
        assert_eq!(requests, list(&[("cpu", "500m"), ("memory", "1Gi")]));
        let template = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec:\n  containers: [{name: a}]\n";
        let (requests, _, _) = admitted(&format!("{LIMIT_RANGE}{template}"));
        assert_eq!(requests, list(&[]));
    }

    /// `pkg/apis/core/v1` `TestSetDefaultLimitRangeItem`: `default` takes `max`,
    /// `defaultRequest` takes `default`, then `min`; the first LimitRange of a namespace to
    /// name a resource decides it.
    #[test]
    fn set_default_limit_range_item() {
        let item = |fields: &str| -> ResourceList {
            let yaml = format!(
                "apiVersion: v1\nkind: LimitRange\nmetadata: {{name: l}}\nspec:\n  limits:\n    - {{type: Container, {fields}}}\n"
            );
            let objects = crate::parse::parse_source(0, &yaml, false, false).objects;
            match &objects[0].body {
                Body::LimitRange(spec) => default_requests(spec),
                _ => panic!("a LimitRange"),
            }
        };
        let one = |q: &str| ResourceList::new().with("cpu", Quantity::parse(q).unwrap());
        assert_eq!(item("max: {cpu: 4}"), one("4"));
        assert_eq!(item("min: {cpu: 100m}"), one("100m"));
        assert_eq!(item("min: {cpu: 100m}, max: {cpu: 4}"), one("4"));
        assert_eq!(item("min: {cpu: 100m}, default: {cpu: 2}"), one("2"));
        assert_eq!(
            item("default: {cpu: 2}, defaultRequest: {cpu: 1}"),
            one("1")
        );

        let two = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: m, namespace: team}\nspec:\n  limits: [{type: Container, defaultRequest: {cpu: \"8\", memory: 1Gi}}]\n---\n";
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec:\n  containers: [{name: a, image: x}]\n";
        let (requests, _, _) = admitted(&format!("{LIMIT_RANGE}{two}{pod}"));
        assert_eq!(requests, list(&[("cpu", "1"), ("memory", "2Gi")]));
    }

    /// A LimitRange without a namespace applies to the pods applied with it (its file) in
    /// the namespace `kubectl apply -n` gives both; one that names its namespace applies
    /// to every pod landing there.
    #[test]
    fn limit_range_scope_without_a_namespace() {
        let lr = |ns: &str| {
            format!(
                "apiVersion: v1\nkind: LimitRange\nmetadata: {{name: l{ns}}}\nspec: {{limits: [{{type: Container, defaultRequest: {{cpu: \"1\"}}}}]}}\n"
            )
        };
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: x}]}\n";
        let parse = |id, yaml: &str| crate::parse::parse_source(id, yaml, false, false).objects;
        let (beside, explicit) = (parse(0, &lr("")), parse(0, &lr(", namespace: default")));
        let (pod_here, pod_elsewhere) = (parse(0, pod), parse(1, pod));
        assert!(limit_range_applies(&beside[0], &pod_here[0]));
        assert!(!limit_range_applies(&beside[0], &pod_elsewhere[0]));
        assert!(limit_range_applies(&explicit[0], &pod_elsewhere[0]));
        let all: Vec<Object> = [beside, pod_elsewhere.clone()].concat();
        let defaults = LimitRangeDefaults::from_index(&Index::new(&all));
        assert_eq!(
            defaults.for_object(&pod_elsewhere[0]),
            Some(ResourceList::new())
        );
    }

    /// runtimeclass admission `TestSetOverhead` and `TestSetScheduling`: `podFixed` becomes
    /// the overhead `PodRequests` adds, the class's node selector joins the pod's (the
    /// pod's own value kept) and its tolerations are added.
    #[test]
    fn runtime_class_set_overhead_and_scheduling() {
        let rc = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\noverhead: {podFixed: {cpu: 250m, memory: 120Mi}}\nscheduling:\n  nodeSelector: {sandbox: kata, kubernetes.io/arch: arm64}\n  tolerations: [{key: sandbox, operator: Exists, effect: NoSchedule}]\n---\n";
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  runtimeClassName: kata\n  nodeSelector: {kubernetes.io/arch: amd64}\n  containers: [{name: a, image: x, resources: {requests: {cpu: \"1\", memory: 1Gi}}}]\n";
        let (requests, attempts, tolerations) = admitted(&format!("{rc}{pod}"));
        assert_eq!(requests, list(&[("cpu", "1250m"), ("memory", "1144Mi")]));
        let reqs = &attempts[0].requirements;
        assert!(
            reqs.get("sandbox").is_some_and(|r| r.has("kata")),
            "{reqs:?}"
        );
        let arch = reqs.get("kubernetes.io/arch").expect("arch");
        assert!(arch.has("amd64") && !arch.has("arm64"), "{arch:?}");
        assert!(
            tolerations.iter().any(|t| t.key == "sandbox"),
            "{tolerations:?}"
        );
        // A pod that sets its own overhead keeps it; one naming no class gets nothing.
        let own = pod.replace("  containers", "  overhead: {cpu: 100m}\n  containers");
        let (requests, _, _) = admitted(&format!("{rc}{own}"));
        assert_eq!(requests, list(&[("cpu", "1100m"), ("memory", "1Gi")]));
        let plain = pod.replace("  runtimeClassName: kata\n", "");
        let (requests, attempts, tolerations) = admitted(&format!("{rc}{plain}"));
        assert_eq!(requests, list(&[("cpu", "1"), ("memory", "1Gi")]));
        assert!(attempts[0].requirements.get("sandbox").is_none());
        assert!(tolerations.is_empty());
    }

    /// A resource the pod level decides is located at the pod-level value.
    #[test]
    fn pod_level_request_is_where_the_finding_points() {
        let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resources: {requests: {cpu: \"8\"}}\n  containers: [{name: c, image: x, resources: {requests: {cpu: 1, memory: 1Gi}}}]\n";
        let objects = crate::parse::parse_source(0, yaml, false, false).objects;
        let obj = &objects[0];
        let spec = obj.workload().and_then(|w| w.pod_spec()).expect("spec");
        let r = requests(obj, spec, KarpenterVersion::NEWEST);
        let at = |k: &str| {
            let s = r.spans[&k.into()];
            &yaml[s.offset..s.offset + s.len]
        };
        assert_eq!(at("cpu"), "\"8\"");
        assert_eq!(at("memory"), "1Gi");
    }
}
