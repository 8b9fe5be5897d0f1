//! Model stage: which object of the cluster a definition is. The API server holds one
//! object per kind and name (and namespace, for namespaced kinds): two definitions with the
//! same [`Identity`] are one object, which the index reads once when they are the same in
//! every field karplint reads ([`fingerprint`]) and `duplicate-object` reports when not.

use super::{Kind, Object};

/// Which object of the cluster a definition is: its API group and kind, its namespace
/// (namespaced kinds only) and its name.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct Identity {
    group: String,
    kind: String,
    namespace: Option<String>,
    name: String,
}

/// The identity of a held object the API server stores; `None` for the workloads linted
/// file by file (all but DaemonSets), eksctl configs and Lists, which are not objects of
/// the cluster, and objects without a name.
pub(crate) fn identity(o: &Object) -> Option<Identity> {
    if o.kind.is_streamed() || matches!(o.kind, Kind::ClusterConfig | Kind::List) {
        return None;
    }
    definition(o)
}

/// The identity of any named object, workloads among them.
pub(crate) fn definition(o: &Object) -> Option<Identity> {
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
pub(crate) fn cluster_scoped(o: &Object) -> bool {
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
        | Kind::EksNodeClass
        | Kind::NodeOverlay => true,
        // Karpenter's other kinds (NodeClaim, Machine) are cluster-scoped.
        Kind::Other => o.karpenter_api().is_some(),
        _ => false,
    }
}

/// What karplint reads of a definition, without where it stands: its `apiVersion`,
/// metadata (but the namespace) and body with every byte offset and length left out, so that copies that
/// differ only in layout or comments compare equal.
pub(crate) fn fingerprint(o: &Object) -> String {
    // A cluster-scoped object's namespace is ignored; a namespaced one's is its identity.
    let mut meta = o.meta.clone();
    meta.namespace = None;
    let text = format!("{} {meta:?} {:?}", o.api_version, o.body);
    without_spans(&text)
}

impl std::fmt::Display for Identity {
    /// `Deployment "web"`, as the run's notes name objects.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} \"{}\"", self.kind, self.name)
    }
}

/// `text` (a `Debug` rendering) without the numbers of its `offset: N` and `len: N` fields.
pub(crate) fn without_spans(text: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_left_out_of_the_fingerprint() {
        assert_eq!(
            without_spans("Spanned { value: \"a\", offset: 12, len: 3 } offset: 7"),
            "Spanned { value: \"a\", offset: , len:  } offset: "
        );
    }
}
