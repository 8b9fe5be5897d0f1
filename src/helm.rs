//! Sources stage, Helm: findings on `helm template` output read from standard input,
//! pointed back at the chart templates that produced them.
//!
//! `helm template` starts every document it renders with `# Source: CHART/templates/FILE`
//! (the chart's `name` from its `Chart.yaml`, then the template's path in the chart). The
//! chart is looked for under the working directory: the `Chart.yaml` of that name whose
//! directory holds the template. A finding on a rendered key or value moves to the line of
//! the template that writes the same key path:
//! - the same key, or the same literal value: that key or value ([`Mapped::Exact`]);
//! - a value the template computes (`{{ .Values.zone }}`), or a key the template does not
//!   write (`{{- toYaml .Values.nodeSelector | nindent 8 }}`): the value, or the deepest
//!   key above it, that the template writes ([`Mapped::Writes`]);
//! - nothing of the document's keys: the template's first line ([`Mapped::Writes`]).
//!
//! Templates are not YAML until rendered, so their keys are read line by line, by
//! indentation; a line that is only a template action (`{{- if … }}`) holds no key.

use crate::kustomize::remap::{At, Files, Seg, node_at, nodes};
use crate::model::Span;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A `helm template` stream: per document, its range and the template it names.
#[derive(Debug)]
pub struct HelmMap<'t> {
    docs: Vec<(usize, usize, Option<String>)>,
    text: &'t str,
    /// Where charts are looked for (the working directory).
    base: PathBuf,
}

/// Where a place of the rendered stream lands in a template.
#[derive(Debug, PartialEq, Eq)]
pub enum Mapped {
    /// The same key, or the same literal value, at `span` of `file`.
    Exact { file: PathBuf, span: Span },
    /// The template computes the value: the place in `file` that writes it.
    Writes { file: PathBuf, span: Span },
    /// No chart under the working directory holds the template the document names.
    NotFound(String),
}

/// The prefix `helm template` writes before a template's path.
const SOURCE: &str = "# Source: ";

impl<'t> HelmMap<'t> {
    /// The map of `text` when it is `helm template` output (a document names its
    /// template); charts are looked for under `base`.
    pub fn new(text: &'t str, base: &Path) -> Option<HelmMap<'t>> {
        let docs: Vec<(usize, usize, Option<String>)> = crate::parse::split_documents(text)
            .into_iter()
            .map(|(offset, doc)| (offset, offset + doc.len(), source_of(doc)))
            .collect();
        docs.iter().any(|(_, _, s)| s.is_some()).then(|| HelmMap {
            docs,
            text,
            base: base.to_path_buf(),
        })
    }

    /// Where `span` of the stream came from, when its document names a template.
    pub fn map(&self, span: Span, charts: &mut Charts, files: &mut Files) -> Option<Mapped> {
        let (start, end, source) =
            (self.docs.iter()).find(|(s, e, _)| (*s..*e).contains(&span.offset))?;
        let source = source.as_deref()?;
        let found = charts.template(&self.base, source);
        let Some((file, template)) = found.and_then(|f| Some((f.clone(), files.text(&f)?))) else {
            return Some(Mapped::NotFound(source.to_string()));
        };
        let lines = key_lines(template);
        let writes = |span: Span| Mapped::Writes {
            file: file.clone(),
            span,
        };
        let rendered = nodes(&self.text[*start..*end]);
        let Some((node, at)) = node_at(&rendered, span.offset - start) else {
            return Some(writes(first_line(template)));
        };
        let keys = keys_of(&node.path);
        // Which of the rendered nodes of the same keys this is (the second container's
        // `resources`), to take the template's line of the same rank.
        let rank = (rendered.iter())
            .filter(|n| n.key.is_some() && keys_of(&n.path) == keys)
            .position(|n| std::ptr::eq(n, node))
            .unwrap_or(0);
        for depth in (1..=keys.len()).rev() {
            let same: Vec<&KeyLine> = (lines.iter()).filter(|l| l.path == keys[..depth]).collect();
            // A `range` writes many items from one line.
            let Some(line) = same.get(rank).or(same.last()) else {
                continue;
            };
            if depth < keys.len() {
                return Some(writes(line.key));
            }
            return Some(match at {
                At::Key(rel) => Mapped::Exact {
                    file: file.clone(),
                    span: within(line.key, rel, span.len),
                },
                At::Value(rel) => match &line.value {
                    Some((v, literal)) if literal.as_deref() == node.scalar.as_deref() => {
                        Mapped::Exact {
                            file: file.clone(),
                            span: within(*v, rel, span.len),
                        }
                    }
                    Some((v, _)) => writes(*v),
                    None => writes(line.key),
                },
            });
        }
        Some(writes(first_line(template)))
    }
}

/// The template a document names, from its leading comments.
fn source_of(doc: &str) -> Option<String> {
    (doc.lines())
        .map(str::trim)
        .take_while(|l| l.is_empty() || l.starts_with('#') || l.starts_with("---"))
        .find_map(|l| l.strip_prefix(SOURCE))
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
}

/// The keys of a node's path, without the list indices.
fn keys_of(path: &[Seg]) -> Vec<&str> {
    (path.iter())
        .filter_map(|s| match s {
            Seg::Key(k) => Some(k.as_str()),
            Seg::Index(_) => None,
        })
        .collect()
}

/// `rel` bytes into `span`, at most `len` long and never past its end.
fn within(span: Span, rel: usize, len: usize) -> Span {
    let rel = rel.min(span.len);
    Span::new(span.offset + rel, len.min(span.len - rel))
}

/// The template's first line that is not a comment or an action.
fn first_line(text: &str) -> Span {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if !(trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with("{{")) {
            let lead = line.len() - line.trim_start().len();
            return Span::new(offset + lead, trimmed.len());
        }
        offset += line.len();
    }
    Span::new(0, 0)
}

