//! Suppressions, applied between the rules and the report: the object annotation
//! `karplint.io/ignore: "rule-a,rule-b"` (or `all`) on an object or its pod template, the
//! comment `# karplint-ignore: rule-a, rule-b` on the line above the offending key or at
//! the end of its line, and `# karplint-ignore-file: rule-a` anywhere in a file.
//!
//! Comments are not in the typed model, so they are found in the text; to keep no file's
//! text around, the parse step only notes which sources contain `karplint-ignore`, and only
//! those are read again here. A suppression that hides nothing becomes an
//! `unused-suppression` finding at its span, so stale ones do not pile up.

use crate::diagnostic::{Finding, ObjectRef, Severity};
use crate::model::{Object, SourceId, Span};
use crate::report::{self, Source};
use std::collections::BTreeMap;

/// The annotation key.
pub const ANNOTATION: &str = "karplint.io/ignore";
/// The rule id of stale suppressions.
pub const UNUSED: &str = "unused-suppression";
/// The marker every comment form contains: sources without it are never read again.
pub const MARKER: &str = "karplint-ignore";

#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    /// Findings on one object: its source, document offset and reference.
    Object {
        doc_offset: usize,
        object: ObjectRef,
    },
    /// Findings whose primary span starts on one of these 1-based lines.
    Lines(Vec<usize>),
    File,
}

#[derive(Debug)]
struct Suppression {
    source: SourceId,
    scope: Scope,
    /// `(rule id or "all", span, used)`.
    ids: Vec<(String, Span, bool)>,
    object: Option<ObjectRef>,
}

/// What suppression did to a run's findings.
#[derive(Debug, Default)]
pub struct Applied {
    pub findings: Vec<Finding>,
    /// Findings hidden by a suppression.
    pub suppressed: Vec<Finding>,
}

/// The `karplint.io/ignore` annotations of a run's linted objects. Gathered as objects are
/// parsed: most objects are dropped long before the run's findings are all known.
#[derive(Debug, Default)]
pub struct Annotations(Vec<Suppression>);

impl Annotations {
    pub fn add(&mut self, objects: &[Object]) {
        self.0.extend(annotation_suppressions(objects));
    }

    /// Adds what another part of the run gathered.
    pub fn merge(&mut self, other: Annotations) {
        self.0.extend(other.0);
    }
}

/// Removes suppressed findings and reports unused suppressions. `scan[id]` is true for the
/// sources whose text contains [`MARKER`]; `known` are the rule ids a suppression may name.
pub fn apply(
    findings: Vec<Finding>,
    annotations: Annotations,
    sources: &[Source],
    scan: &[bool],
    known: &[&str],
) -> Applied {
    let mut sups = annotations.0;
    // Source order, each file's in document order, whatever order the files were parsed in.
    sups.sort_by_key(|s| match s.scope {
        Scope::Object { doc_offset, .. } => (s.source, doc_offset),
        _ => (s.source, usize::MAX),
    });
    // Document starts of the sources with annotations, to tell which document a finding is
    // in: from the text, as the objects are gone.
    let mut docs: BTreeMap<SourceId, Vec<usize>> = BTreeMap::new();
    for s in &sups {
        docs.entry(s.source).or_insert_with(|| {
            let text = sources[s.source].reread();
            let base = if text.starts_with('\u{feff}') { 3 } else { 0 };
            crate::parse::split_documents(&text[base..])
                .into_iter()
                .map(|(offset, _)| base + offset)
                .collect()
        });
    }
    let mut texts: BTreeMap<SourceId, String> = BTreeMap::new();
    for (id, src) in sources.iter().enumerate() {
        if src.context || !scan.get(id).copied().unwrap_or(false) {
            continue;
        }
        let text = src.reread();
        sups.extend(comment_suppressions(id, &text));
        texts.insert(id, text);
    }
    if sups.is_empty() {
        return Applied {
            findings,
            suppressed: Vec::new(),
        };
    }
    let mut out = Applied::default();
    for f in findings {
        let line = texts.get(&f.source).map(|t| {
            let sp = report::widen(t, f.span);
            report::line_col(t, sp.offset).0
        });
        let doc = docs
            .get(&f.source)
            .and_then(|v| v.iter().rev().find(|&&d| d <= f.span.offset).copied());
        let mut hit = false;
        for s in sups.iter_mut().filter(|s| s.source == f.source) {
            let applies = match &s.scope {
                Scope::File => true,
                Scope::Lines(lines) => line.is_some_and(|l| lines.contains(&l)),
                Scope::Object { doc_offset, object } => {
                    doc == Some(*doc_offset) && f.object.as_deref() == Some(object)
                }
            };
            if !applies {
                continue;
            }
            for (id, _, used) in &mut s.ids {
                if id == "all" || id == f.rule {
                    *used = true;
                    hit = true;
                }
            }
        }
        if hit {
            out.suppressed.push(f);
        } else {
            out.findings.push(f);
        }
    }
    for s in &sups {
        for (id, span, used) in &s.ids {
            if *used {
                continue;
            }
            let (message, help) = if id == "all" || known.contains(&id.as_str()) {
                (
                    format!("suppression of `{id}` matched no finding"),
                    "remove the suppression; the finding it was written for is gone",
                )
            } else {
                (
                    format!("suppression names unknown rule `{id}`"),
                    "fix the rule id (`karplint rules` lists them) or remove the suppression",
                )
            };
            let mut f = Finding::at_source(UNUSED, Severity::Info, s.source, *span, message)
                .label("unused suppression")
                .help(help);
            f.object = s.object.clone().map(Box::new);
            out.findings.push(f);
        }
    }
    out
}

