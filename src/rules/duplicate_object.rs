//! `duplicate-object`: two different definitions of one object in the same run. The API
//! server holds one object per kind and name (and namespace, for namespaced kinds): applied
//! together, the later definition replaces the earlier. karplint reads both, so workloads
//! are judged against NodePools, node classes or budgets no single cluster holds at once.
//! Copies the same in every field karplint reads are one object and are not reported.
//! Workloads are linted file by file and are not compared.

use super::{Context, Rule};
use crate::diagnostic::Finding;
use crate::facts::Workloads;
use crate::model::{Kind, Object};
use std::collections::HashMap;

declare_rule!(
    DuplicateObject,
    "duplicate-object",
    Warning,
    "two different definitions of the same object in one run: a cluster holds one, and karplint judges workloads against both"
);

impl Rule for DuplicateObject {
    fn check_run(&self, cx: &Context, _workloads: &Workloads, out: &mut Vec<Finding>) {
        let mut by_identity: HashMap<Identity, Vec<&Object>> = HashMap::new();
        for o in cx.index.objects() {
            if let Some(id) = identity(o) {
                by_identity.entry(id).or_default().push(o);
            }
        }
        let mut groups: Vec<Vec<&Object>> = by_identity
            .into_values()
            .filter(|g| g.len() > 1)
            .collect();
        groups.sort_by_key(|g| g[0].id);
        for group in groups {
            out.extend(differing(&group).map(|(first, other)| finding(first, other)));
        }
    }
}

/// Which object of the cluster a definition is: its API group and kind, its namespace
/// (namespaced kinds only) and its name.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Identity {
    group: String,
    kind: String,
    namespace: Option<String>,
    name: String,
}

/// The identity of a held object the API server stores; `None` for workloads (linted file
/// by file), eksctl configs and Lists, which are not objects of the cluster, and objects
/// without a name.
fn identity(o: &Object) -> Option<Identity> {
    if o.kind.is_workload() || matches!(o.kind, Kind::ClusterConfig | Kind::List) {
        return None;
    }
    let name = o.meta.name.as_ref()?.value.to_string();
    let group = (o.api_version.rsplit_once('/')).map_or("", |(g, _)| g);
    Some(Identity {
        group: group.to_string(),
        kind: o.kind_name.to_string(),
        namespace: (!cluster_scoped(o)).then(|| o.effective_namespace().to_string()),
        name,
    })
}

/// Kinds without a namespace: the API server ignores a `metadata.namespace` on them.
fn cluster_scoped(o: &Object) -> bool {
    match o.kind {
        Kind::Namespace
        | Kind::Node
        | Kind::PersistentVolume
        | Kind::StorageClass
        | Kind::RuntimeClass
        | Kind::NodePool
        | Kind::Provisioner
        | Kind::EC2NodeClass
        | Kind::AWSNodeTemplate
        | Kind::EksNodeClass => true,
        // Karpenter's other kinds (NodeOverlay, NodeClaim, Machine) are cluster-scoped.
        Kind::Other => o.karpenter_api().is_some(),
        _ => false,
    }
}

/// What karplint reads of a definition, without where it stands: its `apiVersion`,
/// metadata (but the namespace) and body with every byte offset and length left out, so that copies that
/// differ only in layout or comments compare equal.
fn fingerprint(o: &Object) -> String {
    // A cluster-scoped object's namespace is ignored; a namespaced one's is its identity.
    let mut meta = o.meta.clone();
    meta.namespace = None;
    let text = format!("{} {meta:?} {:?}", o.api_version, o.body);
    without_spans(&text)
}

/// `text` (a `Debug` rendering) without the numbers of its `offset: N` and `len: N` fields.
fn without_spans(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = ["offset: ", "len: "]
        .iter()
        .filter_map(|f| rest.find(f).map(|p| (p, f.len())))
        .min()
    {
        let (at, field) = at;
        out.push_str(&rest[..at + field]);
        rest = rest[at + field..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// The pairs (first definition, later definition that differs from it) of a group of
/// definitions of one object, in run order, where the later one is linted (context
/// objects are never reported on).
fn differing<'a>(group: &[&'a Object]) -> impl Iterator<Item = (&'a Object, &'a Object)> {
    let first = group[0];
    let print = fingerprint(first);
    group[1..]
        .iter()
        .filter(move |o| fingerprint(o) != print)
        .filter_map(move |&o| match (o.context, first.context) {
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
    .help("keep one definition, give the other its own name, or lint each cluster's directory in its own run (with its own --context)")
    .related(first, first.name_span(), "the other definition")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pairs `differing` reports among the objects of `yaml`, by file position.
    fn pairs(yaml: &str) -> Vec<(usize, usize)> {
        let objects = crate::parse::parse_source(0, yaml, false, false).objects;
        let mut groups: HashMap<Identity, Vec<&Object>> = HashMap::new();
        for o in &objects {
            if let Some(id) = identity(o) {
                groups.entry(id).or_default().push(o);
            }
        }
        let mut out: Vec<(usize, usize)> = groups
            .values()
            .flat_map(|g| differing(g).map(|(a, b)| (a.doc_offset, b.doc_offset)))
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

    #[test]
    fn spans_are_left_out_of_the_fingerprint() {
        assert_eq!(
            without_spans("Spanned { value: \"a\", offset: 12, len: 3 } offset: 7"),
            "Spanned { value: \"a\", offset: , len:  } offset: "
        );
    }
}
