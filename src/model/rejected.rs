//! Model stage, rejected values: every value karplint reads that the API server or
//! Karpenter's NodePool validation would reject, checked once the object is typed.
//!
//! The simulator reads values where it needs them and can only skip one it cannot read; a
//! skipped request, limit or requirement changes verdicts without a word. So the parse stage
//! asks [`rejected_values`] of each object, and each value a validator would reject becomes
//! a `parse-error` at its span, naming the validator, while the rest of the object is still
//! linted as if the value were absent. Checked here: quantities (they do not parse, they
//! overflow, or they are negative where Kubernetes requires `>= 0`), including those of an
//! Argo template's containers, node-selector operators and values, toleration operators
//! and effects, and taint effects; a SparkApplication's values are checked where its pod
//! is built from them ([`super::crd::spark_requests`]). Integer fields given a string, a
//! boolean or a fraction are turned away while the document is deserialized
//! ([`super::de::int`]) and join these in the parse stage.

use super::de::{Spanned, SpannedMap, Text, excerpt, quoted};
use super::karpenter::Taint;
use super::karpenter::{KarpenterApi, Kubelet};
use super::workload::{NodeSelectorRequirement, PodSpec, Resources, Toleration};
use super::{Body, Kind, Object, Span};
use crate::quantity::{Quantity, QuantityError};

/// A value the API server or Karpenter's NodePool validation would reject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedValue {
    pub span: Span,
    pub message: String,
}

/// Whether Kubernetes requires the values of a field to be non-negative.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sign {
    NonNegative,
    Any,
}

struct Check<'o> {
    obj: &'o Object,
    /// Who rejects the object's values, as messages name it: "the API server" or
    /// "Karpenter's NodePool validation".
    validator: &'static str,
    out: Vec<RejectedValue>,
}

