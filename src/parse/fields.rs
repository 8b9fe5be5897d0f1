//! Parse stage, field names: every key of the objects the `unknown-field` rule checks,
//! compared with the fields the API server knows.
//!
//! The typed model reads only what rules use and lets serde skip every other key, so a
//! misspelt `taint:` leaves no trace in it. This pass reads the document once more, for its
//! structure and every key with its exact bytes, and walks it against the schemas
//! generated from Karpenter's CRDs and the `k8s.io/api` types (`data/schemas/fields.txt`,
//! embedded). The walk reads the parser's events (`granit_parser`, which serde-saphyr is
//! built on): those [`super::fast`] recorded while it read the typed model ([`Recorded`]),
//! else, for a document serde-saphyr read, the event parser's over the text once more.
//! Only the documents of a kind with a schema are walked: Karpenter's objects, the built-in
//! workloads, and the pod templates of the workload CRDs.
//!
//! A map (`labels`, `limits`, `nodeSelector`) and a node that preserves unknown fields take
//! any key; a merge key (`<<`), a strategic merge patch's `$` directive and an alias are not
//! looked into. A document the event
//! parser rejects yields nothing: serde-saphyr's verdict on it stands.

use crate::model::UnknownField;
use crate::model::de::Str;
use granit_parser::{Event, Parser, StrInput};
use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

/// The generated schemas (see `data/schemas/README.md`).
const DATA: &str = include_str!("../../data/schemas/fields.txt");

/// What a field holds, as far as its keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ref {
    /// A value whose keys are not checked.
    Leaf,
    /// A map, or a node that preserves unknown fields: any key.
    Any,
    /// An object of this type.
    Type(u16),
    /// A list of objects of this type.
    List(u16),
}

/// One object type: its fields, sorted by name.
#[derive(Debug)]
struct TypeDef {
    fields: Vec<(&'static str, Ref)>,
    /// The same names, for did-you-mean.
    names: Vec<&'static str>,
}

impl TypeDef {
    fn field(&self, key: &str) -> Option<Ref> {
        (self.fields.binary_search_by(|(f, _)| (*f).cmp(key)).ok()).map(|i| self.fields[i].1)
    }
}

/// The schemas read from [`DATA`].
#[derive(Debug)]
pub struct Schemas {
    types: Vec<TypeDef>,
    /// `(apiVersion, kind, type)` of each object checked whole.
    roots: Vec<(&'static str, &'static str, u16)>,
    /// The pod template of the workload CRDs.
    pod_template: Option<u16>,
}

/// The schemas, read once.
pub fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| Schemas::read(DATA))
}

impl Schemas {
    /// Reads the format of `data/schemas/fields.txt`. A line it does not understand is
    /// skipped (the file is generated, and a test reads it whole: `every_line_is_read`).
    fn read(data: &'static str) -> Schemas {
        let mut names: Vec<&'static str> = Vec::new();
        let lines = || data.lines().filter(|l| !l.starts_with('#'));
        for l in lines() {
            if let Some(name) = l.strip_prefix("type ") {
                names.push(name.trim());
            }
        }
        let id = |name: &str| names.iter().position(|n| *n == name).map(|i| i as u16);
        let reference = |r: &str| match r {
            "-" => Some(Ref::Leaf),
            "*" => Some(Ref::Any),
            r => match r.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                Some(inner) => id(inner).map(Ref::List),
                None => id(r).map(Ref::Type),
            },
        };
        let mut types: Vec<TypeDef> = Vec::with_capacity(names.len());
        let mut roots = Vec::new();
        for l in lines() {
            if l.starts_with("type ") {
                types.push(TypeDef {
                    fields: Vec::new(),
                    names: Vec::new(),
                });
            } else if let Some(field) = l.strip_prefix(' ') {
                let (Some((name, r)), Some(t)) = (field.split_once(' '), types.last_mut()) else {
                    continue;
                };
                if let Some(r) = reference(r.trim()) {
                    t.fields.push((name, r));
                }
            } else if let Some(root) = l.strip_prefix("root ") {
                let parts: Vec<&str> = root.split_whitespace().collect();
                if let [api, kind, t] = parts[..]
                    && let Some(t) = id(t)
                {
                    roots.push((api, kind, t));
                }
            }
        }
        for t in &mut types {
            t.fields.sort_unstable_by_key(|(f, _)| *f);
            t.names = t.fields.iter().map(|(f, _)| *f).collect();
        }
        Schemas {
            types,
            roots,
            pod_template: id("core.PodTemplateSpec"),
        }
    }

    /// The type of a whole object of this apiVersion and kind, when it is checked.
    fn root(&self, api_version: &str, kind: &str) -> Option<u16> {
        (self.roots.iter())
            .find(|(a, k, _)| *a == api_version && *k == kind)
            .map(|r| r.2)
    }

    /// Whether objects of this apiVersion and kind are checked whole.
    pub fn checks(&self, api_version: &str, kind: &str) -> bool {
        self.root(api_version, kind).is_some()
    }

    fn def(&self, t: u16) -> &TypeDef {
        &self.types[usize::from(t)]
    }
}

