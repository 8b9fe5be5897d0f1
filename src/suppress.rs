//! Suppressions, applied between the rules and the report: the object annotation
//! `karplint.io/ignore: "rule-a,rule-b"` (or `all`) on an object or its pod template, the
//! comment `# karplint-ignore: rule-a, rule-b` on the line above the offending key or at
//! the end of its line, and `# karplint-ignore-file: rule-a` anywhere in a file.
//!
//! Comments are not in the typed model, so they are read here from the parser's comment
//! events (a `# karplint-ignore` inside a string or block scalar is text, not a comment);
//! to keep no file's text around, the parse step only notes which sources contain
//! `karplint-ignore`, and only those are read again here. Each text's line index is built
//! once, and suppressions are looked up by file, line and document, so matching costs work
//! in proportion to the text and the findings. A suppression that hides nothing becomes an
//! `unused-suppression` finding at its span, so stale ones do not pile up.

use crate::diagnostic::{Finding, ObjectRef, Severity};
use crate::model::{Object, SourceId, Span};
use crate::report::{self, Source};
use std::collections::{BTreeMap, HashMap};

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

    /// Keeps the annotations of the sources `keep` names: a file two clusters read is
    /// suppressed by its annotations once.
    pub fn keep_sources(&mut self, keep: impl Fn(SourceId) -> bool) {
        self.0.retain(|s| keep(s.source));
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
    let mut texts: BTreeMap<SourceId, Text> = BTreeMap::new();
    for (id, src) in sources.iter().enumerate() {
        if src.context || !scan.get(id).copied().unwrap_or(false) {
            continue;
        }
        let text = Text::new(src.reread());
        sups.extend(comment_suppressions(id, &text));
        texts.insert(id, text);
    }
    if sups.is_empty() {
        return Applied {
            findings,
            suppressed: Vec::new(),
        };
    }
    let mut table = Table::new(sups, sources);
    let mut out = Applied::default();
    for f in findings {
        match table.place(f, &texts) {
            (f, false) => out.findings.push(f),
            (f, true) => out.suppressed.push(f),
        }
    }
    let unused = table.unused(known, &out.findings, &texts);
    out.findings.extend(unused);
    out
}

/// How many lines away a finding may be for an unused comment to name it.
const NEAR: usize = 10;

/// Where the finding of `rule` (any rule for `all`) nearest to the lines a comment covers
/// is, when one is within [`NEAR`] lines: its 1-based line.
fn nearest_finding(
    rule: &str,
    source: SourceId,
    covered: &[usize],
    findings: &[Finding],
    text: &Text,
) -> Option<usize> {
    let &at = covered.first()?;
    (findings.iter())
        .filter(|f| f.source == source && (rule == "all" || f.rule == rule) && f.rule != UNUSED)
        .map(|f| text.line_of(f.span))
        .filter(|l| l.abs_diff(at) <= NEAR)
        .min_by_key(|l| (l.abs_diff(at), *l))
}

/// A source's text with its line index, built once.
struct Text {
    text: String,
    lines: report::LineIndex,
}

impl Text {
    fn new(text: String) -> Self {
        count_work(text.len());
        let lines = report::LineIndex::new(&text);
        Text { text, lines }
    }

    /// The 1-based line a finding's span starts on, as the report shows it.
    fn line_of(&self, span: Span) -> usize {
        let sp = report::widen(&self.text, span);
        self.lines.line_col(&self.text, sp.offset).0
    }
}

/// The run's suppressions, indexed by where they apply.
struct Table {
    sups: Vec<Suppression>,
    /// Per source: its file-wide suppressions.
    files: HashMap<SourceId, Vec<usize>>,
    /// Per source and 1-based line: the comments covering it.
    lines: HashMap<(SourceId, usize), Vec<usize>>,
    /// Per source and document offset: the annotations of its objects.
    objects: HashMap<(SourceId, usize), Vec<usize>>,
    /// Document starts of the sources with annotations, to tell which document a finding is
    /// in: from the text, as the objects are gone.
    docs: HashMap<SourceId, Vec<usize>>,
}

