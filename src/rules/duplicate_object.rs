//! `duplicate-object`: two different definitions of one object in the same run. The API
//! server holds one object per kind and name (and namespace, for namespaced kinds): applied
//! together, the later definition replaces the earlier. karplint reads both, so workloads
//! are judged against NodePools, node classes or budgets no single cluster holds at once.
//! Copies the same in every field karplint reads are one object and are not reported.
//! Workloads other than DaemonSets are linted file by file and are not compared; Karpenter's
//! batch places a later definition with the same pods once (`engine::verdict`).

use super::{Context, Rule};
use crate::diagnostic::Finding;
use crate::facts::Workloads;
use crate::model::Object;
use crate::model::identity::cluster_scoped;

declare_rule!(
    DuplicateObject,
    "duplicate-object",
    Warning,
    "two different definitions of the same object in one run: a cluster holds one, and karplint judges workloads against both"
);

impl Rule for DuplicateObject {
    fn check_run(&self, cx: &Context, _workloads: &Workloads, out: &mut Vec<Finding>) {
        for group in cx.index.recurring() {
            out.extend(differing(&group).map(|(first, other)| finding(first, other)));
        }
    }
}

/// The pairs (first definition, later definition that differs from it) of a group of
/// definitions of one object, in run order, each with whether it is an identical copy of
/// the first ([`crate::index::Index::recurring`]), where the later one is linted (context
/// objects are never reported on).
fn differing<'a>(group: &[(&'a Object, bool)]) -> impl Iterator<Item = (&'a Object, &'a Object)> {
    let first = group[0].0;
    group[1..]
        .iter()
        .filter(|(_, copy_of_first)| !copy_of_first)
        .filter_map(move |&(o, _)| match (o.context, first.context) {
            (false, _) => Some((first, o)),
            (true, false) => Some((o, first)),
            (true, true) => None,
        })
}

fn finding(first: &Object, other: &Object) -> Finding {
    let what = match other.namespace() {
        Some(ns) if !cluster_scoped(other) => {
            format!("{} \"{}\" in namespace \"{ns}\"", other.kind_name, other.name())
        }
        _ => format!("{} \"{}\"", other.kind_name, other.name()),
    };
    META.finding(
        other,
        other.name_span(),
        format!(
            "{what} is defined twice, differently: a cluster holds one {}, and applied together the later definition replaces the earlier, yet karplint judges workloads against both as if one cluster held them",
            other.kind_name
        ),
    )
    .label("a second, different definition")
    .help("keep one definition, give the other its own name, or, when each belongs to another cluster, list each cluster's directories under `clusters:` in .karplint.yaml")
    .related(first, first.name_span(), "the other definition")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pairs `differing` reports among the objects of `yaml`, by file position.
    fn pairs(yaml: &str) -> Vec<(usize, usize)> {
        let objects = crate::parse::parse_source(0, yaml, false, false).objects;
        let index = crate::index::Index::new(&objects);
        let mut out: Vec<(usize, usize)> = index
            .recurring()
            .flat_map(|g| {
                differing(&g)
                    .map(|(a, b)| (a.doc_offset, b.doc_offset))
                    .collect::<Vec<_>>()
            })
            .collect();
        out.sort();
        out
    }

    /// The API server's identity of an object (`registry/generic` `NamespaceKeyFunc` for
    /// namespaced kinds, `NoNamespaceKeyFunc` for cluster-scoped ones): a NodePool's
    /// namespace is ignored, a PodDisruptionBudget's is part of it; a copy that differs only
    /// in layout and comments is the same object.
    #[test]
    fn namespace_key_func_and_no_namespace_key_func() {
        let np = |ns: &str, weight: u32, comment: &str| {
            format!(
                "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default{ns}}}\n{comment}spec: {{weight: {weight}, template: {{spec: {{nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}, requirements: []}}}}}}\n---\n"
            )
        };
        let same = format!("{}{}", np("", 10, ""), np(", namespace: x", 10, "# a copy\n"));
        assert!(pairs(&same).is_empty(), "{same}");
        let different = format!("{}{}", np("", 10, ""), np(", namespace: x", 20, ""));
        assert_eq!(pairs(&different).len(), 1, "{different}");
        let pdb = |ns: &str, min: u32| {
            format!(
                "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: api, namespace: {ns}}}\nspec: {{minAvailable: {min}, selector: {{matchLabels: {{app: api}}}}}}\n---\n"
            )
        };
        let apart = format!("{}{}", pdb("a", 1), pdb("b", 2));
        assert!(pairs(&apart).is_empty(), "{apart}");
        let clash = format!("{}{}", pdb("a", 1), pdb("a", 2));
        assert_eq!(pairs(&clash).len(), 1, "{clash}");
    }
}