/// Where the walk checks keys: a whole object, or the pod templates at paths of a CRD.
#[derive(Debug, Clone)]
pub enum Entry {
    /// The document is one object of this apiVersion and kind.
    Object,
    /// Pod templates at these paths (`spec.workerGroupSpecs[0].template`), each reported
    /// under its index in the list.
    Templates(Vec<String>),
    /// The items of a `kind: List`, by their apiVersion and kind (`None` when either is
    /// missing), each reported under its index.
    Items(Vec<Option<(String, String)>>),
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step<'a> {
    Key(Cow<'a, str>),
    Index(usize),
}

/// The routes to the pod templates of a CRD: a tree of steps, with the template index at
/// its ends.
#[derive(Debug, Default)]
struct Route {
    next: Vec<(Step<'static>, Route)>,
    template: Option<usize>,
    /// The type at the end, when it is not a pod template (a List's item).
    root: Option<u16>,
}

impl Route {
    fn of(paths: &[String]) -> Route {
        let mut root = Route::default();
        for (i, p) in paths.iter().enumerate() {
            let mut at = &mut root;
            for step in steps(p) {
                let pos = match at.next.iter().position(|(s, _)| *s == step) {
                    Some(pos) => pos,
                    None => {
                        at.next.push((step, Route::default()));
                        at.next.len() - 1
                    }
                };
                at = &mut at.next[pos].1;
            }
            at.template = Some(i);
        }
        root
    }

    /// The route to each item of a List whose kind has a schema.
    fn of_items(s: &Schemas, items: &[Option<(String, String)>]) -> Route {
        let each = (items.iter().enumerate())
            .filter_map(|(i, item)| {
                let (api, kind) = item.as_ref()?;
                let root = s.root(api, kind)?;
                let end = Route {
                    template: Some(i),
                    root: Some(root),
                    ..Route::default()
                };
                Some((Step::Index(i), end))
            })
            .collect();
        let items = Route {
            next: each,
            ..Route::default()
        };
        Route {
            next: vec![(Step::Key(Cow::Borrowed("items")), items)],
            ..Route::default()
        }
    }

    fn step(&self, s: &Step) -> Option<&Route> {
        self.next.iter().find(|(k, _)| k == s).map(|(_, r)| r)
    }
}

/// `spec.a[0].b` → `spec`, `a`, 0, `b`.
fn steps(path: &str) -> Vec<Step<'static>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, rest) = part.split_once('[').unwrap_or((part, ""));
        if !key.is_empty() {
            out.push(Step::Key(Cow::Owned(key.to_string())));
        }
        for index in rest.split('[') {
            if let Ok(i) = index.trim_end_matches(']').parse() {
                out.push(Step::Index(i));
            }
        }
    }
    out
}

/// What a node of the walk is checked against.
#[derive(Clone, Copy)]
enum Expect<'r> {
    Ref(Ref),
    /// On the way to a CRD's pod templates: keys not checked.
    Route(&'r Route),
}

/// The walk stopped: the event parser failed, or the document ended early.
struct Stop;

/// One event of a document, as the walk reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev<'a> {
    MapStart,
    MapEnd,
    SeqStart,
    SeqEnd,
    /// A scalar: its value and its bytes.
    Scalar(Cow<'a, str>, Option<Range<usize>>),
    /// A node the walk does not look into (an alias).
    Other,
    /// The end of the document.
    End,
}

/// A document's events as [`super::fast`] read them for the typed model, kept for the
/// walk so that it need not read the text again.
#[derive(Debug, Default)]
pub struct Recorded<'a>(Vec<Ev<'a>>);

