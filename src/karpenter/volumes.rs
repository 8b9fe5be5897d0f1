//! Simulator, volumes: the claims a pod template uses, resolved to their
//! PersistentVolumeClaim, PersistentVolume and StorageClass in the tree or context, and the
//! zones they pin the pod to (karpenter-model §8, core `volumetopology.go`).

use super::requirements::{LABEL_ZONE, normalize_key};
use crate::index::Index;
use crate::model::de::{Spanned, Str};
use crate::model::storage::{PvSpec, PvcSpec, StorageClass};
use crate::model::{Body, Kind, Object, Span};
use std::collections::BTreeSet;

/// Provisioners and drivers that attach EBS volumes through the EBS CSI node agent
/// (in-tree `kubernetes.io/aws-ebs` is migrated to it since Kubernetes 1.23).
pub fn is_ebs(provisioner: &str) -> bool {
    matches!(provisioner, "ebs.csi.aws.com" | "kubernetes.io/aws-ebs")
}

/// One volume of a pod template that is backed by a claim.
#[derive(Debug, Clone)]
pub struct ClaimVolume<'a> {
    /// A new volume per pod (StatefulSet `volumeClaimTemplates`, generic ephemeral volumes)
    /// rather than one claim every replica shares.
    pub per_pod: bool,
    /// The claim name in the pod spec, or the claim template's name.
    pub span: Span,
    pub name: String,
    pub pv: Option<&'a Object>,
    /// The StorageClass, when named (or the default class) and found.
    pub storage_class: Option<&'a Object>,
}

impl<'a> ClaimVolume<'a> {
    /// A volume each pod gets of its own from a claim template, named (and pointed at) by
    /// `name`, else by the workload.
    fn per_pod(
        index: &Index<'a>,
        obj: &'a Object,
        name: Option<&Spanned<Str>>,
        spec: &PvcSpec,
    ) -> Self {
        ClaimVolume {
            per_pod: true,
            span: name.map(|n| obj.span(n)).unwrap_or_else(|| obj.name_span()),
            name: name.map(|n| n.value.to_string()).unwrap_or_default(),
            pv: None,
            storage_class: storage_class(index, spec),
        }
    }

    pub fn sc(&self) -> Option<&'a StorageClass> {
        match &self.storage_class?.body {
            Body::StorageClass(sc) => Some(sc),
            _ => None,
        }
    }

    pub fn pv_spec(&self) -> Option<&'a PvSpec> {
        match &self.pv?.body {
            Body::PersistentVolume(pv) => Some(pv),
            _ => None,
        }
    }

    /// Whether the volume is an EBS volume (by its PV or its StorageClass).
    pub fn is_ebs(&self) -> bool {
        if let Some(pv) = self.pv_spec() {
            return pv.aws_elastic_block_store.is_some()
                || pv
                    .csi
                    .as_ref()
                    .and_then(|c| c.driver.as_ref())
                    .is_some_and(|d| is_ebs(&d.value));
        }
        self.sc()
            .and_then(|sc| sc.provisioner.as_ref())
            .is_some_and(|p| is_ebs(&p.value))
    }

    /// The zones the volume allows, with where they are written: the bound PV's node
    /// affinity, else the StorageClass's `allowedTopologies`. `None` when unconstrained.
    pub fn zones(&self) -> Option<(BTreeSet<String>, &'a Object, Span)> {
        let (zones, o, span) = self.written_zones()?;
        // Template placeholders (`<<AVAILABILITY_ZONE>>`, `${ZONE}`, `{{ .zone }}`) are
        // unknown values, not zones.
        let placeholder = |z: &String| z.contains("<<") || z.contains("${") || z.contains("{{");
        (!zones.iter().any(placeholder)).then_some((zones, o, span))
    }

    fn written_zones(&self) -> Option<(BTreeSet<String>, &'a Object, Span)> {
        if let (Some(pv), Some(o)) = (self.pv_spec(), self.pv) {
            let terms = &pv
                .node_affinity
                .as_ref()?
                .required
                .as_ref()?
                .node_selector_terms;
            let mut zones = BTreeSet::new();
            let mut span = None;
            for t in terms {
                let e = t.value.match_expressions.iter().find(|e| {
                    normalize_key(&e.key.value) == LABEL_ZONE && e.operator.value == "In"
                })?;
                span.get_or_insert(o.span(&e.key));
                zones.extend(e.values.iter().map(|v| v.value.to_string()));
            }
            return Some((zones, o, span?));
        }
        let (sc, o) = (self.sc()?, self.storage_class?);
        let mut zones = BTreeSet::new();
        let mut span = None;
        for t in &sc.allowed_topologies {
            let e = t
                .match_label_expressions
                .iter()
                .find(|e| normalize_key(&e.key.value) == LABEL_ZONE)?;
            span.get_or_insert(o.span(&e.key));
            zones.extend(e.values.iter().map(|v| v.value.to_string()));
        }
        Some((zones, o, span?))
    }
}

fn storage_class<'a>(index: &Index<'a>, spec: &PvcSpec) -> Option<&'a Object> {
    match &spec.storage_class_name {
        Some(n) if n.value.is_empty() => None,
        Some(n) => index.get(Kind::StorageClass, None, &n.value),
        None => index.of_kind(Kind::StorageClass).find(|o| {
            [
                "storageclass.kubernetes.io/is-default-class",
                "storageclass.beta.kubernetes.io/is-default-class",
            ]
            .iter()
            .any(|a| {
                o.meta
                    .annotations
                    .get(a)
                    .is_some_and(|v| v.value.as_str() == "true")
            })
        }),
    }
}

/// The claim-backed volumes of a workload's pod template.
pub fn claim_volumes<'a>(index: &Index<'a>, obj: &'a Object) -> Vec<ClaimVolume<'a>> {
    let mut out = Vec::new();
    let Some(w) = obj.workload() else { return out };
    let ns = obj.effective_namespace();
    for t in &w.volume_claim_templates {
        out.push(ClaimVolume::per_pod(
            index,
            obj,
            t.metadata.name.as_ref(),
            &t.spec,
        ));
    }
    let Some(spec) = w.pod_spec() else { return out };
    for v in &spec.volumes {
        if let Some(claim) = v
            .persistent_volume_claim
            .as_ref()
            .and_then(|c| c.claim_name.as_ref())
        {
            let pvc = index.get(Kind::PersistentVolumeClaim, Some(ns), &claim.value);
            let pvc_spec = pvc.and_then(|o| match &o.body {
                Body::PersistentVolumeClaim(s) => Some(s),
                _ => None,
            });
            let pv = match pvc_spec.and_then(|s| s.volume_name.as_ref()) {
                Some(n) => index.get(Kind::PersistentVolume, None, &n.value),
                // Pre-bound from the PV side (`claimRef`).
                None => index.of_kind(Kind::PersistentVolume).find(|o| {
                    matches!(&o.body, Body::PersistentVolume(pv) if pv.claim_ref.as_ref().is_some_and(|r| {
                        r.name.as_ref().is_some_and(|n| n.value == claim.value)
                            && r.namespace.as_ref().is_none_or(|n| n.value == ns)
                    }))
                }),
            };
            out.push(ClaimVolume {
                per_pod: false,
                span: obj.span(claim),
                name: claim.value.to_string(),

                pv,
                storage_class: pvc_spec.and_then(|s| storage_class(index, s)),
            });
        } else if let Some(t) = v
            .ephemeral
            .as_ref()
            .and_then(|e| e.volume_claim_template.as_ref())
        {
            out.push(ClaimVolume::per_pod(index, obj, v.name.as_ref(), &t.spec));
        }
    }
    out
}
