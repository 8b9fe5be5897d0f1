//! The run phase, kustomize: findings on a rendered kustomization moved to the files its
//! objects came from ([`crate::kustomize::remap`]), before suppressions are read there.

use crate::diagnostic::{Finding, Related};
use crate::kustomize::remap::{Files, Mapped, RenderMap};
use crate::model::Span;
use crate::report::Source;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Moves each finding, related location and alternative place on a rendered source to its
/// file, and keeps one of the findings that then say the same at the same place (two
/// overlays of one base). Returns the sources the findings now point at that the run did
/// not have, numbered after `sources`; `has_suppressions` grows with them.
pub(super) fn remap(
    findings: &mut Vec<Finding>,
    renders: &[(usize, RenderMap)],
    sources: &[Source],
    has_suppressions: &mut Vec<bool>,
) -> Vec<Source> {
    if renders.is_empty() {
        return Vec::new();
    }
    let mut m = Mover {
        renders: renders.iter().map(|(id, m)| (*id, m)).collect(),
        files: Files::default(),
        known: (sources.iter().enumerate())
            .filter_map(|(id, s)| Some((crate::kustomize::normal(s.path()?), id)))
            .collect(),
        added: Vec::new(),
        next: sources.len(),
    };
    for f in findings.iter_mut() {
        if let Some((source, span, exact)) = m.place(f.source, f.span) {
            if !exact {
                f.related.push(Related {
                    source,
                    span,
                    message: "the object this was rendered from; a patch or overlay sets the value"
                        .into(),
                });
            } else {
                f.rendered_at = Some((f.source, f.span));
                (f.source, f.span) = (source, span);
            }
        }
        for r in &mut f.related {
            if let Some((source, span, true)) = m.place(r.source, r.span) {
                (r.source, r.span) = (source, span);
            }
        }
        for p in &mut f.also_on {
            if let Some((source, span, true)) = m.place(p.source, p.span) {
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
    m.added
}

struct Mover<'r> {
    renders: BTreeMap<usize, &'r RenderMap>,
    files: Files,
    /// Sources the run has, by normal path.
    known: BTreeMap<PathBuf, usize>,
    added: Vec<Source>,
    next: usize,
}

impl Mover<'_> {
    /// Where `span` of `source` lands: a source id, a span, and whether it is the same key
    /// and value (else the object's place).
    fn place(&mut self, source: usize, span: Span) -> Option<(usize, Span, bool)> {
        let map = self.renders.get(&source)?;
        let (file, span, exact) = match map.map(span, &mut self.files)? {
            Mapped::Exact { file, span } => (file, span, true),
            Mapped::Object { file, span } => (file, span, false),
        };
        let id = match self.known.get(&file) {
            Some(id) => *id,
            None => {
                let id = self.next;
                self.next += 1;
                self.known.insert(file.clone(), id);
                self.added.push(Source::file(display(&file), false));
                id
            }
        };
        Some((id, span, exact))
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