impl<'a> Recorded<'a> {
    /// Room for the events of a document of `bytes` bytes, about one per 16 bytes, up to
    /// 4,096 at first (the reading may stop at the header of an unmodelled kind).
    pub fn for_text(bytes: usize) -> Self {
        Recorded(Vec::with_capacity((bytes / 16).min(1 << 12)))
    }

    /// Records one event of the parser.
    pub fn push(&mut self, event: &Event<'a>, span: &granit_parser::Span) {
        if let Some(ev) = walked(event, span) {
            self.0.push(ev);
        }
    }
}

/// An event of the parser as the walk reads it; `None` for those it passes over.
fn walked<'a>(event: &Event<'a>, span: &granit_parser::Span) -> Option<Ev<'a>> {
    Some(match event {
        Event::Comment(..) | Event::Anchor(..) => return None,
        Event::StreamStart | Event::DocumentStart(..) => return None,
        Event::StreamEnd | Event::DocumentEnd => Ev::End,
        Event::MappingStart(..) => Ev::MapStart,
        Event::MappingEnd => Ev::MapEnd,
        Event::SequenceStart(..) => Ev::SeqStart,
        Event::SequenceEnd => Ev::SeqEnd,
        Event::Scalar(value, ..) => Ev::Scalar(value.clone(), span.byte_range()),
        _ => Ev::Other,
    })
}

/// The unknown keys of one document, each with the index of the template it is under
/// (0 for a whole object). `api_version` and `kind` name the object's root type. The walk
/// reads the events `recorded` when the typed model's reading kept them, else the text.
pub fn unknown_fields(
    text: &str,
    api_version: &str,
    kind: &str,
    entry: &Entry,
    recorded: Option<Recorded<'_>>,
) -> Vec<(usize, UnknownField)> {
    let s = schemas();
    let route;
    let expect = match entry {
        Entry::Object => match s.root(api_version, kind) {
            Some(t) => Expect::Ref(Ref::Type(t)),
            None => return Vec::new(),
        },
        Entry::Templates(paths) => {
            route = Route::of(paths);
            Expect::Route(&route)
        }
        Entry::Items(items) => {
            route = Route::of_items(s, items);
            Expect::Route(&route)
        }
    };
    let walk = |source| {
        let mut w = Walker {
            s,
            source,
            path: Vec::new(),
            types: Vec::new(),
            template: 0,
            base: 0,
            out: Vec::new(),
        };
        match w.document(expect) {
            Ok(()) => w.out,
            Err(Stop) => Vec::new(),
        }
    };
    let read = || Source::Parser(Box::new(Parser::new(StrInput::new(text))));
    match recorded {
        Some(Recorded(events)) => {
            let found = walk(Source::Recorded(events.into_iter()));
            debug_assert_eq!(found, walk(read()), "the recorded events walk as the text");
            found
        }
        None => walk(read()),
    }
}

/// Where the walk reads its events.
enum Source<'a> {
    Parser(Box<Parser<'a, StrInput<'a>>>),
    Recorded(std::vec::IntoIter<Ev<'a>>),
}

impl<'a> Source<'a> {
    /// The next event; `None` when the event parser failed.
    fn next(&mut self) -> Option<Ev<'a>> {
        match self {
            Source::Recorded(events) => events.next(),
            Source::Parser(parser) => loop {
                let (event, span) = parser.next_event()?.ok()?;
                if let Some(ev) = walked(&event, &span) {
                    return Some(ev);
                }
            },
        }
    }
}