impl Table {
    fn new(sups: Vec<Suppression>, sources: &[Source]) -> Self {
        let mut t = Table {
            sups: Vec::new(),
            files: HashMap::new(),
            lines: HashMap::new(),
            objects: HashMap::new(),
            docs: HashMap::new(),
        };
        for (i, s) in sups.iter().enumerate() {
            match &s.scope {
                Scope::File => t.files.entry(s.source).or_default().push(i),
                Scope::Lines(lines) => {
                    for &l in lines {
                        t.lines.entry((s.source, l)).or_default().push(i);
                    }
                }
                Scope::Object { doc_offset, .. } => {
                    t.objects
                        .entry((s.source, *doc_offset))
                        .or_default()
                        .push(i);
                    t.docs.entry(s.source).or_insert_with(|| {
                        let text = sources[s.source].reread();
                        count_work(text.len());
                        let base = if text.starts_with('\u{feff}') { 3 } else { 0 };
                        crate::parse::split_documents(&text[base..])
                            .into_iter()
                            .map(|(offset, _)| base + offset)
                            .collect()
                    });
                }
            }
        }
        t.sups = sups;
        t
    }

    /// Does a suppression cover `rule` at this place? Every suppression that does is
    /// marked used.
    fn covers(
        &mut self,
        rule: &str,
        at: (SourceId, Span),
        object: Option<&ObjectRef>,
        texts: &BTreeMap<SourceId, Text>,
    ) -> bool {
        let (source, span) = at;
        let line = texts.get(&source).map(|t| t.line_of(span));
        let doc = self.docs.get(&source).and_then(|v| {
            let i = v.partition_point(|&d| d <= span.offset);
            i.checked_sub(1).map(|i| v[i])
        });
        let none = Vec::new();
        let file = self.files.get(&source).unwrap_or(&none);
        let lines = line
            .and_then(|l| self.lines.get(&(source, l)))
            .unwrap_or(&none);
        let objects = doc
            .and_then(|d| self.objects.get(&(source, d)))
            .unwrap_or(&none);
        let mut hit = false;
        for &i in file.iter().chain(lines).chain(objects) {
            count_work(1);
            let s = &mut self.sups[i];
            if let Scope::Object { object: o, .. } = &s.scope
                && !object.is_some_and(|x| covers_object(o, x))
            {
                continue;
            }
            for (id, _, used) in &mut s.ids {
                if id == "all" || id == rule {
                    *used = true;
                    hit = true;
                }
            }
        }
        hit
    }

    /// The finding where it stands (moved to its first place no suppression covers), and
    /// whether it is suppressed.
    fn place(&mut self, mut f: Finding, texts: &BTreeMap<SourceId, Text>) -> (Finding, bool) {
        let here = self.covers(f.rule, (f.source, f.span), f.object.as_deref(), texts);
        // A finding moved out of a rendered kustomization: its object's annotation is there
        // (both are looked at, so neither suppression is reported unused).
        let rendered =
            (f.rendered_at).is_some_and(|at| self.covers(f.rule, at, f.object.as_deref(), texts));
        let here = here | rendered;
        // Every place is looked at, so the suppressions used never depend on the order.
        let free = (f.also_on.iter())
            .map(|p| !self.covers(f.rule, (p.source, p.span), Some(&p.object), texts))
            .collect::<Vec<_>>();
        if !here {
            return (f, false);
        }
        let Some(k) = free.iter().position(|&free| free) else {
            return (f, true);
        };
        let p = f.also_on.remove(k);
        f.related
            .retain(|r| (r.source, r.span) != (p.source, p.span));
        f.source = p.source;
        f.span = p.span;
        f.label = p.label;
        f.object = Some(p.object);
        (f, false)
    }