fn annotation_suppressions(objects: &[Object]) -> Vec<Suppression> {
    let mut out = Vec::new();
    for o in objects.iter().filter(|o| !o.context) {
        let template = o.workload().map(|w| &w.template.metadata.annotations);
        for ann in std::iter::once(&o.meta.annotations).chain(template) {
            let Some((_, v)) = ann.entry(ANNOTATION) else {
                continue;
            };
            let span = o.span(v);
            let value = v.value.as_str();
            // Where the value's text starts inside the scalar: after a quote, or at once.
            let inner = match span.len.checked_sub(value.len()) {
                Some(0) => Some(span.offset),
                Some(2) => Some(span.offset + 1),
                _ => None,
            };
            let mut ids: Vec<(String, Span, bool)> = Vec::new();
            let mut at = 0;
            for piece in value.split(',') {
                let id = piece.trim();
                if !id.is_empty() {
                    let lead = piece.len() - piece.trim_start().len();
                    let sp = inner.map_or(span, |i| Span::new(i + at + lead, id.len()));
                    ids.push((id.to_string(), sp, false));
                }
                at += piece.len() + 1;
            }
            if ids.is_empty() {
                ids.push(("all".to_string(), span, false));
            }
            out.push(Suppression {
                source: o.source,
                scope: Scope::Object {
                    doc_offset: o.doc_offset,
                    object: ObjectRef::of(o),
                },
                ids,
                object: Some(ObjectRef::of(o)),
            });
        }
    }
    out
}

/// Finds `# karplint-ignore[-file]: ids` comments. A `#` starts a comment at the start of a
/// line or after whitespace; text after an id and a space (`rule-a -- reason`) is a reason.
fn comment_suppressions(source: SourceId, text: &str) -> Vec<Suppression> {
    let lines: Vec<(usize, &str)> = {
        let mut off = 0;
        text.split_inclusive('\n')
            .map(|l| {
                let start = off;
                off += l.len();
                (start, l.trim_end_matches(['\n', '\r']))
            })
            .collect()
    };
    let mut out = Vec::new();
    for (i, (start, line)) in lines.iter().enumerate() {
        let Some(hash) = comment_start(line) else {
            continue;
        };
        let after_hash = &line[hash + 1..];
        let body = after_hash.trim_start();
        let body_off = start + hash + 1 + (after_hash.len() - body.len());
        let (file, rest, rest_off) = if let Some(r) = body.strip_prefix("karplint-ignore-file") {
            (true, r, body_off + "karplint-ignore-file".len())
        } else if let Some(r) = body.strip_prefix("karplint-ignore") {
            (false, r, body_off + "karplint-ignore".len())
        } else {
            continue;
        };
        let comment_span = Span::new(start + hash, line.len() - hash);
        let ids: Vec<(String, Span, bool)> = match rest.strip_prefix(':') {
            None if rest.trim().is_empty() => vec![("all".into(), comment_span, false)],
            None => continue,
            Some(list) => {
                let mut ids = Vec::new();
                let mut off = rest_off + 1;
                for piece in list.split(',') {
                    let lead = piece.len() - piece.trim_start().len();
                    let word = piece.split_whitespace().next().unwrap_or("");
                    if !word.is_empty() {
                        ids.push((word.to_string(), Span::new(off + lead, word.len()), false));
                    }
                    off += piece.len() + 1;
                    if piece.trim().contains(char::is_whitespace) {
                        break; // the rest is a reason
                    }
                }
                if ids.is_empty() {
                    vec![("all".into(), comment_span, false)]
                } else {
                    ids
                }
            }
        };
        let scope = if file {
            Scope::File
        } else if line[..hash].trim().is_empty() {
            // A comment on its own line covers the next line that holds YAML.
            let next = lines[i + 1..]
                .iter()
                .position(|(_, l)| {
                    let t = l.trim();
                    !t.is_empty() && !t.starts_with('#')
                })
                .map(|p| i + 1 + p + 1);
            match next {
                Some(n) => Scope::Lines(vec![n]),
                None => Scope::Lines(Vec::new()),
            }
        } else {
            Scope::Lines(vec![i + 1])
        };
        out.push(Suppression {
            source,
            scope,
            ids,
            object: None,
        });
    }
    out
}

/// Byte index of the `#` that opens a karplint comment on this line, if any.
fn comment_start(line: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = line[from..].find(MARKER) {
        let at = from + p;
        let before = line[..at].trim_end();
        if let Some(h) = before.strip_suffix('#').map(str::len)
            && (h == 0 || line[..h].ends_with([' ', '\t']))
        {
            return Some(h);
        }
        from = at + MARKER.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<Suppression> {
        comment_suppressions(0, text)
    }

    #[test]
    fn own_line_comment_covers_next_yaml_line() {
        let s = parse("a: 1\n# karplint-ignore: rule-a, rule-b\n\n  b: 2\n");
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].scope, Scope::Lines(vec![4]));
        let ids: Vec<_> = s[0].ids.iter().map(|i| i.0.as_str()).collect();
        assert_eq!(ids, ["rule-a", "rule-b"]);
        let text = "a: 1\n# karplint-ignore: rule-a, rule-b\n\n  b: 2\n";
        let sp = s[0].ids[1].1;
        assert_eq!(&text[sp.offset..sp.offset + sp.len], "rule-b");
    }

    #[test]
    fn trailing_comment_covers_its_line() {
        let s = parse("a: 1\nb: 2  # karplint-ignore: rule-a -- known, fixed later\n");
        assert_eq!(s[0].scope, Scope::Lines(vec![2]));
        assert_eq!(s[0].ids.len(), 1);
    }

    #[test]
    fn file_comment_and_non_comments() {
        let s = parse("# karplint-ignore-file: all\nx: \"a#karplint-ignore: b\"\n");
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].scope, Scope::File);
        assert_eq!(s[0].ids[0].0, "all");
    }
}