struct Walker<'a> {
    s: &'static Schemas,
    source: Source<'a>,
    /// The path to the node being read.
    path: Vec<Step<'a>>,
    /// The object types around the node being read, innermost last, with the length of
    /// [`Walker::path`] at each.
    types: Vec<(u16, usize)>,
    /// Where the object being read starts in [`Walker::path`]: 0, or a List item's place.
    base: usize,
    /// The template being read (see [`Entry::Templates`]).
    template: usize,
    out: Vec<(usize, UnknownField)>,
}

impl<'a> Walker<'a> {
    fn next(&mut self) -> Result<Ev<'a>, Stop> {
        self.source.next().ok_or(Stop)
    }

    fn document<'r>(&mut self, expect: Expect<'r>) -> Result<(), Stop> {
        match self.next()? {
            Ev::End => Ok(()),
            e => self.node(e, expect),
        }
    }

    /// Reads the node that starts with `first`.
    fn node<'r>(&mut self, first: Ev<'a>, expect: Expect<'r>) -> Result<(), Stop> {
        match (first, expect) {
            (Ev::MapStart, Expect::Ref(Ref::Type(t))) => {
                self.types.push((t, self.path.len()));
                let r = self.mapping(Expect::Ref(Ref::Type(t)));
                self.types.pop();
                r
            }
            (Ev::MapStart, e @ Expect::Route(_)) => self.mapping(e),
            (Ev::SeqStart, Expect::Ref(Ref::List(t))) => self.sequence(Expect::Ref(Ref::Type(t))),
            (Ev::SeqStart, e @ Expect::Route(_)) => self.sequence(e),
            (Ev::MapStart | Ev::SeqStart, _) => self.skip(),
            _ => Ok(()),
        }
    }

    fn mapping<'r>(&mut self, expect: Expect<'r>) -> Result<(), Stop> {
        loop {
            let (key, span) = match self.next()? {
                Ev::MapEnd => return Ok(()),
                Ev::Scalar(key, span) => (key, span),
                // A complex key: neither it nor its value is looked into.
                e => {
                    self.node(e, Expect::Ref(Ref::Leaf))?;
                    let value = self.next()?;
                    self.node(value, Expect::Ref(Ref::Leaf))?;
                    continue;
                }
            };
            let child = self.child(&key, span, expect);
            self.path.push(Step::Key(key));
            let value = self.next()?;
            let r = self.node(value, child);
            self.path.pop();
            r?;
        }
    }

    fn sequence<'r>(&mut self, expect: Expect<'r>) -> Result<(), Stop> {
        for i in 0.. {
            let item = self.next()?;
            if matches!(item, Ev::SeqEnd) {
                return Ok(());
            }
            let child = match expect {
                Expect::Route(r) => match r.step(&Step::Index(i)) {
                    Some(next) => self.enter(next),
                    None => Expect::Ref(Ref::Leaf),
                },
                e => e,
            };
            self.path.push(Step::Index(i));
            let r = self.node(item, child);
            self.path.pop();
            r?;
        }
        Ok(())
    }

    /// What the value of `key` is checked against, recording `key` when the object's type
    /// does not know it.
    fn child<'r>(
        &mut self,
        key: &str,
        span: Option<Range<usize>>,
        expect: Expect<'r>,
    ) -> Expect<'r> {
        match expect {
            Expect::Ref(Ref::Type(t)) => {
                // A merge key, or a strategic merge patch's directive (`$patch`,
                // `$setElementOrder/…`, `$retainKeys`) in a kustomize patch.
                if key == "<<" || key.starts_with('$') {
                    return Expect::Ref(Ref::Leaf);
                }
                match self.s.def(t).field(key) {
                    Some(r) => Expect::Ref(r),
                    None => {
                        self.record(key, span, t);
                        Expect::Ref(Ref::Leaf)
                    }
                }
            }
            Expect::Route(r) => match r.step(&Step::Key(Cow::Borrowed(key))) {
                Some(next) => self.enter(next),
                None => Expect::Ref(Ref::Leaf),
            },
            Expect::Ref(_) => Expect::Ref(Ref::Leaf),
        }
    }

    /// Follows a route: at a template's end, the pod template's type.
    fn enter<'r>(&mut self, next: &'r Route) -> Expect<'r> {
        match (next.template, next.root.or(self.s.pod_template)) {
            (Some(i), Some(t)) => {
                self.template = i;
                // A List's item is an object of its own: its paths start below the step
                // about to be taken.
                if next.root.is_some() {
                    self.base = self.path.len() + 1;
                }
                Expect::Ref(Ref::Type(t))
            }
            _ => Expect::Route(next),
        }
    }

    /// Skips the rest of a collection whose start was read.
    fn skip(&mut self) -> Result<(), Stop> {
        let mut depth = 1usize;
        while depth > 0 {
            match self.next()? {
                Ev::MapStart | Ev::SeqStart => depth += 1,
                Ev::MapEnd | Ev::SeqEnd => depth -= 1,
                Ev::End => return Err(Stop),
                _ => {}
            }
        }
        Ok(())
    }

    /// Records an unknown `key` of an object of type `t`.
    fn record(&mut self, key: &str, span: Option<Range<usize>>, t: u16) {
        let Some(range) = span else {
            return;
        };
        let def = self.s.def(t);
        let suggestion = crate::suggest::closest(key, &def.names).map(Str::from);
        let belongs_to = match suggestion {
            Some(_) => None,
            None => self.home_of(key),
        };
        self.out.push((
            self.template,
            UnknownField {
                offset: u32::try_from(range.start).unwrap_or(u32::MAX),
                len: u32::try_from(range.len()).unwrap_or(0),
                key: Str::from(key),
                parent: render(&self.path[self.base..]),
                suggestion,
                belongs_to,
            },
        ));
    }

    /// Where a field named `key` belongs when the object it was written in has none: the
    /// nearest enclosing object that has it (a container's `tolerations` belong to the pod
    /// spec), else an object a few levels below that has it (a Deployment's
    /// `spec.tolerations` belong to `spec.template.spec`).
    fn home_of(&self, key: &str) -> Option<String> {
        let (t, _) = *self.types.last()?;
        for &(outer, depth) in self.types.iter().rev().skip(1) {
            if self.s.def(outer).field(key).is_some() {
                return Some(render(&self.path[..depth]));
            }
        }
        let below = self.below(t, key, 3)?;
        let here = render(&self.path);
        Some(match here.is_empty() {
            true => below,
            false => format!("{here}.{below}"),
        })
    }

    /// The path from an object of type `t` to an object field that has `key`, through at
    /// most `depth` objects (not lists).
    fn below(&self, t: u16, key: &str, depth: usize) -> Option<String> {
        if depth == 0 {
            return None;
        }
        let def = self.s.def(t);
        let mut found: Option<String> = None;
        for (name, r) in &def.fields {
            if let Ref::Type(inner) = r {
                if self.s.def(*inner).field(key).is_some() {
                    return Some((*name).to_string());
                }
                if found.is_none() {
                    found = (self.below(*inner, key, depth - 1)).map(|p| format!("{name}.{p}"));
                }
            }
        }
        found
    }
}