impl Check<'_> {
    /// Checks the value of field `path`.
    fn value(&mut self, path: &dyn Fn() -> String, v: &Spanned<Text>, sign: Sign) {
        let text = v.value.as_str();
        let parsed = match sign {
            Sign::NonNegative => Quantity::parse_non_negative(text),
            Sign::Any => Quantity::parse(text),
        };
        if let Err(e) = parsed {
            self.push(&path(), v, &e);
        }
    }

    fn push(&mut self, path: &str, v: &Spanned<Text>, e: &QuantityError) {
        let reason = e.reason();
        self.reject(
            v,
            format!("{path}: invalid value {}", quoted(v.value.as_str())),
            &reason,
        );
    }

    /// Reports `at`: `what` names the field and value, `reason` is the validator's.
    fn reject<T>(&mut self, at: &Spanned<T>, what: String, reason: &str) {
        self.out.push(RejectedValue {
            span: self.obj.span(at),
            message: format!("{what}: {} rejects it: {reason}", self.validator),
        });
    }

    /// A node-selector requirement: `field` is its path.
    fn requirement(&mut self, field: &str, r: &NodeSelectorRequirement, rules: Operators) {
        if let Some(why) = requirement_rejection(r, rules) {
            let what = match why.at {
                At::Operator => format!("{field}.operator: {}", quoted(r.operator.value.as_str())),
                At::Value(i) => format!(
                    "{field}.values[{i}]: {}",
                    quoted(r.values[i].value.as_str())
                ),
                At::MinValues => format!("{field}.minValues"),
            };
            match why.at {
                At::Operator | At::MinValues => {
                    let at = match (why.at, &r.min_values) {
                        (At::MinValues, Some(m)) => self.obj.span(m),
                        _ => self.obj.span(&r.operator),
                    };
                    self.out.push(RejectedValue {
                        span: at,
                        message: format!("{what}: {} rejects it: {}", self.validator, why.reason),
                    });
                }
                At::Value(i) => self.reject(&r.values[i], what, &why.reason),
            }
        }
    }

    /// The node affinity of a pod spec at `field`.
    fn node_affinity(&mut self, field: &str, spec: &PodSpec) {
        let na = &spec.affinity.node_affinity;
        let field = format_args!("{field}.affinity.nodeAffinity");
        if let Some(required) = &na.required {
            for (i, term) in required.node_selector_terms.iter().enumerate() {
                for (j, e) in term.value.match_expressions.iter().enumerate() {
                    let path = format!(
                        "{field}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}].matchExpressions[{j}]"
                    );
                    self.requirement(&path, e, Operators::Pod);
                }
            }
        }
        for (i, p) in na.preferred.iter().enumerate() {
            for (j, e) in p.preference.value.match_expressions.iter().enumerate() {
                let path = format!(
                    "{field}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference.matchExpressions[{j}]"
                );
                self.requirement(&path, e, Operators::Pod);
            }
        }
    }

    fn tolerations(&mut self, field: &str, tolerations: &[Toleration]) {
        for (i, t) in tolerations.iter().enumerate() {
            let path = format_args!("{field}.tolerations[{i}]");
            if let Some(o) = &t.operator
                && !matches!(o.value.as_str(), "" | "Equal" | "Exists")
            {
                let what = format!("{path}.operator: {}", quoted(o.value.as_str()));
                self.reject(o, what, "supported values: \"Equal\", \"Exists\"");
            }
            if let Some(e) = &t.effect
                && !(e.value.is_empty() || is_effect(&e.value))
            {
                let what = format!("{path}.effect: {}", quoted(e.value.as_str()));
                self.reject(e, what, EFFECTS);
            }
            if let (Some(o), Some(v)) = (&t.operator, &t.value)
                && o.value == "Exists"
                && !v.value.as_str().is_empty()
            {
                let what = format!("{path}.value: {}", quoted(v.value.as_str()));
                self.reject(v, what, "value must be empty when `operator` is 'Exists'");
            }
        }
    }

    fn taints(&mut self, field: &str, taints: &[Taint]) {
        for (i, t) in taints.iter().enumerate() {
            if !is_effect(&t.effect.value) {
                let what = format!("{field}[{i}].effect: {}", quoted(t.effect.value.as_str()));
                self.reject(&t.effect, what, EFFECTS);
            }
        }
    }

    /// Checks every value of the resource list at `field` (`field[key]`, as the API server
    /// names them).
    fn map(&mut self, field: &dyn Fn() -> String, m: &SpannedMap, sign: Sign) {
        for (k, v) in m.0.iter() {
            self.value(&|| format!("{}[{}]", field(), excerpt(&k.value)), v, sign);
        }
    }

    /// The requests and limits of the resources at `field`.
    fn resources(&mut self, field: &dyn Fn() -> String, r: &Resources) {
        let requests = || format!("{}.requests", field());
        self.map(&requests, &r.requests, Sign::NonNegative);
        self.map(
            &|| format!("{}.limits", field()),
            &r.limits,
            Sign::NonNegative,
        );
    }

    fn pod_spec(&mut self, field: &str, spec: &PodSpec) {
        for (list, containers) in [
            ("containers", &spec.containers),
            ("initContainers", &spec.init_containers),
        ] {
            for (i, c) in containers.iter().enumerate() {
                if let Some(r) = &c.resources {
                    let path = || format!("{field}.{list}[{i}].resources");
                    self.resources(&path, &r.value);
                }
            }
        }
        let overhead = || format!("{field}.overhead");
        self.map(&overhead, &spec.overhead, Sign::NonNegative);
        if let Some(r) = &spec.resources {
            self.resources(&|| format!("{field}.resources"), &r.value);
        }
        self.node_affinity(field, spec);
        self.tolerations(field, &spec.tolerations);
        self.topology_spread(field, spec);
    }

    /// Topology spread constraints, as Kubernetes' `validateTopologySpreadConstraints`
    /// checks the fields karplint reads: `maxSkew` and `minDomains` above zero,
    /// `minDomains` only with `whenUnsatisfiable: DoNotSchedule`, and the enumerated values.
    fn topology_spread(&mut self, field: &str, spec: &PodSpec) {
        for (i, tsc) in spec.topology_spread_constraints.iter().enumerate() {
            let at = format!("{field}.topologySpreadConstraints[{i}]");
            if let Some(m) = tsc.max_skew.as_ref().filter(|m| m.value <= 0) {
                let what = format!("{at}.maxSkew: {}", m.value);
                self.reject(m, what, "must be greater than zero");
            }
            let when = tsc.when_unsatisfiable.as_ref();
            if let Some(w) =
                when.filter(|w| !matches!(w.value.as_str(), "DoNotSchedule" | "ScheduleAnyway"))
            {
                let what = format!("{at}.whenUnsatisfiable: {}", quoted(w.value.as_str()));
                self.reject(
                    w,
                    what,
                    "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
                );
            }
            if let Some(m) = &tsc.min_domains {
                let what = format!("{at}.minDomains: {}", m.value);
                if m.value <= 0 {
                    self.reject(m, what, "must be greater than 0");
                } else if let Some(w) = when.filter(|w| w.value.as_str() != "DoNotSchedule") {
                    let reason = format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {}",
                        w.value.as_str()
                    );
                    self.reject(m, what, &reason);
                }
            }
            for (name, policy) in [
                ("nodeAffinityPolicy", &tsc.node_affinity_policy),
                ("nodeTaintsPolicy", &tsc.node_taints_policy),
            ] {
                if let Some(p) = policy
                    .as_ref()
                    .filter(|p| !matches!(p.value.as_str(), "Honor" | "Ignore"))
                {
                    let what = format!("{at}.{name}: {}", quoted(p.value.as_str()));
                    self.reject(p, what, "supported values: \"Honor\", \"Ignore\"");
                }
            }
        }
    }

    /// `kubeReserved`, `systemReserved` (Karpenter: "cannot be a negative resource
    /// quantity") and the eviction thresholds (a quantity or a percentage).
    fn kubelet(&mut self, field: &str, k: &Kubelet) {
        let kube = || format!("{field}.kubeReserved");
        self.map(&kube, &k.kube_reserved, Sign::NonNegative);
        let system = || format!("{field}.systemReserved");
        self.map(&system, &k.system_reserved, Sign::NonNegative);
        for (name, m) in [
            ("evictionHard", &k.eviction_hard),
            ("evictionSoft", &k.eviction_soft),
        ] {
            for (key, v) in m.0.iter() {
                if !is_percentage(v.value.as_str()) {
                    self.value(
                        &|| format!("{field}.{name}[{}]", excerpt(&key.value)),
                        v,
                        Sign::Any,
                    );
                }
            }
        }
    }
}

