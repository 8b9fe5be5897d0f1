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
    without_spans(format_args!("{} {meta:?} {:?}", o.api_version, o.body))
}

impl std::fmt::Display for Identity {
    /// `Deployment "web"`, as the run's notes name objects.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} \"{}\"", self.kind, self.name)
    }
}

/// In each group of indices, the (first, later) pairs of those whose `print` equals an
/// earlier one's: a later index is paired with the first of its print. `same(a, b)` may
/// tell that two indices print alike without printing them, and must never say so of two
/// that print differently: an index is printed only when `same` does not pair it with a
/// first. The groups are handled in parallel; pairs come group by group, in each in index
/// order.
pub(crate) fn repeats(
    groups: &[Vec<usize>],
    same: impl Fn(usize, usize) -> bool + Sync,
    print: impl Fn(usize) -> String + Sync,
) -> Vec<(usize, usize)> {
    use rayon::prelude::*;
    (groups.par_iter())
        .flat_map_iter(|group| {
            let mut firsts: Vec<(usize, Option<String>)> = Vec::new();
            let mut pairs = Vec::new();
            for &i in group {
                // The firsts print apart: one `same` as `i` is the first of its print.
                if let Some(&(first, _)) = firsts.iter().find(|(first, _)| same(*first, i)) {
                    pairs.push((first, i));
                    continue;
                }
                let own = print(i);
                let mut found = None;
                for (first, printed) in &mut firsts {
                    if *printed.get_or_insert_with(|| print(*first)) == own {
                        found = Some(*first);
                        break;
                    }
                }
                match found {
                    Some(first) => pairs.push((first, i)),
                    None => firsts.push((i, Some(own))),
                }
            }
            pairs
        })
        .collect()
}

/// `args` (a `Debug` rendering) written without the numbers of its `offset: N` and `len: N`
/// fields ([`SpanFree`]).
pub(crate) fn without_spans(args: std::fmt::Arguments) -> String {
    let mut out = SpanFree(String::new());
    // Writing into a `String` does not fail.
    let _ = std::fmt::Write::write_fmt(&mut out, args);
    out.0
}

/// A `String` that drops the number written right after `offset: ` or `len: `: a derived
/// `Debug` writes a field's name, then `: `, then its value, each in a call of its own.
struct SpanFree(String);

impl std::fmt::Write for SpanFree {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let number = s.bytes().next().is_some_and(|b| b.is_ascii_digit())
            && s.bytes().all(|b| b.is_ascii_digit());
        if !(number && (self.0.ends_with("offset: ") || self.0.ends_with("len: "))) {
            self.0.push_str(s);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_pair_each_later_index_with_the_first_of_its_print() {
        let groups = vec![vec![0, 1, 2, 3], vec![4, 5], vec![6]];
        let prints = ["a", "b", "a", "b", "c", "d", "e"];
        let pairs = repeats(&groups, |_, _| false, |i| prints[i].to_string());
        assert_eq!(pairs, vec![(0, 2), (1, 3)]);
    }

    #[test]
    fn repeats_print_only_what_same_does_not_pair() {
        let groups = vec![vec![0, 1, 2, 3, 4]];
        let values = [1, 1, 2, 2, 1];
        let printed = std::sync::Mutex::new(Vec::new());
        let print = |i: usize| {
            printed.lock().unwrap().push(i);
            values[i].to_string()
        };
        // Equal values print alike; 3 is told apart from 0 by its print only.
        let pairs = repeats(&groups, |a, b| values[a] == values[b] && b != 3, print);
        assert_eq!(pairs, vec![(0, 1), (2, 3), (0, 4)]);
        let mut printed = printed.into_inner().unwrap();
        printed.sort_unstable();
        // 2 against 0, then 3 against 0 and 2: 0, 2 and 3 printed once each, 1 and 4 never.
        assert_eq!(printed, vec![0, 2, 3]);
    }

    #[test]
    fn spans_are_left_out_of_the_fingerprint() {
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Field {
            offset: usize,
            len: usize,
            text: &'static str,
        }
        let f = |offset, len| Field {
            offset,
            len,
            text: "offset: 5",
        };
        assert_eq!(
            without_spans(format_args!("{:?} {:?}", f(12, 3), f(7, 0))),
            "Field { offset: , len: , text: \"offset: 5\" } Field { offset: , len: , text: \"offset: 5\" }"
        );
        let object = |yaml| crate::parse::parse_source(0, yaml, false, false).objects;
        let a = object("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n");
        let b = object("# moved\napiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n");
        let c = object("apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n");
        assert_eq!(fingerprint(&a[0]), fingerprint(&b[0]));
        assert_ne!(fingerprint(&a[0]), fingerprint(&c[0]));
    }
}
