//! The run phase, rendered sources: findings on a rendered kustomization moved to the files
//! its objects came from ([`crate::kustomize::remap`]), and findings on `helm template`
//! output read from standard input moved to the chart templates ([`crate::helm`]), before
//! suppressions are read there. A finding on a value no file holds as rendered (set by a
//! patch the map cannot follow, a generator) moves to the root's kustomization file: never
//! the rendered text, which GitHub annotations and code scanning cannot place.

use crate::diagnostic::{Finding, Related};
use crate::helm::{Charts, HelmMap};
use crate::kustomize::remap::{Files, Mapped, RenderMap};
use crate::model::Span;
use crate::report::Source;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What [`remap`] leaves besides the findings: the sources the findings now point at that
/// the run did not have, numbered after its sources, and the templates of `helm template`
/// output that no chart under the working directory holds.
#[derive(Default)]
pub(super) struct Remapped {
    pub sources: Vec<Source>,
    pub missing_templates: std::collections::BTreeSet<String>,
}

/// Moves each finding, related location and alternative place on a rendered source to its
/// file (a finding no file holds as rendered to the root's kustomization file), and keeps
/// one of the findings that then say the same at the same place (two overlays of one base);
/// `has_suppressions` grows with the sources added.
pub(super) fn remap(
    findings: &mut Vec<Finding>,
    renders: &[(usize, RenderMap)],
    helm: &[(usize, HelmMap<'_>)],
    sources: &[Source],
    has_suppressions: &mut Vec<bool>,
) -> Remapped {
    if renders.is_empty() && helm.is_empty() {
        return Remapped::default();
    }
    let normal = crate::discover::Normal::here();
    let mut m = Mover {
        renders: renders.iter().map(|(id, m)| (*id, m)).collect(),
        helm: helm.iter().map(|(id, m)| (*id, m)).collect(),
        charts: Charts::default(),
        missing: Default::default(),
        files: Files::default(),
        known: (sources.iter().enumerate())
            .filter_map(|(id, s)| Some((normal.of(s.path()?), id)))
            .collect(),
        added: Vec::new(),
        next: sources.len(),
    };
    for f in findings.iter_mut() {
        match m.land(f.source, f.span) {
            None => {}
            Some(Landing::Exact(source, span)) => {
                f.rendered_at = Some((f.source, f.span));
                (f.source, f.span) = (source, span);
            }
            Some(Landing::Writes(source, span)) => {
                // The template computes the value: the finding stands where it is written,
                // and shows it as rendered.
                f.related.push(Related {
                    source: f.source,
                    span: f.span,
                    message: "as `helm template` rendered it".into(),
                });
                f.rendered_at = Some((f.source, f.span));
                (f.source, f.span) = (source, span);
            }
            Some(Landing::Root { root, object }) => {
                // No file holds the value as rendered: the finding stands on the
                // kustomization that renders it, and names the object it came from.
                f.rendered_at = Some((f.source, f.span));
                (f.source, f.span) = root;
                if let Some((source, span)) = object {
                    f.related.push(Related {
                        source,
                        span,
                        message:
                            "the object this was rendered from; a patch or overlay sets the value"
                                .into(),
                    });
                }
            }
        }
        for r in &mut f.related {
            if let Some(Landing::Exact(source, span)) = m.land(r.source, r.span) {
                (r.source, r.span) = (source, span);
            }
        }
        for p in &mut f.also_on {
            if let Some(Landing::Exact(source, span)) = m.land(p.source, p.span) {
                (p.source, p.span) = (source, span);
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    findings.retain(|f| seen.insert((f.rule, f.source, f.span, f.message.clone())));
    for s in &m.added {
        let text = s.path().and_then(|p| std::fs::read_to_string(p).ok());
        has_suppressions.push(text.is_some_and(|t| t.contains(crate::suppress::MARKER)));
    }
    Remapped {
        sources: m.added,
        missing_templates: m.missing,
    }
}

struct Mover<'r> {
    renders: BTreeMap<usize, &'r RenderMap>,
    helm: BTreeMap<usize, &'r HelmMap<'r>>,
    charts: Charts,
    /// Templates `helm template` output names that no chart holds.
    missing: std::collections::BTreeSet<String>,
    files: Files,
    /// Sources the run has, by normal path.
    known: BTreeMap<PathBuf, usize>,
    added: Vec<Source>,
    next: usize,
}

/// Where a place of a rendered source lands in the files.
enum Landing {
    /// The same key and value, at this source and span.
    Exact(usize, Span),
    /// The place of a template that computes the value.
    Writes(usize, Span),
    /// No file holds it as rendered: the root kustomization's place, and the object's
    /// place in its file when known.
    Root {
        root: (usize, Span),
        object: Option<(usize, Span)>,
    },
}

impl Mover<'_> {
    /// Where `span` of `source` lands; `None` when `source` is not a rendered one.
    fn land(&mut self, source: usize, span: Span) -> Option<Landing> {
        if let Some(map) = self.helm.get(&source) {
            return match map.map(span, &mut self.charts, &mut self.files)? {
                crate::helm::Mapped::Exact { file, span } => {
                    Some(Landing::Exact(self.id(file), span))
                }
                crate::helm::Mapped::Writes { file, span } => {
                    Some(Landing::Writes(self.id(file), span))
                }
                crate::helm::Mapped::NotFound(template) => {
                    self.missing.insert(template);
                    None
                }
            };
        }
        let map = self.renders.get(&source)?;
        Some(match map.map(span, &mut self.files) {
            Some(Mapped::Exact { file, span }) => Landing::Exact(self.id(file), span),
            Some(Mapped::Object { file, span }) => {
                let (root, at) = map.root_place(&mut self.files);
                Landing::Root {
                    root: (self.id(root), at),
                    object: Some((self.id(file), span)),
                }
            }
            None => {
                let (root, at) = map.root_place(&mut self.files);
                Landing::Root {
                    root: (self.id(root), at),
                    object: None,
                }
            }
        })
    }

    /// The source id of `file`, added to the run's sources when new.
    fn id(&mut self, file: PathBuf) -> usize {
        if let Some(id) = self.known.get(&file) {
            return *id;
        }
        let id = self.next;
        self.next += 1;
        self.added.push(Source::file(display(&file), false));
        self.known.insert(file, id);
        id
    }
}

/// A file's path as the report shows it: relative to the working directory when under it.
fn display(p: &std::path::Path) -> PathBuf {
    let cwd = std::env::current_dir().map(|d| crate::kustomize::normal(&d));
    match cwd.as_ref().ok().and_then(|d| p.strip_prefix(d).ok()) {
        Some(rel) => rel.to_path_buf(),
        None => p.to_path_buf(),
    }
}