/// A key a template writes on a line of its own: its path of keys, its span, and its
/// value's span with the value when it is a literal.
#[derive(Debug)]
struct KeyLine {
    path: Vec<String>,
    key: Span,
    value: Option<(Span, Option<String>)>,
}

/// The keys of a template, read by indentation (see the module's documentation).
fn key_lines(text: &str) -> Vec<KeyLine> {
    let mut out = Vec::new();
    // The keys above the line, with their indentation.
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let mut indent = body.len() - body.trim_start_matches(' ').len();
        let mut rest = &body[indent..];
        if rest.is_empty() || rest.starts_with('#') || rest.starts_with("{{") {
            continue;
        }
        while let Some(item) = rest.strip_prefix("- ") {
            let pad = item.len() - item.trim_start_matches(' ').len();
            indent += 2 + pad;
            rest = &item[pad..];
        }
        let Some((key, value)) = split_key(rest) else {
            continue;
        };
        stack.retain(|(i, _)| *i < indent);
        let mut path: Vec<String> = stack.iter().map(|(_, k)| k.clone()).collect();
        path.push(unquote(key).to_string());
        let key_at = at + (body.len() - rest.len());
        let value = value.map(|(rel, v)| {
            let literal = (!v.contains("{{")).then(|| unquote(v).to_string());
            (Span::new(key_at + rel, v.len()), literal)
        });
        stack.push((indent, unquote(key).to_string()));
        out.push(KeyLine {
            path,
            key: Span::new(key_at, key.len()),
            value,
        });
    }
    out
}

/// `key: value` of a line (after its list markers): the key, and the value with its offset
/// in `rest` when the line has one (comments dropped). `None` when the line is no key.
fn split_key(rest: &str) -> Option<(&str, Option<(usize, &str)>)> {
    let colon = (rest.char_indices())
        .find(|&(i, c)| c == ':' && rest[i + 1..].chars().next().is_none_or(|n| n == ' '))
        .map(|(i, _)| i)?;
    let key = rest[..colon].trim_end();
    if key.is_empty() || key.contains("{{") || key.starts_with(['{', '[', '|', '>', '&', '*']) {
        return None;
    }
    let after = &rest[colon + 1..];
    let lead = after.len() - after.trim_start().len();
    let value = after.trim_start();
    let value = match value.find(" #") {
        Some(i) if !value.contains("{{") => &value[..i],
        _ => value,
    }
    .trim_end();
    let value = (!value.is_empty()).then_some((colon + 1 + lead, value));
    Some((key, value))
}

fn unquote(s: &str) -> &str {
    s.trim_matches(['"', '\''])
}

/// The charts under a directory, by name, found once (`Chart.yaml` files).
#[derive(Default)]
pub struct Charts {
    /// Per base directory: each chart name's directories.
    found: BTreeMap<PathBuf, BTreeMap<String, Vec<PathBuf>>>,
}

/// How deep under the working directory charts are looked for.
const CHART_DEPTH: usize = 6;

impl Charts {
    /// The template file of `source` (`CHART/templates/FILE`): in the chart of that name
    /// under `base` that holds it, when exactly one does.
    fn template(&mut self, base: &Path, source: &str) -> Option<PathBuf> {
        let (chart, rest) = source.split_once('/')?;
        let charts = (self.found)
            .entry(base.to_path_buf())
            .or_insert_with(|| find_charts(base));
        let mut holding = (charts.get(chart)?.iter())
            .map(|dir| dir.join(rest))
            .filter(|p| p.is_file());
        let file = holding.next()?;
        holding.next().is_none().then_some(file)
    }
}

