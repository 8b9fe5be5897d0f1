//! `in-tree-storage-plugin`: PersistentVolumes and StorageClasses that use the in-tree
//! `kubernetes.io/aws-ebs` plugin, whose attach limits Karpenter cannot discover.

use super::{Context, Findings, Placed, Rule};
use crate::diagnostic::Severity;
use crate::model::Body;

declare_rule!(
    InTreeStoragePlugin,
    "in-tree-storage-plugin",
    Error,
    "PersistentVolume or StorageClass using the deprecated in-tree EBS plugin Karpenter cannot count"
);

impl Rule for InTreeStoragePlugin {
    fn check_object(&self, o: &Placed, _cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        match &obj.body {
            Body::PersistentVolume(pv) => {
                if let Some(ebs) = &pv.aws_elastic_block_store {
                    out.push(
                        META.finding(obj,
                            obj.span(ebs),
                            "PersistentVolume source 'AWSElasticBlockStore' uses an in-tree storage plugin which is unsupported by Karpenter and is deprecated by Kubernetes",
                        )
                        .label("in-tree EBS volume source")
                        .help("migrate the volume to the EBS CSI driver: use a `csi:` source with `driver: ebs.csi.aws.com` and the same `volumeHandle`, so Karpenter can discover the node's volume attach limits"),
                    );
                }
            }
            Body::StorageClass(sc) => {
                if let Some(p) = sc
                    .provisioner
                    .as_ref()
                    .filter(|p| p.value == "kubernetes.io/aws-ebs")
                {
                    out.push(
                        META.finding_with(Severity::Warning, obj,
                            obj.span(p),
                            "StorageClass .spec.provisioner uses an in-tree storage plugin which is unsupported by Karpenter and is deprecated by Kubernetes",
                        )
                        .label("in-tree provisioner")
                        .help("create a StorageClass with `provisioner: ebs.csi.aws.com` (the EBS CSI driver) and move claims to it"),
                    );
                }
            }
            _ => {}
        }
    }
}