/// A path in Kubernetes' notation: `spec.template.spec.containers[0]`.
fn render(path: &[Step]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Step::Index(i) => {
                s.push('[');
                s.push_str(&i.to_string());
                s.push(']');
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str, api: &str, kind: &str) -> Vec<(String, String, Option<String>)> {
        unknown_fields(text, api, kind, &Entry::Object, None)
            .into_iter()
            .map(|(_, f)| {
                let at = text[f.offset as usize..][..f.len as usize].to_string();
                let hint = f.suggestion.map(|s| s.to_string()).or(f.belongs_to);
                (f.parent, at, hint)
            })
            .collect()
    }

    #[test]
    fn every_line_is_read() {
        let s = schemas();
        let types = DATA.lines().filter(|l| l.starts_with("type ")).count();
        let fields = DATA.lines().filter(|l| l.starts_with(' ')).count();
        let roots = DATA.lines().filter(|l| l.starts_with("root ")).count();
        assert_eq!(s.types.len(), types);
        assert_eq!(
            s.types.iter().map(|t| t.fields.len()).sum::<usize>(),
            fields
        );
        assert_eq!(s.roots.len(), roots);
        assert!(s.pod_template.is_some());
        assert!(s.checks("karpenter.sh/v1", "NodePool"));
        assert!(s.checks("karpenter.k8s.aws/v1", "EC2NodeClass"));
        assert!(s.checks("apps/v1", "Deployment"));
    }

    #[test]
    fn a_nodepool_taint_is_unknown_and_taints_is_meant() {
        let yaml = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: a\n  labels: {x: y}\nspec:\n  template:\n    spec:\n      taint:\n        - key: a\n          effect: NoSchedule\n      requirements: []\n  limits:\n    cpu: 10\n    anything: 1\n";
        assert_eq!(
            fields(yaml, "karpenter.sh/v1", "NodePool"),
            [(
                "spec.template.spec".to_string(),
                "taint".to_string(),
                Some("taints".to_string())
            )]
        );
    }

    #[test]
    fn keys_of_maps_and_unchecked_values_are_accepted() {
        let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, labels: {nodeselector: x}}\nspec:\n  template:\n    spec:\n      nodeSelector: {anything: x}\n      securityContext: {whatever: 1}\n      containers:\n        - name: c\n          env: [{name: a, valueFrom: {x: 1}}]\n          resources: {limits: {cpu: 1, nvidia.com/gpu: 1}}\n";
        assert!(fields(yaml, "apps/v1", "Deployment").is_empty());
    }

    #[test]
    fn misplaced_tolerations_name_where_they_belong() {
        let yaml = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  tolerations: []\n  template:\n    spec:\n      nodeselector: {a: b}\n      containers:\n        - name: c\n          tolerations: []\n";
        assert_eq!(
            fields(yaml, "apps/v1", "Deployment"),
            [
                (
                    "spec".into(),
                    "tolerations".into(),
                    Some("spec.template.spec".into())
                ),
                (
                    "spec.template.spec".into(),
                    "nodeselector".into(),
                    Some("nodeSelector".into())
                ),
                (
                    "spec.template.spec.containers[0]".into(),
                    "tolerations".into(),
                    Some("spec.template.spec".into())
                ),
            ]
        );
    }

    #[test]
    fn crd_templates_are_checked_only_at_their_paths() {
        let yaml = "apiVersion: ray.io/v1\nkind: RayCluster\nspec:\n  anything: 1\n  workerGroupSpecs:\n    - template:\n        spec:\n          toleration: []\n    - template:\n        spec:\n          affinity: {nodeAffinity: {requiredDuringScheduling: {}}}\n";
        let entry = Entry::Templates(vec![
            "spec.workerGroupSpecs[0].template".into(),
            "spec.workerGroupSpecs[1].template".into(),
        ]);
        let found: Vec<(usize, String)> =
            unknown_fields(yaml, "ray.io/v1", "RayCluster", &entry, None)
                .into_iter()
                .map(|(i, f)| (i, f.key.to_string()))
                .collect();
        assert_eq!(
            found,
            [
                (0, "toleration".into()),
                (1, "requiredDuringScheduling".into())
            ]
        );
    }

    #[test]
    fn merge_keys_aliases_and_broken_yaml_report_nothing() {
        let yaml = "apiVersion: v1\nkind: Pod\nspec:\n  <<: {x: 1}\n  $patch: replace\n  affinity: &a {nodeAffinity: {}}\n";
        assert!(fields(yaml, "v1", "Pod").is_empty());
        assert!(fields("apiVersion: v1\nkind: Pod\nspec: {taint: [\n", "v1", "Pod").is_empty());
    }
}
