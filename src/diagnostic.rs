//! What rules produce: a [`Finding`] with a rule id, a severity, the exact span to point
//! at, a help text and related locations on other objects. The report stage renders them;
//! nothing here formats output.

use crate::model::de::Str;
use crate::model::{Object, SourceId, Span};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The object a finding is about, as printed in JSON. Its strings are the model's (inline
/// up to 24 bytes): a large tree has thousands of findings.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ObjectRef {
    #[serde(rename = "apiVersion")]
    pub api_version: Str,
    pub kind: Str,
    pub namespace: Option<Str>,
    pub name: Str,
    /// Which pod template of a workload CRD (`workerGroupSpecs[gpu]`, `Worker`): one
    /// object of the file is linted as one workload per template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<Str>,
}

impl ObjectRef {
    pub fn of(o: &Object) -> Self {
        ObjectRef {
            api_version: o.api_version.clone(),
            kind: o.kind_name.clone(),
            namespace: o.namespace().map(Str::from),
            name: o.name().into(),
            role: o.workload().and_then(|w| w.role()).map(Str::from),
        }
    }

    /// The same object without a role: the whole object, not one of its pod templates.
    pub fn whole(mut self) -> Self {
        self.role = None;
        self
    }

    /// The same object, whatever the role: a suppression on a CRD's own metadata covers
    /// every one of its pod templates.
    pub fn same_object(&self, other: &ObjectRef) -> bool {
        (&self.api_version, &self.kind, &self.namespace, &self.name)
            == (
                &other.api_version,
                &other.kind,
                &other.namespace,
                &other.name,
            )
    }
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {}/{}", self.kind, ns, self.name)?,
            None => write!(f, "{} {}", self.kind, self.name)?,
        }
        match &self.role {
            Some(role) => write!(f, " ({role})"),
            None => Ok(()),
        }
    }
}

/// What a finding can be about: a typed object, or the facts of a workload whose model
/// has been dropped (`facts::WorkloadFacts`).
pub trait Subject {
    fn source(&self) -> SourceId;
    fn object_ref(&self) -> ObjectRef;
    /// Read through `--context`: facts only, never reported on.
    fn is_context(&self) -> bool;
}

impl Subject for Object {
    fn source(&self) -> SourceId {
        self.source
    }
    fn object_ref(&self) -> ObjectRef {
        ObjectRef::of(self)
    }
    fn is_context(&self) -> bool {
        self.context
    }
}

/// Another place that explains a finding: the NodePool that rejected a pod, the PVC, …
#[derive(Debug, Clone)]
pub struct Related {
    pub source: SourceId,
    pub span: Span,
    pub message: String,
}

impl Related {
    /// A related location on `obj`.
    pub fn on(obj: &impl Subject, span: Span, message: impl Into<String>) -> Self {
        Related {
            source: obj.source(),
            span,
            message: exact(message.into()),
        }
    }
}

/// Another object a finding about several objects at once (a namespace's workloads) could
/// stand on, with the label it would carry there: see [`Finding::also_on`].
#[derive(Debug, Clone)]
pub struct Place {
    pub source: SourceId,
    pub span: Span,
    pub label: String,
    pub object: Box<ObjectRef>,
}

#[derive(Debug, Clone)]
pub struct Finding {
    pub rule: &'static str,
    pub severity: Severity,
    pub message: String,
    pub help: String,
    pub source: SourceId,
    pub span: Span,
    /// Text of the primary label under the span.
    pub label: String,
    /// Boxed: the finding list of a large tree is thousands long.
    pub object: Option<Box<ObjectRef>>,
    pub related: Vec<Related>,
    /// The finding is about an object read through `--context`: dropped before reporting.
    pub on_context: bool,
    /// The other places a finding about several objects at once could stand, in order.
    /// Suppression moves it to the first of its places that no suppression covers, and
    /// hides it only when every place is covered, so which file sorts first never decides
    /// whether it is reported.
    pub also_on: Vec<Place>,
    /// Where a finding moved from a rendered kustomization to its file stood in the
    /// rendered output: its object's `karplint.io/ignore` annotation is read there.
    pub rendered_at: Option<(SourceId, Span)>,
    /// The cluster of `clusters:` the finding was judged in, when it is one cluster's.
    pub cluster: Option<Str>,
}

impl Finding {
    /// A finding on `span` of `obj`.
    pub fn new(
        rule: &'static str,
        severity: Severity,
        obj: &impl Subject,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            object: Some(Box::new(obj.object_ref())),
            on_context: obj.is_context(),
            ..Finding::at_source(rule, severity, obj.source(), span, message)
        }
    }

    /// A finding on a source rather than an object (syntax errors).
    pub fn at_source(
        rule: &'static str,
        severity: Severity,
        source: SourceId,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            rule,
            severity,
            message: exact(message.into()),
            help: String::new(),
            source,
            span,
            label: String::new(),
            object: None,
            related: Vec::new(),
            on_context: false,
            also_on: Vec::new(),
            rendered_at: None,
            cluster: None,
        }
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = exact(help.into());
        self
    }

    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = exact(label.into());
        self
    }

    /// Another object the finding could stand on, at `span` with `label`, if suppressions
    /// cover its place (see [`Finding::also_on`]).
    pub fn also_on(mut self, obj: &impl Subject, span: Span, label: impl Into<String>) -> Self {
        self.also_on.push(Place {
            source: obj.source(),
            span,
            label: exact(label.into()),
            object: Box::new(obj.object_ref()),
        });
        self
    }

    /// Related notes for the first `cap` of `items`; when some are left out, one more note
    /// at the last one shown says how many (`more(n)`: "and 3 more workloads …"), so no
    /// list is cut in silence.
    pub fn related_capped<T>(
        mut self,
        items: &[T],
        cap: usize,
        note: impl Fn(&T) -> Related,
        more: impl FnOnce(usize) -> String,
    ) -> Self {
        self.related.extend(items.iter().take(cap).map(note));
        if let (Some(left), Some(last)) = (items.len().checked_sub(cap), self.related.last())
            && left > 0
        {
            let (source, span) = (last.source, last.span);
            self.related.push(Related {
                source,
                span,
                message: exact(more(left)),
            });
        }
        self
    }

    pub fn related(mut self, obj: &impl Subject, span: Span, message: impl Into<String>) -> Self {
        self.related.push(Related {
            source: obj.source(),
            span,
            message: exact(message.into()),
        });
        self
    }
}

/// A finding's text without the room `format!` leaves for growth (up to as much again):
/// a large tree's findings hold megabytes of text until they are reported.
fn exact(mut s: String) -> String {
    s.shrink_to_fit();
    s
}
