//! Simulator, pod side: what a pod template asks of a node, as Karpenter reads it.
//!
//! Requirements are `nodeSelector` ∧ one required `nodeSelectorTerm` ∧ the heaviest
//! preferred term (SPEC §3.1), produced as the sequence of attempts Karpenter's relaxation
//! walks through (§3.4): each required term in order with preferences, then without.
//! Requests are max(Σ containers + sidecars, largest init container) + overhead (§6.3).
//! Every requirement keeps the span of the selector entry it came from, so a finding can
//! point at the exact line to change.

use super::requirements::{self, Operator, Requirement, Requirements};
use super::taints::{Effect, Toleration, TolerationOperator};
use crate::model::de::Spanned;
use crate::model::workload::{Container, NodeSelectorRequirement, NodeSelectorTerm, PodSpec};
use crate::model::{Object, Span};
use crate::quantity::{Quantity, ResourceList};
use std::collections::BTreeMap;

/// One set of requirements Karpenter tries for a pod, with where each key came from.
#[derive(Debug, Clone, Default)]
pub struct Attempt {
    pub requirements: Requirements,
    /// Normalised key → span of the pod's selector entry for it.
    pub spans: BTreeMap<String, Span>,
    /// Whether preferred terms are part of this attempt.
    pub with_preferences: bool,
    /// Karpenter's last relaxation: `PreferNoSchedule` taints are tolerated
    /// (`Preferences.toleratePreferNoScheduleTaints`).
    pub tolerates_prefer_no_schedule: bool,
}

/// Why Karpenter refuses to consider a pod at all (SPEC §2.3).
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
        base.spans.insert(req.key().to_string(), obj.span(k));
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
    let mut out = Vec::new();
    let last = required.len() - 1;
    for (i, r) in required.iter().enumerate() {
        let mut prefs = preferred.iter().peekable();
        if i < last {
            // Earlier terms are tried with the heaviest preference only, then dropped.
            out.push(with_preference(obj, r, prefs.next().copied())?);
            continue;
        }
        // The last term stays; preferences are dropped one by one, heaviest first.
        let mut rest: Vec<_> = preferred.clone();
        loop {
            let first = rest.first().copied();
            out.push(with_preference(obj, r, first)?);
            if rest.is_empty() {
                break;
            }
            rest.remove(0);
        }
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
    if let Some(p) = pref {
        a.with_preferences = true;
        // Preferred terms with keys Karpenter would reject are simply not used.
        if add_expressions(obj, &p.preference.value.match_expressions, &mut a, false).is_err() {
            let mut b = base.clone();
            b.with_preferences = false;
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
        a.spans
            .entry(req.key().to_string())
            .or_insert(obj.span(&e.key));
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

/// The pod's tolerations, converted; invalid entries (unknown operator or effect) are
/// dropped, as the API server would reject them anyway.
pub fn tolerations(spec: &PodSpec) -> Vec<Toleration> {
    spec.tolerations
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

/// A pod's effective requests, and where each resource is requested most.
#[derive(Debug, Clone, Default)]
pub struct Requests {
    pub total: ResourceList,
    /// Resource → span of the largest single request (or limit standing in) for it.
    pub spans: BTreeMap<String, Span>,
}

fn container_requests(
    obj: &Object,
    c: &Container,
    spans: &mut BTreeMap<String, (Quantity, Span)>,
) -> ResourceList {
    let mut out = ResourceList::new();
    let Some(res) = &c.resources else { return out };
    // Limits stand in for missing requests. A value the API server rejects (reported as a
    // `parse-error` by the parse stage) is not read: a negative one would offset the others.
    for (k, v) in res.value.limits.0.iter().chain(res.value.requests.0.iter()) {
        let Ok(q) = Quantity::parse_non_negative(v.value.as_str()) else {
            continue;
        };
        out.insert(k.value.to_string(), q);
        let span = obj.span(v);
        let e = spans.entry(k.value.to_string()).or_insert((q, span));
        if q > e.0 {
            *e = (q, span);
        }
    }
    out
}

/// Effective pod requests (SPEC §6.3) plus `pods: 1`.
pub fn requests(obj: &Object, spec: &PodSpec) -> Requests {
    let mut spans = BTreeMap::new();
    let mut main = ResourceList::new();
    for c in &spec.containers {
        main.add(&container_requests(obj, c, &mut spans));
    }
    // Sidecars (restartPolicy: Always) run beside the main containers; an ordinary init
    // container runs alone, beside the sidecars started before it.
    let mut sidecars = ResourceList::new();
    let mut init_max = ResourceList::new();
    for c in &spec.init_containers {
        let r = container_requests(obj, c, &mut spans);
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
}