/// An eviction threshold written as a percentage, `0%` to `100%`.
fn is_percentage(v: &str) -> bool {
    v.strip_suffix('%')
        .and_then(|p| p.parse::<f64>().ok())
        .is_some_and(|p| (0.0..=100.0).contains(&p))
}

/// Every value of `obj` the API server or Karpenter's NodePool validation would reject, in
/// field order.
pub fn rejected_values(obj: &Object) -> Vec<RejectedValue> {
    let validator = match obj.body {
        Body::NodePool(_) => "Karpenter's NodePool validation",
        Body::NodeClass(_) => "Karpenter's node class validation",
        _ => "the API server",
    };
    let mut c = Check {
        obj,
        validator,
        out: Vec::new(),
    };
    match &obj.body {
        Body::Workload(w) => {
            let field = match (obj.kind, &w.part) {
                (_, Some(part)) => part.spec_path.as_deref(),
                (Kind::Pod, _) => Some("spec"),
                (Kind::CronJob, _) => Some("spec.jobTemplate.spec.template.spec"),
                _ => Some("spec.template.spec"),
            };
            if let (Some(field), Some(spec)) = (field, w.pod_spec()) {
                c.pod_spec(field, spec);
            } else if let (Some(part), Some(spec)) = (&w.part, w.pod_spec()) {
                // An Argo template's containers, each at its own path.
                let containers = spec.containers.iter().chain(spec.init_containers.iter());
                for (path, container) in part.container_paths.iter().zip(containers) {
                    if let Some(r) = &container.resources {
                        c.resources(&|| format!("{path}.resources"), &r.value);
                    }
                }
            }
            if let Some(part) = &w.part {
                // Values the CRD's own fields were converted from (SparkApplication).
                c.out.extend(part.rejected.iter().map(|r| RejectedValue {
                    span: obj.span(r),
                    message: r.value.clone(),
                }));
            }
        }
        Body::LimitRange(lr) => {
            for (i, item) in lr.limits.iter().enumerate() {
                let default = || format!("spec.limits[{i}].default");
                c.map(&default, &item.default, Sign::NonNegative);
                let request = || format!("spec.limits[{i}].defaultRequest");
                c.map(&request, &item.default_request, Sign::NonNegative);
            }
        }
        Body::Node(n) => {
            c.taints("spec.taints", &n.spec.taints);
            let capacity = || "status.capacity".to_string();
            c.map(&capacity, &n.status.capacity, Sign::NonNegative);
            let allocatable = || "status.allocatable".to_string();
            c.map(&allocatable, &n.status.allocatable, Sign::NonNegative);
        }
        Body::NodePool(np) => {
            let (limits, kubelet) = match np.api {
                KarpenterApi::V1alpha5 => ("spec.limits.resources", "spec.kubeletConfiguration"),
                _ => ("spec.limits", "spec.template.spec.kubelet"),
            };
            c.map(&|| limits.to_string(), &np.limits, Sign::Any);
            if np.api == KarpenterApi::V1 {
                let field = "spec.template.spec";
                for (i, r) in np.requirements.iter().enumerate() {
                    c.requirement(
                        &format!("{field}.requirements[{i}]"),
                        r,
                        Operators::NodePool,
                    );
                }
                c.taints(&format!("{field}.taints"), &np.taints);
                c.taints(&format!("{field}.startupTaints"), &np.startup_taints);
            }
            if let Some(k) = &np.kubelet {
                c.kubelet(kubelet, k);
            }
        }
        Body::NodeClass(nc) => {
            if let Some(k) = &nc.kubelet {
                c.kubelet("spec.kubelet", k);
            }
            for (i, b) in nc.block_device_mappings.iter().enumerate() {
                if let Some(size) = b.ebs.as_ref().and_then(|e| e.volume_size.as_ref()) {
                    let path = || format!("spec.blockDeviceMappings[{i}].ebs.volumeSize");
                    c.value(&path, size, Sign::NonNegative);
                }
            }
        }
        _ => {}
    }
    c.out
}

