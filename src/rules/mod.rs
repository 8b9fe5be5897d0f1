//! Rules stage: the registry, the [`Rule`] trait and the engine that runs every rule over
//! every object in parallel and sorts what they find, so output is identical at any thread
//! count.
//!
//! A rule lives in one file named after its id (`untolerated-taint` → `untolerated_taint.rs`),
//! with its doc in `lints/<id>.md` and fixtures in `fixtures/<id>/`; adding one touches only
//! those and one line in [`registry`].

mod in_tree_storage_plugin;
mod missing_limit_range;
mod missing_resource_requests;

use crate::diagnostic::{Finding, Severity};
use crate::index::Index;
use crate::model::Object;
use rayon::prelude::*;

/// What every rule can see.
pub struct Context<'a> {
    pub index: &'a Index<'a>,
}

pub trait Rule: Send + Sync {
    fn id(&self) -> &'static str;
    fn default_severity(&self) -> Severity;
    /// One line for `karplint rules`.
    fn summary(&self) -> &'static str;
    /// `lints/<id>.md`, embedded: the `karplint explain` text.
    fn doc(&self) -> &'static str;
    /// Findings about one object. Called for every object that is linted (not context).
    fn check(&self, _obj: &Object, _cx: &Context, _out: &mut Vec<Finding>) {}
    /// Findings that need the whole tree at once (per namespace, per NodePool, …).
    fn check_all(&self, _cx: &Context, _out: &mut Vec<Finding>) {}
}

/// Every rule, in id order. `parse-error` is produced by the parse stage, not here.
pub fn registry() -> Vec<Box<dyn Rule>> {
    vec![
        Box::new(in_tree_storage_plugin::InTreeStoragePlugin),
        Box::new(missing_limit_range::MissingLimitRange),
        Box::new(missing_resource_requests::MissingResourceRequests),
    ]
}

/// Rules that are not in the registry because another stage produces their findings.
pub const BUILTIN_RULES: &[(&str, Severity, &str)] = &[
    (
        "parse-error",
        Severity::Error,
        "a YAML syntax error, duplicate key or invalid value of a field karplint reads",
    ),
    (
        "unused-suppression",
        Severity::Info,
        "a karplint-ignore comment or karplint.io/ignore annotation that matched no finding",
    ),
];

/// The `lints/<id>.md` text of a rule in [`BUILTIN_RULES`].
pub fn builtin_doc(id: &str) -> Option<&'static str> {
    match id {
        "parse-error" => Some(include_str!("../../lints/parse-error.md")),
        "unused-suppression" => Some(include_str!("../../lints/unused-suppression.md")),
        _ => None,
    }
}

/// Every rule id, built-in and registered, sorted: what config and suppressions may name.
pub fn known_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = BUILTIN_RULES.iter().map(|r| r.0).collect();
    ids.extend(registry().iter().map(|r| r.id()));
    ids.sort_unstable();
    ids
}

/// Runs every rule over the index; findings on context objects are dropped.
pub fn run(rules: &[Box<dyn Rule>], index: &Index) -> Vec<Finding> {
    let cx = Context { index };
    let objects = index.objects();
    let mut findings: Vec<Finding> = rules
        .par_iter()
        .flat_map_iter(|rule| {
            let mut out = Vec::new();
            rule.check_all(&cx, &mut out);
            out
        })
        .collect();
    findings.par_extend(
        objects
            .par_iter()
            .filter(|o| !o.context)
            .flat_map_iter(|o| {
                let mut out = Vec::new();
                for rule in rules {
                    rule.check(o, &cx, &mut out);
                }
                out
            }),
    );
    findings.retain(|f| !f.on_context);
    findings
}
