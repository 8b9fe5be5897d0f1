//! Sources stage, kustomize: findings on a rendered kustomization pointed back at the file
//! and key each object came from.
//!
//! kustomize writes `config.kubernetes.io/origin: {path: …}` on every object it loads from a
//! file. A finding on a rendered object is moved to that file when the same key path (e.g.
//! `spec.template.spec.containers[0].resources`) holds the same value there, in the document
//! of the same kind whose name the rendered name was made from (a `namePrefix` changes the
//! name). A value a patch or an overlay set has no such place: the finding stays on the
//! rendered output, with the object's place in the file as a related location.

use crate::model::Span;
use granit_parser::{Event, Parser, StrInput};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// A node of a YAML document: its key path, the key's span, its value's span (a collection's
/// is where it starts) and, for a scalar, its value.
#[derive(Debug)]
pub(crate) struct Node {
    pub path: Vec<Seg>,
    pub key: Option<(usize, usize)>,
    pub value: (usize, usize),
    pub scalar: Option<String>,
}

enum Frame {
    Map {
        depth: usize,
        key: Option<(String, (usize, usize))>,
    },
    Seq {
        depth: usize,
        next: usize,
    },
}

/// Every node of one YAML document, in document order; empty when it does not parse.
pub(crate) fn nodes(doc: &str) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut path: Vec<Seg> = Vec::new();
    for item in Parser::new(StrInput::new(doc)) {
        let Ok((event, span)) = item else {
            return Vec::new();
        };
        let Some(range) = span.byte_range() else {
            continue;
        };
        let range = (range.start, range.end);
        let (scalar, opens) = match event {
            Event::Scalar(v, ..) => (Some(v.into_owned()), None),
            Event::MappingStart(..) => (None, Some(true)),
            Event::SequenceStart(..) => (None, Some(false)),
            Event::Alias(_) => (None, None),
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                let depth = match stack.last() {
                    Some(Frame::Map { depth, .. } | Frame::Seq { depth, .. }) => *depth,
                    None => 0,
                };
                path.truncate(depth);
                continue;
            }
            _ => continue,
        };
        // A key of a mapping: remembered for its value.
        if let Some(Frame::Map { key, .. }) = stack.last_mut()
            && key.is_none()
        {
            *key = Some((scalar.unwrap_or_default(), range));
            if opens.is_some() {
                // A complex key: its insides are not addressed.
                return out;
            }
            continue;
        }
        let (seg, key_span) = match stack.last_mut() {
            Some(Frame::Map { key, .. }) => {
                let (k, span) = key.take().unwrap_or_default();
                (Some(Seg::Key(k)), Some(span))
            }
            Some(Frame::Seq { next, .. }) => {
                *next += 1;
                (Some(Seg::Index(*next - 1)), None)
            }
            None => (None, None),
        };
        let mut node_path = path.clone();
        node_path.extend(seg);
        if let Some(map) = opens {
            path.clone_from(&node_path);
            let depth = path.len();
            stack.push(if map {
                Frame::Map { depth, key: None }
            } else {
                Frame::Seq { depth, next: 0 }
            });
        }
        out.push(Node {
            path: node_path,
            key: key_span,
            value: range,
            scalar,
        });
    }
    out
}

fn scalar_at<'n>(nodes: &'n [Node], path: &[&str]) -> Option<&'n str> {
    nodes
        .iter()
        .find(|n| {
            n.path.len() == path.len()
                && n.path
                    .iter()
                    .zip(path)
                    .all(|(s, p)| matches!(s, Seg::Key(k) if k == p))
        })
        .and_then(|n| n.scalar.as_deref())
}

/// Where in a node a span starts.
pub(crate) enum At {
    Key(usize),
    Value(usize),
}