    /// The suppressions that hid nothing, as findings; an unused comment names the line of
    /// the nearest finding it might have been meant for, and a misspelt rule id the rule it
    /// is closest to.
    fn unused(
        self,
        known: &[&str],
        findings: &[Finding],
        texts: &BTreeMap<SourceId, Text>,
    ) -> Vec<Finding> {
        let mut out = Vec::new();
        for s in &self.sups {
            for (id, span, used) in &s.ids {
                if *used {
                    continue;
                }
                let (message, help) = if id == "all" || known.contains(&id.as_str()) {
                    let near = match (&s.scope, texts.get(&s.source)) {
                        (Scope::Lines(covered), Some(text)) => {
                            nearest_finding(id, s.source, covered, findings, text)
                                .map(|l| (l, covered.first().copied().unwrap_or(l)))
                        }
                        _ => None,
                    };
                    let what = if id == "all" {
                        "a finding is".to_string()
                    } else {
                        format!("`{id}` fires")
                    };
                    let help = match near {
                        Some((line, covered)) => format!(
                            "move the comment to the line above line {line}, where {what} (it covers line {covered}), or to the end of that line; or remove it"
                        ),
                        None => "remove the suppression; the finding it was written for is gone"
                            .to_string(),
                    };
                    (format!("suppression of `{id}` matched no finding"), help)
                } else {
                    (
                        format!("suppression names unknown rule `{id}`"),
                        format!(
                            "{}fix the rule id (`karplint rules` lists them) or remove the suppression",
                            crate::suggest::did_you_mean(id, known)
                        ),
                    )
                };
                let mut f = Finding::at_source(UNUSED, Severity::Info, s.source, *span, message)
                    .label("unused suppression")
                    .help(help);
                f.object = s.object.clone().map(Box::new);
                out.push(f);
            }
        }
        out
    }
}

/// Does an annotation on `scope` cover findings on `object`? An object's own annotation
/// covers all its pod templates (a workload CRD is one object per template); a pod
/// template's covers only that template.
fn covers_object(scope: &ObjectRef, object: &ObjectRef) -> bool {
    scope.same_object(object) && (scope.role.is_none() || scope.role == object.role)
}

fn annotation_suppressions(objects: &[Object]) -> Vec<Suppression> {
    let mut out = Vec::new();
    // Where the object annotation read last was: the pod templates of one workload CRD
    // share their object's, and it is one suppression (the items of a `kind: List` share a
    // document, but each has its own).
    let mut last_own = None;
    for o in objects.iter().filter(|o| !o.context) {
        let template = o.workload().map(|w| &w.template.metadata.annotations);
        let place = (o.meta.annotations.entry(ANNOTATION)).map(|(_, v)| (o.source, o.span(v)));
        let own = (place.is_none() || last_own != place).then_some(&o.meta.annotations);
        last_own = place;
        for (i, ann) in own.into_iter().chain(template).enumerate() {
            let Some((_, v)) = ann.entry(ANNOTATION) else {
                continue;
            };
            let mut object = ObjectRef::of(o);
            if i == 0 && own.is_some() {
                // The object's own annotation: every pod template of it.
                object.role = None;
            }
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
                    object: object.clone(),
                },
                ids,
                object: Some(object),
            });
        }
    }
    out
}

/// The comments of a YAML text as byte ranges from `#` to the end of the line, read from
/// granit-parser's comment events document by document, so that a `#` inside a quoted or
/// block scalar is never taken for one. Only documents holding [`MARKER`] are read. In a
/// document that does not parse, the comments after the syntax error are not read (that
/// document is a `parse-error` already).
fn comments(text: &str) -> Vec<(usize, usize)> {
    let base = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut out = Vec::new();
    for (offset, doc) in crate::parse::split_documents(&text[base..]) {
        if memchr::memmem::find(doc.as_bytes(), MARKER.as_bytes()).is_none() {
            continue;
        }
        count_work(doc.len());
        let options = granit_parser::options! {
            emit_comments: true,
            max_buffered_comment_events: usize::MAX,
        };
        let parser =
            granit_parser::Parser::with_options(granit_parser::StrInput::new(doc), options);
        for event in parser {
            let Ok((event, span)) = event else { break };
            if let (granit_parser::Event::Comment(..), Some(r)) = (event, span.byte_range()) {
                out.push((base + offset + r.start, base + offset + r.end));
            }
        }
    }
    out
}

