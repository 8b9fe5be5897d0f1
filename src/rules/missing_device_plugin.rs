//! `missing-device-plugin`: pods request an extended resource that only a device plugin
//! registers on the node (NVIDIA GPUs, AWS Neuron, branch ENIs for security groups per
//! pod, EFA interfaces), and nothing in the tree or context runs that plugin. Karpenter launches the node
//! from its instance-type table, but the resource never appears and the pod stays Pending.

use super::{Context, Findings, Placed, Rule, Unless};
use crate::facts::WorkloadFacts;
use crate::karpenter::allocatable::AmiFamily;
use crate::karpenter::sim::Verdict;
use crate::model::{Kind, Object};

declare_rule!(
    MissingDevicePlugin,
    "missing-device-plugin",
    Warning,
    "pods request nvidia.com/gpu, Neuron, pod-eni or EFA resources and no device plugin in the tree registers them"
);

/// A resource and the agent that registers it.
struct Device {
    resource: fn(&str) -> bool,
    agent: &'static str,
    /// Its name in `cluster.addons` ([`crate::karpenter::cluster::KNOWN_ADDONS`]).
    addon: &'static str,
    /// Does this workload run that agent?
    provides: fn(&WorkloadFacts) -> bool,
    install: &'static str,
}

fn images_or_name(w: &WorkloadFacts, needles: &[&str]) -> bool {
    // ASCII case-insensitive `contains` (the needles are lowercase).
    let has = |s: &str| {
        needles.iter().any(|n| {
            s.as_bytes()
                .windows(n.len())
                .any(|w| w.eq_ignore_ascii_case(n.as_bytes()))
        })
    };
    has(w.name()) || w.images.iter().any(|i| has(i))
}

const DEVICES: &[Device] = &[
    Device {
        resource: |r| r == "nvidia.com/gpu",
        agent: "the NVIDIA device plugin",
        addon: "nvidia-device-plugin",
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
        addon: "neuron-device-plugin",
        provides: |o| images_or_name(o, &["neuron-device-plugin"]),
        install: "install the Neuron device plugin DaemonSet (Helm chart `neuron-helm-chart`), or pass its manifest with --context",
    },
    Device {
        resource: |r| r == "vpc.amazonaws.com/pod-eni",
        agent: "the VPC CNI with `ENABLE_POD_ENI=true`",
        addon: "vpc-cni-pod-eni",
        provides: |w| {
            w.kind == Kind::DaemonSet
                && (w.env_values("ENABLE_POD_ENI")).any(|v| v.eq_ignore_ascii_case("true"))
        },
        install: "set `ENABLE_POD_ENI=true` on the VPC CNI (`aws-node` DaemonSet or the add-on configuration) and pass its manifest with --context",
    },
    Device {
        resource: |r| r == "vpc.amazonaws.com/efa",
        agent: "the EFA device plugin",
        addon: "efa-device-plugin",
        provides: |o| images_or_name(o, &["efa-k8s-device-plugin", "efa-device-plugin"]),
        install: "install the EFA device plugin DaemonSet (Helm chart `aws-efa-k8s-device-plugin` from eks-charts), or pass its manifest with --context",
    },
];

impl Rule for MissingDevicePlugin {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        let (Some(sim), Some(w)) = (&cx.sim, obj.workload()) else {
            return;
        };
        let Some(spec) = w.pod_spec() else { return };
        // Only a node Karpenter launches for the pod matters here.
        let verdict = o.verdict();
        let Some(Verdict::Schedules(placement)) = verdict else {
            return;
        };
        let pool = &sim.pools[placement.pool];
        for d in DEVICES {
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
            // variants include the NVIDIA one; `cluster.addons` declares those installed
            // outside the manifests.
            let built_in = (pool.np.is_eks_auto_mode()
                && matches!(d.addon, "nvidia-device-plugin" | "neuron-device-plugin"))
                || (key.value == "nvidia.com/gpu"
                    && pool.node_class_known
                    && pool.family == AmiFamily::Bottlerocket)
                || cx.cluster.addons.iter().any(|a| a == d.addon);
            if built_in {
                continue;
            }
            // A plugin DaemonSet counts where it runs: on this pool's nodes.
            let plugins: Vec<&Object> = (cx.index.of_kind(Kind::DaemonSet))
                .filter(|ds| WorkloadFacts::of(ds, None, cx.index, &cx.defaulted).is_some_and(|f| (d.provides)(&f)))
                .collect();
            if plugins.iter().any(|ds| sim.daemonset_runs_on(placement.pool, ds)) {
                continue;
            }
            let finding = |message: String| {
                META.finding(obj, obj.span(key), message)
                    .label(format!("nothing registers {}", key.value))
                    .help(d.install)
                    .related(
                        pool.obj,
                        pool.name_span(),
                        format!("NodePool \"{}\" would launch the node", pool.name),
                    )
            };
            if let Some(ds) = plugins.first() {
                out.push(
                    finding(format!(
                        "the pod requests `{}` but DaemonSet \"{}\", which runs {}, does not run on the nodes of NodePool \"{}\" (its node selector, affinity or tolerations keep it off): Karpenter launches the node, yet the resource is never registered on it and the pod stays Pending",
                        key.value, ds.name(), d.agent, pool.name
                    ))
                    .help(format!(
                        "let DaemonSet \"{}\" run on NodePool \"{}\"'s nodes: match its nodeSelector and affinity to the pool's labels and tolerate the pool's taints",
                        ds.name(), pool.name
                    ))
                    .related(*ds, ds.name_span(), "the plugin DaemonSet"),
                );
                continue;
            }
            // An operator (the GPU Operator, a Helm release) may start the plugin itself.
            out.defer(
                finding(format!(
                    "the pod requests `{}` but no DaemonSet in the linted files or --context runs {}: Karpenter launches a node from NodePool \"{}\", yet the resource is never registered on it and the pod stays Pending",
                    key.value, d.agent, pool.name
                )),
                Unless::Workload(d.provides),
            );
        }
    }
}