/// The deepest node whose key or value holds `offset`.
pub(crate) fn node_at(nodes: &[Node], offset: usize) -> Option<(&Node, At)> {
    let within = |(s, e): (usize, usize)| offset == s || (s..e).contains(&offset);
    let mut best: Option<(&Node, At)> = None;
    for n in nodes {
        let hit = match n.key {
            Some(k) if within(k) => Some(At::Key(offset - k.0)),
            _ if within(n.value) => Some(At::Value(offset - n.value.0)),
            _ => None,
        };
        if let Some(at) = hit
            && best
                .as_ref()
                .is_none_or(|(b, _)| n.path.len() >= b.path.len())
        {
            best = Some((n, at));
        }
    }
    best
}

/// A rendered source: its documents and the file each came from.
#[derive(Debug)]
pub struct RenderMap {
    /// Per document of the rendered text: its range and the absolute file it came from.
    docs: Vec<(usize, usize, Option<PathBuf>)>,
    text: String,
    /// The patch files of the kustomizations, where a value the origin file lacks may be.
    patches: Vec<PathBuf>,
    /// The root's kustomization file (absolute, normal).
    root: PathBuf,
}

impl RenderMap {
    /// Reads the origin annotations of a rendered stream (paths relative to `base`) of the
    /// kustomization file `root`.
    pub fn new(text: &str, base: &Path, patches: Vec<PathBuf>, root: &Path) -> RenderMap {
        let docs = crate::parse::split_documents(text)
            .into_iter()
            .map(|(offset, doc)| {
                let ns = nodes(doc);
                let origin = scalar_at(
                    &ns,
                    &["metadata", "annotations", "config.kubernetes.io/origin"],
                )
                .and_then(origin_path)
                .map(|p| super::normal(&base.join(p)));
                (offset, offset + doc.len(), origin)
            })
            .collect();
        RenderMap {
            docs,
            text: text.to_string(),
            patches,
            root: super::normal(root),
        }
    }

    /// The root's kustomization file (absolute, normal).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where a finding goes that no file holds as rendered: the root's kustomization file,
    /// at the first of its keys that change what it renders (`patches`, …), else at its
    /// start. A place GitHub annotations and code scanning can show, unlike the rendered
    /// text.
    pub fn root_place(&self, files: &mut Files) -> (PathBuf, Span) {
        const CHANGES: [&str; 7] = [
            "patches:",
            "patchesStrategicMerge:",
            "patchesJson6902:",
            "replacements:",
            "transformers:",
            "components:",
            "resources:",
        ];
        let span = files.text(&self.root).and_then(|text| {
            CHANGES.iter().find_map(|key| {
                let at = (text.starts_with(key).then_some(0))
                    .or_else(|| text.find(&format!("\n{key}")).map(|i| i + 1))?;
                Some(Span::new(at, key.len() - 1))
            })
        });
        (self.root.clone(), span.unwrap_or(Span::new(0, 0)))
    }
}

/// The `path:` of an origin annotation's value (a small YAML mapping).
fn origin_path(annotation: &str) -> Option<String> {
    annotation
        .lines()
        .find_map(|l| l.trim().strip_prefix("path:"))
        .map(|p| p.trim().trim_matches(['"', '\'']).to_string())
        .filter(|p| !p.is_empty())
}

/// Where a span of a rendered source lands in the files.
#[derive(Debug, PartialEq, Eq)]
pub enum Mapped {
    /// The same key with the same value, in `file`.
    Exact { file: PathBuf, span: Span },
    /// The value comes from a patch or overlay; the object is at `span` of `file`.
    Object { file: PathBuf, span: Span },
}

/// Files read while remapping, once each.
#[derive(Default)]
pub struct Files {
    texts: BTreeMap<PathBuf, Option<String>>,
}

impl Files {
    pub(crate) fn text(&mut self, p: &Path) -> Option<&str> {
        self.texts
            .entry(p.to_path_buf())
            .or_insert_with(|| std::fs::read_to_string(p).ok())
            .as_deref()
    }
}