/// Finds `# karplint-ignore[-file]: ids` comments; text after an id and a space
/// (`rule-a -- reason`) is a reason.
fn comment_suppressions(source: SourceId, text: &Text) -> Vec<Suppression> {
    let t = text.text.as_str();
    let mut out = Vec::new();
    let mut next_yaml = NextYamlLine::default();
    for (start, end) in comments(t) {
        let comment = t[start..end].trim_end_matches(['\n', '\r']);
        let Some(after_hash) = comment.strip_prefix('#') else {
            continue;
        };
        let body = after_hash.trim_start();
        let body_off = start + 1 + (after_hash.len() - body.len());
        let (file, rest, rest_off) = if let Some(r) = body.strip_prefix("karplint-ignore-file") {
            (true, r, body_off + "karplint-ignore-file".len())
        } else if let Some(r) = body.strip_prefix(MARKER) {
            (false, r, body_off + MARKER.len())
        } else {
            continue;
        };
        let comment_span = Span::new(start, comment.len());
        let Some(ids) = comment_ids(rest, rest_off, comment_span) else {
            continue;
        };
        let (line, _) = text.lines.line_col(t, start);
        let line_start = text.lines.start(line);
        let scope = if file {
            Scope::File
        } else if t[line_start..start]
            .trim_start_matches('\u{feff}')
            .trim()
            .is_empty()
        {
            // A comment on its own line covers the next line that holds YAML.
            Scope::Lines(next_yaml.after(text, line).into_iter().collect())
        } else {
            Scope::Lines(vec![line])
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

/// The ids of a suppression comment after its marker: `None` when the marker is followed
/// by something other than `:` (`karplint-ignored`), "all" when it names none.
fn comment_ids(
    rest: &str,
    rest_off: usize,
    comment_span: Span,
) -> Option<Vec<(String, Span, bool)>> {
    let Some(list) = rest.strip_prefix(':') else {
        return rest
            .trim()
            .is_empty()
            .then(|| vec![("all".into(), comment_span, false)]);
    };
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
        ids.push(("all".into(), comment_span, false));
    }
    Some(ids)
}

/// Finds the next line holding YAML (not blank, not a comment) after a line, for comments
/// in increasing line order: a run of comment lines is walked once, not once per comment.
#[derive(Default)]
struct NextYamlLine {
    /// The last answer: lines from `from` up to (not including) `found` hold no YAML.
    from: usize,
    found: Option<usize>,
    walked: bool,
}

impl NextYamlLine {
    fn after(&mut self, text: &Text, line: usize) -> Option<usize> {
        let from = line + 1;
        let known = self.walked && self.from <= from && self.found.is_none_or(|f| from <= f);
        if !known {
            self.from = from;
            self.walked = true;
            self.found = (from..=text.lines.count()).find(|&l| {
                count_work(1);
                let t = text.lines.line(&text.text, l).trim();
                !t.is_empty() && !t.starts_with('#')
            });
        }
        self.found
    }
}

#[cfg(test)]
thread_local! {
    /// Steps of suppression matching on this thread (lines and bytes looked at,
    /// suppressions tried), for the tests that bound its cost.
    static WORK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn count_work(_steps: usize) {
    #[cfg(test)]
    WORK.with(|w| w.set(w.get() + _steps));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 5,000 findings each under its own suppression comment, then 5,000 comment lines
    /// above one key: matching costs work in proportion to the text and the findings,
    /// not to their product (it once recomputed every line number from the top).
    #[test]
    fn matching_work_is_linear() {
        let n = 5_000;
        let mut text = String::new();
        let mut findings = Vec::new();
        for i in 0..n {
            text.push_str("# karplint-ignore: rule-x\n");
            let at = text.len();
            text.push_str(&format!("key{i}: value\n"));
            findings.push(Finding::at_source(
                "rule-x",
                Severity::Warning,
                0,
                Span::new(at, 4),
                "m",
            ));
        }
        for _ in 0..n {
            text.push_str("  # karplint-ignore: rule-y\n");
        }
        text.push_str("last: 1\n");
        let sources = [Source {
            name: "<stdin>".into(),
            origin: report::Origin::Stdin(Some(text.clone())),
            context: false,
            kustomized: None,
        }];
        WORK.with(|w| w.set(0));
        let applied = apply(
            findings,
            Annotations::default(),
            &sources,
            &[true],
            &["rule-x", "rule-y"],
        );
        let work = WORK.with(std::cell::Cell::get);
        assert_eq!(applied.suppressed.len(), n);
        // The rule-y comments all cover `last: 1`, and hide nothing.
        assert_eq!(applied.findings.len(), n);
        assert!(
            work <= 4 * (text.len() + n),
            "{work} steps for {} bytes and {n} findings",
            text.len()
        );
    }

    /// `(rule, role)` of every `missing-resource-requests` finding of a PyTorchJob whose
    /// two templates set no requests, with `object` and `template` as the annotations of
    /// its own metadata and of its `Worker` template's metadata.
    fn pytorch_findings(object: &str, template: &str) -> Vec<(String, String)> {
        let yaml = format!(
            "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: p\n  namespace: ml\n  annotations: {{{object}}}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      template:\n        spec:\n          containers: [{{name: m, image: example.com/m:1}}]\n    Worker:\n      replicas: 2\n      template:\n        metadata:\n          annotations: {{{template}}}\n        spec:\n          containers: [{{name: w, image: example.com/w:1}}]\n"
        );
        let report = crate::engine::lint_str(&yaml).expect("lints");
        (report.findings.iter())
            .filter(|f| f.rule == "missing-resource-requests" || f.rule == UNUSED)
            .map(|f| {
                let role = f.object.as_ref().and_then(|o| o.role.clone());
                (f.rule.to_string(), role.unwrap_or_default().to_string())
            })
            .collect()
    }

    fn finding(rule: &str, role: &str) -> (String, String) {
        (rule.to_string(), role.to_string())
    }

    #[test]
    fn crd_annotation_on_its_own_metadata_covers_every_template() {
        let rule = "missing-resource-requests";
        assert_eq!(
            pytorch_findings("", ""),
            [finding(rule, "Master"), finding(rule, "Worker")]
        );
        let hidden = pytorch_findings(&format!("{ANNOTATION}: {rule}"), "");
        assert_eq!(hidden, []);
    }

    #[test]
    fn crd_annotation_in_a_template_covers_that_template_only() {
        let rule = "missing-resource-requests";
        let left = pytorch_findings("", &format!("{ANNOTATION}: {rule}"));
        assert_eq!(left, [finding(rule, "Master")]);
    }

    /// Each item of a `kind: List` (one document) has its own annotation: the second
    /// item's is read too.
    #[test]
    fn every_list_item_annotation_is_read() {
        let item = |name: &str| {
            format!(
                "  - apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: {name}\n      annotations: {{{ANNOTATION}: missing-resource-requests}}\n    spec:\n      template:\n        spec:\n          containers: [{{name: c, image: example.com/c:1}}]\n"
            )
        };
        let yaml = format!(
            "apiVersion: v1\nkind: List\nitems:\n{}{}",
            item("a"),
            item("b")
        );
        let report = crate::engine::lint_str(&yaml).expect("lints");
        let left: Vec<_> = (report.findings.iter())
            .filter(|f| f.rule == "missing-resource-requests")
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    fn parse(text: &str) -> Vec<Suppression> {
        comment_suppressions(0, &Text::new(text.to_string()))
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
