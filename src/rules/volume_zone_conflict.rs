//! `volume-zone-conflict`: a pod's volume is pinned to zones none of the pod's NodePools
//! offer (bound PV node affinity, StorageClass `allowedTopologies`), and EBS StorageClasses
//! that bind `Immediate`ly, before Karpenter has chosen the pod's zone (karpenter-model §8).

use super::{Context, Findings, Placed, Rule};
use crate::diagnostic::{Finding, Severity};
use crate::facts::WorkloadFacts;
use crate::facts::Workloads;
use crate::karpenter::requirements::LABEL_ZONE;
use crate::karpenter::sim::Verdict;
use crate::karpenter::volumes;
use crate::model::{Body, Kind};

declare_rule!(
    VolumeZoneConflict,
    "volume-zone-conflict",
    Error,
    "volume pinned to zones the pod's NodePools do not offer, or an Immediate-binding EBS StorageClass"
);

impl Rule for VolumeZoneConflict {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        let Some(sim) = &cx.sim else {
            return;
        };
        // Only workloads with a pod template have a verdict.
        if !matches!(
            o.verdict(),
            Some(Verdict::Schedules(_) | Verdict::Pending(_))
        ) {
            return;
        }
        let vols = volumes::claim_volumes(cx.index, obj);
        if vols.is_empty() {
            return;
        }
        let Some(reach) = o.reach(cx) else {
            return;
        };
        if reach.tolerated.is_empty() {
            return;
        }
        let pod_zones = reach.domains(sim, cx.index, LABEL_ZONE, &reach.tolerated, true);
        // Zones from subnets are unknown: no conclusion unless every pool pins its zones.
        if pod_zones.open {
            return;
        }
        for v in &vols {
            let Some((zones, holder, zone_span)) = v.zones() else {
                continue;
            };
            if zones.iter().any(|z| pod_zones.values.contains(z)) {
                continue;
            }
            let vz: Vec<&str> = zones.iter().map(String::as_str).collect();
            let what = if v.pv.is_some() {
                format!("PersistentVolume \"{}\"", holder.name())
            } else {
                format!("StorageClass \"{}\"", holder.name())
            };
            let f = META.finding(obj,
                v.span,
                format!(
                    "incompatible volume requirements, key {LABEL_ZONE}, {LABEL_ZONE} In [{}] not in {LABEL_ZONE} In {}",
                    vz.join(" "),
                    pod_zones.render()
                ),
            )
            .label(format!("{what} is only available in [{}]", vz.join(" ")))
            .help(format!(
                "allow one of [{}] in the NodePool this workload uses, or move the volume to a zone the NodePools offer ({})",
                vz.join(" "),
                pod_zones.render()
            ))
            .related(holder, zone_span, format!("{what} pins the volume to [{}]", vz.join(" ")));
            out.push(super::offers_notes(f, sim, &reach.tolerated, LABEL_ZONE));
        }
    }

    fn check_run(&self, cx: &Context, workloads: &Workloads, out: &mut Vec<Finding>) {
        if cx.sim.is_none() {
            return;
        }
        for sc_obj in cx.index.of_kind(Kind::StorageClass).filter(|o| !o.context) {
            let Body::StorageClass(sc) = &sc_obj.body else {
                continue;
            };
            let Some(prov) = sc
                .provisioner
                .as_ref()
                .filter(|p| volumes::is_ebs(&p.value))
            else {
                continue;
            };
            let mode = sc.volume_binding_mode.as_ref();
            if mode.is_some_and(|m| m.value != "Immediate") {
                continue;
            }
            let users: Vec<&WorkloadFacts> = workloads
                .iter()
                .filter(|w| {
                    !w.context
                        && (w.claims.iter()).any(|c| !c.bound && c.storage_class == Some(sc_obj.id))
                })
                .collect();
            let Some(first) = users.first() else { continue };
            let (span, label) = match mode {
                Some(m) => (sc_obj.span(m), "binds before the pod's zone is known"),
                None => (sc_obj.span(prov), "no `volumeBindingMode`, so `Immediate`"),
            };
            out.push(
                META.finding_with(Severity::Warning, sc_obj,
                    span,
                    format!(
                        "EBS StorageClass \"{}\" uses volumeBindingMode Immediate: the volume is created before Karpenter chooses the pod's node, possibly in a zone the pod cannot go to, and Karpenter v1.7+ ignores such pods (`pvc with immediate volume binding mode must be bound`)",
                        sc_obj.name()
                    ),
                )
                .label(label)
                .help("set `volumeBindingMode: WaitForFirstConsumer` so the volume is created in the zone of the node Karpenter launches")
                .related(
                    *first,
                    first.name_span,
                    format!(
                        "{} \"{}\" uses it{}",
                        first.kind_name(),
                        first.name(),
                        if users.len() > 1 {
                            format!(" (and {} more)", users.len() - 1)
                        } else {
                            String::new()
                        }
                    ),
                ),
            );
        }
    }
}