/// The charts under `base`: every `Chart.yaml` not ignored, by its `name`.
fn find_charts(base: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let walk = ignore::WalkBuilder::new(base)
        .max_depth(Some(CHART_DEPTH))
        .build();
    for entry in walk.flatten() {
        if entry.file_name() != "Chart.yaml" {
            continue;
        }
        let Some(dir) = entry.path().parent() else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let name = (text.lines()).find_map(|l| l.strip_prefix("name:"));
        if let Some(name) = name.map(|n| unquote(n.trim()).to_string()) {
            out.entry(name)
                .or_default()
                .push(crate::discover::normal(dir));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEMPLATE: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include \"web.fullname\" . }}
spec:
  template:
    spec:
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: web
          image: \"{{ .Values.image }}\"
          resources:
            requests:
              cpu: 100m
              memory: {{ .Values.memory }}
";

    const RENDERED: &str = "\
---
# Source: web/templates/deploy.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: rel-web
spec:
  template:
    spec:
      nodeSelector:
        topology.kubernetes.io/zone: us-east-1a
      containers:
        - name: web
          image: \"nginx:1.27\"
          resources:
            requests:
              cpu: 100m
              memory: 64Gi
";

    fn chart() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let chart = dir.path().join("charts/web");
        std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
        std::fs::write(
            chart.join("Chart.yaml"),
            "apiVersion: v2\nname: web\nversion: 0.1.0\n",
        )
        .expect("write");
        std::fs::write(chart.join("templates/deploy.yaml"), TEMPLATE).expect("write");
        dir
    }

    /// Where the rendered `needle` (its first occurrence) lands in the template: the text
    /// there.
    fn lands(needle: &str) -> Option<(bool, String)> {
        let dir = chart();
        let map = HelmMap::new(RENDERED, dir.path()).expect("helm output");
        let at = RENDERED.find(needle).expect("needle");
        let (mut charts, mut files) = (Charts::default(), Files::default());
        let mapped = map.map(Span::new(at, needle.len()), &mut charts, &mut files)?;
        let (exact, span) = match mapped {
            Mapped::Exact { span, .. } => (true, span),
            Mapped::Writes { span, .. } => (false, span),
            Mapped::NotFound(_) => return None,
        };
        Some((
            exact,
            TEMPLATE[span.offset..span.offset + span.len].to_string(),
        ))
    }

    #[test]
    fn a_literal_value_lands_on_itself() {
        assert_eq!(lands("100m"), Some((true, "100m".into())));
    }

    #[test]
    fn a_key_lands_on_itself() {
        assert_eq!(lands("requests"), Some((true, "requests".into())));
    }

    #[test]
    fn a_computed_value_lands_on_the_action_that_writes_it() {
        assert_eq!(lands("64Gi"), Some((false, "{{ .Values.memory }}".into())));
    }

    #[test]
    fn a_key_from_values_lands_on_the_key_above_it() {
        assert_eq!(
            lands("topology.kubernetes.io/zone"),
            Some((false, "nodeSelector".into()))
        );
    }

    /// The second container's key lands on the template's second container, and a list
    /// a `range` writes from one line lands on that line for every item.
    #[test]
    fn a_key_of_the_same_path_lands_on_the_line_of_its_rank() {
        let template = "spec:\n  containers:\n    - name: a\n      image: a\n    - name: b\n      image: b\n  tolerations:\n  {{- range .Values.keys }}\n    - key: {{ . }}\n  {{- end }}\n";
        let rendered = "# Source: web/templates/t.yaml\nspec:\n  containers:\n    - name: a\n      image: a\n    - name: b\n      image: b\n  tolerations:\n    - key: x\n    - key: y\n";
        let lines = key_lines(template);
        let at = |needle: &str, nth: usize| {
            let mut from = 0;
            for _ in 0..nth {
                from += rendered[from..].find(needle).expect("needle") + 1;
            }
            from + rendered[from..].find(needle).expect("needle")
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let chart = dir.path().join("web");
        std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
        std::fs::write(chart.join("Chart.yaml"), "name: web\n").expect("write");
        std::fs::write(chart.join("templates/t.yaml"), template).expect("write");
        let map = HelmMap::new(rendered, dir.path()).expect("helm output");
        let (mut charts, mut files) = (Charts::default(), Files::default());
        let mut land = |offset: usize, len: usize| match map.map(
            Span::new(offset, len),
            &mut charts,
            &mut files,
        ) {
            Some(Mapped::Exact { span, .. } | Mapped::Writes { span, .. }) => span.offset,
            other => panic!("{other:?}"),
        };
        let image_b = lines
            .iter()
            .filter(|l| l.path == ["spec", "containers", "image"])
            .nth(1);
        assert_eq!(land(at("image", 1), 5), image_b.expect("line").key.offset);
        let key = lines
            .iter()
            .find(|l| l.path == ["spec", "tolerations", "key"])
            .expect("line");
        assert_eq!(land(at("key", 1), 3), key.key.offset);
    }

    #[test]
    fn a_stream_without_sources_is_no_helm_output() {
        assert!(HelmMap::new("apiVersion: v1\nkind: Pod\n", Path::new(".")).is_none());
    }

    #[test]
    fn a_template_no_chart_holds_is_missing() {
        let dir = chart();
        let text = RENDERED.replace("web/templates/deploy.yaml", "api/templates/deploy.yaml");
        let map = HelmMap::new(&text, dir.path()).expect("helm output");
        let (mut charts, mut files) = (Charts::default(), Files::default());
        let at = text.find("100m").expect("needle");
        assert_eq!(
            map.map(Span::new(at, 4), &mut charts, &mut files),
            Some(Mapped::NotFound("api/templates/deploy.yaml".into()))
        );
    }
}