impl RenderMap {
    /// Where `span` of the rendered text came from, when its object has an origin.
    pub fn map(&self, span: Span, files: &mut Files) -> Option<Mapped> {
        let (start, end, origin) = self
            .docs
            .iter()
            .find(|(s, e, _)| (*s..=*e).contains(&span.offset))?;
        let file = origin.as_ref()?;
        let rendered = nodes(&self.text[*start..*end]);
        let kind = scalar_at(&rendered, &["kind"])?.to_string();
        let name = scalar_at(&rendered, &["metadata", "name"]).unwrap_or("");
        let text = files.text(file)?;
        let (doc_offset, source) = source_document(text, &kind, name)?;
        let object_span = object_span(&source, doc_offset);
        let Some((node, at)) = node_at(&rendered, span.offset - start) else {
            return Some(Mapped::Object {
                file: file.clone(),
                span: object_span,
            });
        };
        let twin = (source.iter())
            .find(|n| n.path == node.path)
            .filter(|_| same_items(&rendered, &source, &node.path));
        // The name, with or without a prefix, is where the file names the object.
        let is_name = node.path == [Seg::Key("metadata".into()), Seg::Key("name".into())];
        let exact = twin.and_then(|t| match at {
            At::Key(rel) => t.key.map(|k| clip(k, rel, span.len, doc_offset)),
            At::Value(rel) if t.scalar == node.scalar => {
                Some(clip(t.value, rel, span.len, doc_offset))
            }
            At::Value(_) if is_name => {
                Some(Span::new(doc_offset + t.value.0, t.value.1 - t.value.0))
            }
            At::Value(_) => None,
        });
        if let Some(span) = exact {
            return Some(Mapped::Exact {
                file: file.clone(),
                span,
            });
        }
        Some(
            self.in_patches(&kind, name, &rendered, node, &at, span.len, files)
                .unwrap_or(Mapped::Object {
                    file: file.clone(),
                    span: object_span,
                }),
        )
    }

    /// The same key with the same value in a patch of the object (found by kind and name,
    /// as kustomize matches a patch to its target).
    #[allow(clippy::too_many_arguments)]
    fn in_patches(
        &self,
        kind: &str,
        name: &str,
        rendered: &[Node],
        node: &Node,
        at: &At,
        len: usize,
        files: &mut Files,
    ) -> Option<Mapped> {
        for patch in &self.patches {
            let Some(text) = files.text(patch) else {
                continue;
            };
            let Some((doc_offset, nodes)) = source_document(text, kind, name) else {
                continue;
            };
            let Some(twin) = (nodes.iter())
                .find(|n| n.path == node.path)
                .filter(|_| same_items(rendered, &nodes, &node.path))
            else {
                continue;
            };
            let span = match *at {
                At::Key(rel) => twin.key.map(|k| clip(k, rel, len, doc_offset)),
                At::Value(rel) if twin.scalar == node.scalar => {
                    Some(clip(twin.value, rel, len, doc_offset))
                }
                At::Value(_) => None,
            };
            if let Some(span) = span {
                return Some(Mapped::Exact {
                    file: patch.clone(),
                    span,
                });
            }
        }
        None
    }
}

/// Whether each list item on `path` is the same item in both documents: where the items
/// have a `name` (containers, volumes, ports), it is equal. A patch that inserts a container
/// shifts the indices; the key path alone would then point at another container.
fn same_items(a: &[Node], b: &[Node], path: &[Seg]) -> bool {
    let name_at = |nodes: &[Node], item: &[Seg]| {
        nodes
            .iter()
            .find(|n| {
                n.path.len() == item.len() + 1
                    && n.path.starts_with(item)
                    && n.path.last() == Some(&Seg::Key("name".into()))
            })
            .and_then(|n| n.scalar.clone())
    };
    (0..path.len())
        .filter(|&i| matches!(path[i], Seg::Index(_)))
        .all(|i| name_at(a, &path[..=i]) == name_at(b, &path[..=i]))
}

/// `rel` bytes into `range`, at most `len` long and never past its end, made absolute.
fn clip(range: (usize, usize), rel: usize, len: usize, doc_offset: usize) -> Span {
    let start = (range.0 + rel).min(range.1);
    let len = len.min(range.1.saturating_sub(start));
    Span::new(doc_offset + start, len)
}