/// The message for a taint or toleration effect Kubernetes does not know.
const EFFECTS: &str = "supported values: \"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\"";

fn is_effect(e: &str) -> bool {
    matches!(e, "NoSchedule" | "PreferNoSchedule" | "NoExecute")
}

/// Which validator's rules a node-selector requirement is held to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Operators {
    /// A pod's node affinity: the API server's `ValidateNodeSelectorRequirement`.
    Pod,
    /// A `karpenter.sh/v1` NodePool's requirements: the CEL rules and enum of the NodePool
    /// CRD at Karpenter v1.14.3.
    NodePool,
}

/// Where in a requirement the rejected value is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum At {
    Operator,
    Value(usize),
    MinValues,
}

/// Why a validator rejects a node-selector requirement, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub at: At,
    pub reason: String,
}

/// Why the validator of `rules` rejects `r`, or `None` when it accepts it.
///
/// Pods: the API server's `ValidateNodeSelectorRequirement` (k8s.io/kubernetes
/// `pkg/apis/core/validation`): the operator is one of `In`, `NotIn`, `Exists`,
/// `DoesNotExist`, `Gt`, `Lt`; `In`/`NotIn` need values, `Exists`/`DoesNotExist` take none,
/// `Gt`/`Lt` exactly one (the API server does not check it is an integer; Karpenter ignores
/// such a pod, which `restricted-label-selector` reports).
///
/// NodePools: the `karpenter.sh_nodepools.yaml` CRD of Karpenter v1.14.3: the operator
/// enum adds `Gte` and `Lte`; "requirements with operator 'In' must have a value defined";
/// "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer
/// value" (CEL `int(x.values[0]) >= 0`); `minValues` from 1 to 50, and no more than the
/// values of an `In`. A `${…}` placeholder value is an unrendered template that karplint
/// reads as "any value", not reported here.
pub fn requirement_rejection(r: &NodeSelectorRequirement, rules: Operators) -> Option<Rejection> {
    let reject = |at, reason: &str| {
        Some(Rejection {
            at,
            reason: reason.to_string(),
        })
    };
    let op = r.operator.value.as_str();
    let n = r.values.len();
    if r.values.iter().any(|v| v.value.as_str().contains("${")) {
        return None;
    }
    let numeric = match rules {
        Operators::Pod => matches!(op, "Gt" | "Lt"),
        Operators::NodePool => matches!(op, "Gt" | "Lt" | "Gte" | "Lte"),
    };
    match (rules, op) {
        (_, "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt")
        | (Operators::NodePool, "Gte" | "Lte") => {}
        (Operators::Pod, _) => {
            return reject(
                At::Operator,
                "not a valid selector operator (In, NotIn, Exists, DoesNotExist, Gt, Lt)",
            );
        }
        (Operators::NodePool, _) => {
            return reject(
                At::Operator,
                "supported values: In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte",
            );
        }
    }
    match rules {
        Operators::Pod => match op {
            "In" | "NotIn" if n == 0 => reject(
                At::Operator,
                "values must be specified when `operator` is 'In' or 'NotIn'",
            ),
            "Exists" | "DoesNotExist" if n > 0 => reject(
                At::Value(0),
                "values may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
            _ if numeric && n != 1 => reject(
                At::Operator,
                "must be specified single value when `operator` is 'Lt' or 'Gt'",
            ),
            _ => None,
        },
        Operators::NodePool => {
            const SINGLE: &str = "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value";
            if op == "In" && n == 0 {
                return reject(
                    At::Operator,
                    "requirements with operator 'In' must have a value defined",
                );
            }
            if numeric {
                if n != 1 {
                    return reject(At::Operator, SINGLE);
                }
                // CEL's int() of a string is Go's strconv.ParseInt(s, 10, 64), which takes
                // what Rust's i64 parser takes.
                if r.values[0]
                    .value
                    .as_str()
                    .parse::<i64>()
                    .is_ok_and(|v| v >= 0)
                {
                    return None;
                }
                return reject(At::Value(0), SINGLE);
            }
            let m = r.min_values.as_ref().map(|m| m.value)?;
            if !(1..=50).contains(&m) {
                return reject(At::MinValues, "minValues must be between 1 and 50");
            }
            if op == "In" && usize::try_from(m).is_ok_and(|m| m > n) {
                return reject(
                    At::MinValues,
                    "requirements with 'minValues' must have at least that many values specified in the 'values' field",
                );
            }
            None
        }
    }
}
