//! `missing-device-plugin`: pods request an extended resource that only a device plugin
//! registers on the node (NVIDIA GPUs, AWS Neuron, branch ENIs for security groups per
//! pod), and nothing in the tree or context runs that plugin. Karpenter launches the node
//! from its instance-type table, but the resource never appears and the pod stays Pending.

use super::{Context, Rule};
use crate::diagnostic::{Finding, Severity};
use crate::karpenter::allocatable::AmiFamily;
use crate::karpenter::sim::Verdict;
use crate::model::{Kind, Object};

pub struct MissingDevicePlugin;

const ID: &str = "missing-device-plugin";

/// A resource and the agent that registers it.
struct Device {
    resource: fn(&str) -> bool,
    agent: &'static str,
    /// Does this workload run that agent?
    provides: fn(&Object) -> bool,
    install: &'static str,
}

fn images_or_name(o: &Object, needles: &[&str]) -> bool {
    // ASCII case-insensitive `contains` (the needles are lowercase).
    let has = |s: &str| {
        needles.iter().any(|n| {
            s.as_bytes()
                .windows(n.len())
                .any(|w| w.eq_ignore_ascii_case(n.as_bytes()))
        })
    };
    has(o.name())
        || o.workload().and_then(|w| w.pod_spec()).is_some_and(|s| {
            s.containers
                .iter()
                .chain(&s.init_containers)
                .filter_map(|c| c.image.as_ref())
                .any(|i| has(&i.value))
        })
}

const DEVICES: &[Device] = &[
    Device {
        resource: |r| r == "nvidia.com/gpu",
        agent: "the NVIDIA device plugin",
        provides: |o| {
            images_or_name(
                o,
                &["k8s-device-plugin", "nvidia-device-plugin", "gpu-operator"],
            )
        },
        install: "install the NVIDIA device plugin DaemonSet (or the NVIDIA GPU Operator), use Bottlerocket's NVIDIA variant, which includes it, or pass its manifest with --context",
    },
    Device {
        resource: |r| r.starts_with("aws.amazon.com/neuron"),
        agent: "the Neuron device plugin",
        provides: |o| images_or_name(o, &["neuron-device-plugin"]),
        install: "install the Neuron device plugin DaemonSet (Helm chart `neuron-helm-chart`), or pass its manifest with --context",
    },
    Device {
        resource: |r| r == "vpc.amazonaws.com/pod-eni",
        agent: "the VPC CNI with `ENABLE_POD_ENI=true`",
        provides: |o| {
            o.kind == Kind::DaemonSet
                && o.workload().and_then(|w| w.pod_spec()).is_some_and(|s| {
                    s.containers.iter().any(|c| {
                        c.env.iter().any(|e| {
                            e.name.as_deref() == Some("ENABLE_POD_ENI")
                                && e.value
                                    .as_ref()
                                    .is_some_and(|v| v.as_str().eq_ignore_ascii_case("true"))
                        })
                    })
                })
        },
        install: "set `ENABLE_POD_ENI=true` on the VPC CNI (`aws-node` DaemonSet or the add-on configuration) and pass its manifest with --context",
    },
];

impl Rule for MissingDevicePlugin {
    fn id(&self) -> &'static str {
        ID
    }
    fn doc(&self) -> &'static str {
        include_str!("../../lints/missing-device-plugin.md")
    }
    fn default_severity(&self) -> Severity {
        Severity::Warning
    }
    fn summary(&self) -> &'static str {
        "pods request nvidia.com/gpu, Neuron or pod-eni resources and no device plugin in the tree registers them"
    }

    fn check(&self, obj: &Object, cx: &Context, _out: &mut Vec<Finding>) {
        let (Some(sim), Some(w)) = (&cx.sim, obj.workload()) else {
            return;
        };
        let Some(spec) = w.pod_spec() else { return };
        // Only a node Karpenter launches for the pod matters here.
        let verdict = cx.verdict(obj);
        let Some(Verdict::Schedules(placement)) = verdict.as_deref() else {
            return;
        };
        let pool = &sim.pools[placement.pool];
        for (i, d) in DEVICES.iter().enumerate() {
            let Some((key, _)) = spec
                .containers
                .iter()
                .chain(&spec.init_containers)
                .filter_map(|c| c.resources.as_ref())
                .flat_map(|r| r.value.limits.0.iter().chain(r.value.requests.0.iter()))
                .find(|(k, v)| (d.resource)(&k.value) && v.value.as_str() != "0")
            else {
                continue;
            };
            // EKS Auto Mode ships the NVIDIA and Neuron plugins; Bottlerocket's NVIDIA
            // variants include the NVIDIA one.
            let built_in = (pool.np.is_eks_auto_mode() && key.value != "vpc.amazonaws.com/pod-eni")
                || (key.value == "nvidia.com/gpu"
                    && pool.node_class_known
                    && pool.family == AmiFamily::Bottlerocket);
            if built_in {
                continue;
            }
            let bit = 1u8 << i;
            cx.unless(
                Finding::new(
                    ID,
                    Severity::Warning,
                    obj,
                    obj.span(key),
                    format!(
                        "the pod requests `{}` but no DaemonSet in the linted files or --context runs {}: Karpenter launches a node from NodePool \"{}\", yet the resource is never registered on it and the pod stays Pending",
                        key.value, d.agent, pool.name
                    ),
                )
                .label(format!("nothing registers {}", key.value))
                .help(d.install)
                .related(
                    pool.obj,
                    pool.name_span(),
                    format!("NodePool \"{}\" would launch the node", pool.name),
                ),
                move |w| w.devices & bit != 0,
            );
        }
    }
}

/// Which devices' agents a workload runs, one bit per [`DEVICES`] entry (its digest keeps
/// the mask: whether a plugin is installed is asked once every workload is known).
pub(super) fn provided(o: &Object) -> u8 {
    const { assert!(DEVICES.len() <= 8) };
    DEVICES
        .iter()
        .enumerate()
        .filter(|(_, d)| (d.provides)(o))
        .fold(0, |mask, (i, _)| mask | 1 << i)
}