/// The document of `text` holding the object of `kind` the rendered `name` was made from:
/// the same name, else the longest name the rendered one contains (a prefix or suffix was
/// added), else the only one of that kind.
fn source_document(text: &str, kind: &str, name: &str) -> Option<(usize, Vec<Node>)> {
    let mut candidates: Vec<(usize, Vec<Node>, String)> = crate::parse::split_documents(text)
        .into_iter()
        .filter_map(|(offset, doc)| {
            let ns = nodes(doc);
            (scalar_at(&ns, &["kind"]) == Some(kind)).then(|| {
                let n = scalar_at(&ns, &["metadata", "name"])
                    .unwrap_or("")
                    .to_string();
                (offset, ns, n)
            })
        })
        .collect();
    let pick = candidates
        .iter()
        .position(|(_, _, n)| n == name)
        .or_else(|| {
            (candidates.iter().enumerate())
                .filter(|(_, (_, _, n))| !n.is_empty() && name.contains(n.as_str()))
                .max_by_key(|(_, (_, _, n))| n.len())
                .map(|(i, _)| i)
        })
        .or_else(|| (candidates.len() == 1).then_some(0))?;
    let (offset, ns, _) = candidates.swap_remove(pick);
    Some((offset, ns))
}

/// The object's name in the file, else its kind.
fn object_span(nodes: &[Node], doc_offset: usize) -> Span {
    let at = |path: &[&str]| {
        nodes.iter().find(|n| {
            n.path.len() == path.len()
                && n.path
                    .iter()
                    .zip(path)
                    .all(|(s, p)| matches!(s, Seg::Key(k) if k == p))
        })
    };
    let n = at(&["metadata", "name"]).or_else(|| at(&["kind"]));
    n.map_or(Span::new(doc_offset, 0), |n| {
        Span::new(doc_offset + n.value.0, n.value.1 - n.value.0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          image: nginx\n          resources:\n            requests: {cpu: 100m}\n";

    #[test]
    fn key_paths_follow_mappings_and_sequences() {
        let ns = nodes(BASE);
        let image = ns
            .iter()
            .find(|n| n.scalar.as_deref() == Some("nginx"))
            .unwrap();
        assert_eq!(
            image.path,
            vec![
                Seg::Key("spec".into()),
                Seg::Key("template".into()),
                Seg::Key("spec".into()),
                Seg::Key("containers".into()),
                Seg::Index(0),
                Seg::Key("image".into()),
            ]
        );
        assert_eq!(&BASE[image.value.0..image.value.1], "nginx");
        let cpu = ns
            .iter()
            .find(|n| n.scalar.as_deref() == Some("100m"))
            .unwrap();
        assert_eq!(&BASE[cpu.key.unwrap().0..cpu.key.unwrap().1], "cpu");
    }

    #[test]
    fn a_rendered_value_maps_to_the_same_key_in_its_origin_and_a_patched_one_to_the_object() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("base")).unwrap();
        std::fs::write(dir.path().join("base/deploy.yaml"), BASE).unwrap();
        let rendered = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n      path: base/deploy.yaml\n  name: prod-web\n  namespace: prod\nspec:\n  template:\n    spec:\n      containers:\n      - image: nginx\n        name: web\n        resources:\n          requests:\n            cpu: 100m\n      nodeSelector:\n        tier: gold\n";
        let map = RenderMap::new(
            rendered,
            dir.path(),
            Vec::new(),
            &dir.path().join("kustomization.yaml"),
        );
        let mut files = Files::default();
        let at = |needle: &str| Span::new(rendered.find(needle).unwrap(), needle.len());
        let file = super::super::normal(&dir.path().join("base/deploy.yaml"));
        let Some(Mapped::Exact { file: f, span }) = map.map(at("100m"), &mut files) else {
            panic!("not exact")
        };
        assert_eq!(f, file);
        assert_eq!(&BASE[span.offset..span.offset + span.len], "100m");
        let Some(Mapped::Object { span, .. }) = map.map(at("tier"), &mut files) else {
            panic!("not the object")
        };
        assert_eq!(&BASE[span.offset..span.offset + span.len], "web");
    }
}
