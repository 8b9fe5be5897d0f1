//! Model stage, quantities: every resource quantity the model keeps, checked as the API
//! server checks it once the object is typed.
//!
//! The simulator reads quantities where it needs them and can only skip one it cannot
//! read; a skipped request or limit changes verdicts without a word. So the parse stage
//! asks [`invalid_quantities`] of each object, and each value the API server would reject
//! (it does not parse, it overflows, or it is negative where Kubernetes requires `>= 0`)
//! becomes a `parse-error` at its span, in the API server's words, while the rest of the
//! object is still linted.

use super::de::{Spanned, SpannedMap, Text};
use super::karpenter::{KarpenterApi, Kubelet};
use super::workload::{PodSpec, Resources};
use super::{Body, Kind, Object, Span};
use crate::quantity::{Quantity, QuantityError};

/// A quantity value the API server would reject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidQuantity {
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
    out: Vec<InvalidQuantity>,
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
        self.out.push(InvalidQuantity {
            span: self.obj.span(v),
            message: format!(
                "{path}: invalid value {:?}: {}",
                v.value.as_str(),
                e.reason()
            ),
        });
    }

    /// Checks every value of the resource list at `field` (`field[key]`, as the API server
    /// names them).
    fn map(&mut self, field: &str, m: &SpannedMap, sign: Sign) {
        for (k, v) in m.0.iter() {
            self.value(&|| format!("{field}[{}]", k.value), v, sign);
        }
    }

    fn resources(&mut self, field: &str, r: &Resources) {
        self.map(&format!("{field}.requests"), &r.requests, Sign::NonNegative);
        self.map(&format!("{field}.limits"), &r.limits, Sign::NonNegative);
    }

    fn pod_spec(&mut self, field: &str, spec: &PodSpec) {
        for (list, containers) in [
            ("containers", &spec.containers),
            ("initContainers", &spec.init_containers),
        ] {
            for (i, c) in containers.iter().enumerate() {
                if let Some(r) = &c.resources {
                    self.resources(&format!("{field}.{list}[{i}].resources"), &r.value);
                }
            }
        }
        self.map(
            &format!("{field}.overhead"),
            &spec.overhead,
            Sign::NonNegative,
        );
        if let Some(r) = &spec.resources {
            self.resources(&format!("{field}.resources"), &r.value);
        }
    }

    /// `kubeReserved`, `systemReserved` (Karpenter: "cannot be a negative resource
    /// quantity") and the eviction thresholds (a quantity or a percentage).
    fn kubelet(&mut self, field: &str, k: &Kubelet) {
        self.map(
            &format!("{field}.kubeReserved"),
            &k.kube_reserved,
            Sign::NonNegative,
        );
        self.map(
            &format!("{field}.systemReserved"),
            &k.system_reserved,
            Sign::NonNegative,
        );
        for (name, m) in [
            ("evictionHard", &k.eviction_hard),
            ("evictionSoft", &k.eviction_soft),
        ] {
            for (key, v) in m.0.iter() {
                if !is_percentage(v.value.as_str()) {
                    self.value(&|| format!("{field}.{name}[{}]", key.value), v, Sign::Any);
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

/// Every quantity of `obj` the API server would reject, in field order.
pub fn invalid_quantities(obj: &Object) -> Vec<InvalidQuantity> {
    let mut c = Check {
        obj,
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
            }
        }
        Body::LimitRange(lr) => {
            for (i, item) in lr.limits.iter().enumerate() {
                let field = format!("spec.limits[{i}]");
                c.map(
                    &format!("{field}.default"),
                    &item.default,
                    Sign::NonNegative,
                );
                let request = format!("{field}.defaultRequest");
                c.map(&request, &item.default_request, Sign::NonNegative);
            }
        }
        Body::Node(n) => {
            c.map("status.capacity", &n.status.capacity, Sign::NonNegative);
            c.map(
                "status.allocatable",
                &n.status.allocatable,
                Sign::NonNegative,
            );
        }
        Body::NodePool(np) => {
            let (limits, kubelet) = match np.api {
                KarpenterApi::V1alpha5 => ("spec.limits.resources", "spec.kubeletConfiguration"),
                _ => ("spec.limits", "spec.template.spec.kubelet"),
            };
            c.map(limits, &np.limits, Sign::Any);
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
