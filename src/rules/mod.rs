//! Rules stage: the [`Rule`] trait, [`declare_rule!`], the registry, and what a rule's
//! hooks see ([`Context`], [`Placed`]) and return ([`Findings`]). The engine (`engine`)
//! decides when the hooks run.
//!
//! A rule lives in one file named after its id (`missing-limit-range` →
//! `missing_limit_range.rs`; the rules of Karpenter's scheduler stages in `scheduling/`),
//! with its doc in `lints/<id>.md` and fixtures in `fixtures/<id>/`; adding one touches those
//! and one line in the `rules!` list below.

mod scheduling;
pub(crate) use scheduling::claimed;

pub(crate) use scheduling::{pending_on, static_capacity_takes};

use crate::diagnostic::{Finding, Severity, Subject};
use crate::facts::{WorkloadFacts, Workloads};
use crate::index::Index;
use crate::karpenter::catalog::Catalog;
use crate::karpenter::cluster::ClusterFacts;
use crate::karpenter::sim::{Simulator, Verdict};
use crate::karpenter::topology::Reach;
use crate::model::Object;
use crate::model::workload::LabelSelector;
use std::cell::OnceCell;

/// What every rule can see: the objects the run holds, the simulator and the capacity
/// outside Karpenter. Built once the cluster phase has parsed the held documents.
///
/// Most workloads are checked file by file as they are parsed and then dropped (see
/// `engine`): a per-object hook ([`Rule::check_object`]) sees one object; questions about the
/// other workloads are asked in [`Rule::check_run`] of their [`WorkloadFacts`], or by
/// filing a finding with [`Findings::defer`].
pub struct Context<'a, 'c> {
    pub index: &'a Index<'a>,
    /// The Karpenter simulator, when the run has NodePools.
    pub sim: Option<Simulator<'a, 'c>>,
    /// Capacity outside Karpenter (node groups, Nodes, Fargate) and subnets.
    pub cluster: ClusterFacts,
    pub catalog: &'c Catalog,
    /// The resources each namespace's LimitRanges give a default request for.
    pub defaulted: crate::facts::Defaulted,
}

/// A rule's identity, declared once in its file with [`declare_rule!`].
#[derive(Debug)]
pub struct RuleMeta {
    pub id: &'static str,
    pub severity: Severity,
    /// One line for `karplint rules`.
    pub summary: &'static str,
    /// `lints/<id>.md`, embedded: the `karplint explain` text.
    pub doc: &'static str,
}

impl RuleMeta {
    /// A finding of this rule, at its default severity, on `span` of `subject`.
    pub fn finding(
        &self,
        subject: &impl Subject,
        span: crate::model::Span,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(self.id, self.severity, subject, span, message)
    }

    /// A finding of this rule at another severity than its default (a rule whose cases
    /// differ in weight, such as a deprecation that has become an error).
    pub fn finding_with(
        &self,
        severity: Severity,
        subject: &impl Subject,
        span: crate::model::Span,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(self.id, severity, subject, span, message)
    }
}

/// Declares a rule: its unit struct and `META` with the default severity, the
/// summary and the doc read from `lints/<id>.md`.
///
/// ```ignore
/// declare_rule!(UntoleratedTaint, "untolerated-taint", Error, "no NodePool can take the pod: …");
/// ```
macro_rules! declare_rule {
    ($name:ident, $id:literal, $severity:ident, $summary:literal) => {
        pub struct $name;

        pub const META: $crate::rules::RuleMeta = $crate::rules::RuleMeta {
            id: $id,
            severity: $crate::diagnostic::Severity::$severity,
            summary: $summary,
            doc: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/lints/", $id, ".md")),
        };

        impl $crate::rules::Declared for $name {
            fn meta(&self) -> &'static $crate::rules::RuleMeta {
                &META
            }
        }
    };
}
pub(crate) use declare_rule;

/// What [`declare_rule!`] implements: the rule's [`RuleMeta`].
pub trait Declared {
    fn meta(&self) -> &'static RuleMeta;
}

/// A rule's hooks, named for when they run. Both are optional.
pub trait Rule: Declared + Send + Sync {
    /// Findings about one linted object (never a `--context` one), with Karpenter's verdict
    /// on its pod template already computed. Runs while files are still being parsed.
    fn check_object(&self, _o: &Placed, _cx: &Context, _out: &mut Findings) {}
    /// Findings that need the whole run: the held objects in [`Context::index`] and every
    /// workload's facts. Runs once, after the last file.
    fn check_run(&self, _cx: &Context, _workloads: &Workloads, _out: &mut Vec<Finding>) {}
}

/// One object as [`Rule::check_object`] sees it: for a linted workload, Karpenter's
/// verdict on its pod template, and its reach over the NodePools when a rule asks.
pub struct Placed<'o> {
    pub obj: &'o Object,
    verdict: Option<Verdict>,
    reach: OnceCell<Option<Reach>>,
}

impl<'o> Placed<'o> {
    /// Decides where Karpenter would put the pods of `obj` (a linted workload, when the run
    /// has NodePools).
    pub fn new(obj: &'o Object, cx: &Context) -> Self {
        let verdict = cx.sim.as_ref().and_then(|sim| {
            let w = obj.workload().filter(|_| !obj.context)?;
            Some(sim.schedule(obj, w.pod_spec()?, false))
        });
        Placed {
            obj,
            verdict,
            reach: OnceCell::new(),
        }
    }

    /// Where Karpenter would put the pods of a linted workload.
    pub fn verdict(&self) -> Option<&Verdict> {
        self.verdict.as_ref()
    }

    /// [`Reach::of`] the pod template, computed at the first question.
    pub fn reach(&self, cx: &Context) -> Option<&Reach> {
        let sim = cx.sim.as_ref()?;
        let obj = self.obj;
        self.reach
            .get_or_init(|| Reach::of(sim, obj, obj.workload()?.pod_spec()?))
            .as_ref()
    }

    /// A linted workload Karpenter would provision for (scheduled or pending, not ignored),
    /// with the simulator and its pod spec: what topology and affinity rules examine.
    pub fn provisioned<'s, 'a, 'c>(
        &'s self,
        cx: &'s Context<'a, 'c>,
    ) -> Option<(
        &'s Simulator<'a, 'c>,
        &'o crate::model::workload::Workload,
        &'o crate::model::workload::PodSpec,
    )> {
        let sim = cx.sim.as_ref()?;
        let w = self.obj.workload()?;
        let spec = w.pod_spec()?;
        match self.verdict()? {
            Verdict::Schedules(_) | Verdict::Pending(_) => Some((sim, w, spec)),
            Verdict::Ignored(_) | Verdict::NotProvisionable => None,
        }
    }
}

/// What the per-object hooks find: findings, findings that stand only unless some
/// workload of the run (known once every file is parsed) answers a question, and findings
/// on a pod template's replicas that the batch settles.
#[derive(Default)]
pub struct Findings {
    pub found: Vec<Finding>,
    pub deferred: Vec<(Finding, Unless)>,
    pub settled: Vec<(Finding, Settle)>,
}

/// What a scheduling finding on one pod template says of its workload's replicas, for the
/// batch to settle once every pod of the run is placed ([`scheduling::settle`]).
#[derive(Debug, Clone, Copy)]
pub struct Settle {
    /// The workload's place in the run's order ([`crate::facts::order`]).
    pub order: (usize, usize, usize),
    /// How many replicas the finding says stay Pending; `None` for every one.
    pub pending: Option<usize>,
}

/// The question that withdraws a deferred finding: does some workload of the run…
#[derive(Debug)]
pub enum Unless {
    /// …other than object `except`, create pods that `selector` selects, in one of
    /// `namespaces` (any namespace when `None`)?
    PodsSelected {
        except: usize,
        namespaces: Option<Box<[String]>>,
        selector: Option<LabelSelector>,
    },
    /// …pass this test?
    Workload(fn(&WorkloadFacts) -> bool),
}

impl Unless {
    fn answered_by(&self, w: &WorkloadFacts) -> bool {
        match self {
            Unless::PodsSelected {
                except,
                namespaces,
                selector,
            } => {
                w.id != *except
                    && namespaces
                        .as_ref()
                        .is_none_or(|ns| ns.iter().any(|n| *n == w.namespace))
                    && crate::karpenter::topology::selects(selector.as_ref(), &w.pod_labels)
            }
            Unless::Workload(test) => test(w),
        }
    }
}

impl Findings {
    pub fn push(&mut self, f: Finding) {
        self.found.push(f);
    }

    /// Reports `f` at the end of the run unless some workload answers `unless`.
    pub fn defer(&mut self, f: Finding, unless: Unless) {
        self.deferred.push((f, unless));
    }

    /// Reports `f`, a finding that `pending` replicas of workload `obj` stay Pending
    /// (`None`: every one), as the batch settles it.
    pub fn settle(&mut self, f: Finding, obj: &Object, pending: Option<usize>) {
        let order = crate::facts::order(obj);
        self.settled.push((f, Settle { order, pending }));
    }

    pub fn merge(&mut self, other: Findings) {
        self.found.extend(other.found);
        self.deferred.extend(other.deferred);
        self.settled.extend(other.settled);
    }
}

impl Extend<Finding> for Findings {
    fn extend<I: IntoIterator<Item = Finding>>(&mut self, iter: I) {
        self.found.extend(iter);
    }
}

impl<'a, 'c> Context<'a, 'c> {
    /// Builds the facts every rule shares: the simulator (when there are NodePools) and the
    /// capacity outside Karpenter, with `stated` (the config's `cluster:`) merged in.
    pub fn new(index: &'a Index<'a>, catalog: &'c Catalog, stated: &ClusterFacts) -> Self {
        let mut cluster = ClusterFacts::from_index(index);
        cluster.merge(stated);
        let sim = index.nodepools().next().is_some().then(|| {
            Simulator::for_version(index, catalog, cluster.admission, cluster.karpenter)
                .with_zones(&cluster.zones)
                .with_node_overlays(!cluster.node_overlays_off)
                .with_price_region(cluster.region().0)
        });
        Context {
            index,
            sim,
            cluster,
            catalog,
            defaulted: crate::facts::Defaulted::new(index),
        }
    }
}

/// Lists the rules, one line each in id order: `mod module::Rule` declares the rule's
/// module `src/rules/module.rs` and registers its rule; `folder::Rule` registers a rule of a
/// folder of rules declared above (`scheduling`). Expands to [`registry`]. The modules it
/// declares come after [`declare_rule!`], so that macro is in scope in every rule file.
macro_rules! rules {
    (@list [$($done:path,)*]) => {
        /// Every rule, in id order. `parse-error` and `unused-suppression` are produced by
        /// the parse and suppression stages ([`BUILTIN_RULES`]).
        pub fn registry() -> &'static [&'static dyn Rule] {
            &[$(&$done),*]
        }
    };
    (@list [$($done:path,)*] mod $module:ident :: $rule:ident, $($rest:tt)*) => {
        mod $module;
        rules!(@list [$($done,)* $module::$rule,] $($rest)*);
    };
    (@list [$($done:path,)*] $folder:ident :: $rule:ident, $($rest:tt)*) => {
        rules!(@list [$($done,)* $folder::$rule,] $($rest)*);
    };
    ($($line:tt)*) => {
        rules!(@list [] $($line)*);
    };
}

rules! {
    mod consolidation_blocked::ConsolidationBlocked,
    mod deprecated_karpenter_api::DeprecatedKarpenterApi,
    mod duplicate_object::DuplicateObject,
    mod in_tree_storage_plugin::InTreeStoragePlugin,
    scheduling::IncompatibleRequirements,
    mod karpenter_label_on_static_node::KarpenterLabelOnStaticNode,
    mod limit_range_violation::LimitRangeViolation,
    mod missing_csi_startup_taint::MissingCsiStartupTaint,
    mod missing_device_plugin::MissingDevicePlugin,
    mod missing_limit_range::MissingLimitRange,
    mod missing_resource_requests::MissingResourceRequests,
    scheduling::NoInstanceTypeFits,
    mod pvc_workload_not_spread::PvcWorkloadNotSpread,
    scheduling::ReplicasExceedCapacity,
    mod restricted_label_selector::RestrictedLabelSelector,
    mod startup_taint_without_agent::StartupTaintWithoutAgent,
    mod subnet_ip_exhaustion::SubnetIpExhaustion,
    mod unknown_field::UnknownField,
    mod unsatisfiable_pod_affinity::UnsatisfiablePodAffinity,
    mod unsatisfiable_topology_spread::UnsatisfiableTopologySpread,
    scheduling::UntoleratedTaint,
    mod volume_zone_conflict::VolumeZoneConflict,
    mod windows_os_mismatch::WindowsOsMismatch,
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

/// The web page of a rule's doc (`lints/<id>.md` in the repository, at this release's
/// tag): `helpUri` in SARIF, `url` in JSON.
pub fn doc_url(id: &str) -> String {
    format!(
        "{}/blob/v{}/lints/{id}.md",
        env!("CARGO_PKG_REPOSITORY"),
        env!("CARGO_PKG_VERSION")
    )
}

/// Every rule id, built-in and registered, sorted: what config and suppressions may name.
pub(crate) fn known_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = BUILTIN_RULES.iter().map(|r| r.0).collect();
    ids.extend(registry().iter().map(|r| r.meta().id));
    ids.sort_unstable();
    ids
}

/// Runs every rule's per-object hook on one linted object; findings on context objects
/// are dropped.
pub(crate) fn check_object(cx: &Context, o: &Placed, out: &mut Findings) {
    let before = out.found.len();
    for rule in registry() {
        rule.check_object(o, cx, out);
    }
    let mut kept = before;
    for i in before..out.found.len() {
        if !out.found[i].on_context {
            out.found.swap(kept, i);
            kept += 1;
        }
    }
    out.found.truncate(kept);
}

/// Runs the hooks that need the whole run, once every workload's facts are in: each rule's
/// [`Rule::check_run`], then the deferred findings no workload answered and the settled
/// findings as the batch settles them.
pub(crate) fn check_run(cx: &Context, workloads: &Workloads, per_object: Findings) -> Vec<Finding> {
    let Findings {
        found,
        deferred,
        settled,
    } = per_object;
    use rayon::prelude::*;
    let mut findings: Vec<Finding> = registry()
        .par_iter()
        .flat_map_iter(|rule| {
            let mut out = Vec::new();
            rule.check_run(cx, workloads, &mut out);
            out
        })
        .collect();
    findings.extend(unanswered(deferred, workloads));
    findings.extend(scheduling::settle(settled, workloads));
    findings.retain(|f| !f.on_context);
    let mut all = found;
    all.append(&mut findings);
    all
}

/// The deferred findings no workload answers. A [`Unless::Workload`] test is put to the
/// workloads once, however many findings wait on it: a tree of many copies holds as many
/// more findings as workloads.
fn unanswered(
    deferred: Vec<(Finding, Unless)>,
    workloads: &Workloads,
) -> impl Iterator<Item = Finding> {
    // Keyed by the test's address: one test, one answer.
    let mut tests: Vec<(usize, bool)> = Vec::new();
    deferred.into_iter().filter_map(move |(f, unless)| {
        let answered = match unless {
            Unless::Workload(test) => {
                let key = test as usize;
                match tests.iter().find(|(k, _)| *k == key) {
                    Some(&(_, answer)) => answer,
                    None => {
                        let answer = workloads.iter().any(test);
                        tests.push((key, answer));
                        answer
                    }
                }
            }
            other => workloads.iter().any(|w| other.answered_by(w)),
        };
        (!answered).then_some(f)
    })
}

/// How many NodePools the notes on what each offers name, before one note counts the rest.
const OFFERS_NOTES: usize = 5;

/// Related notes naming the values of `key` each of `pools` offers, on the requirement that
/// defines them; past [`OFFERS_NOTES`], one note says how many more.
pub(crate) fn offers_notes(
    f: crate::diagnostic::Finding,
    sim: &crate::karpenter::sim::Simulator,
    pools: &[usize],
    key: &str,
) -> crate::diagnostic::Finding {
    f.related_capped(
        pools,
        OFFERS_NOTES,
        |&i| {
            let p = &sim.pools[i];
            crate::diagnostic::Related::on(
                p.obj,
                p.requirement_span(key),
                format!(
                    "NodePool \"{}\" offers {key} {}",
                    p.name,
                    crate::karpenter::topology::offered_by(sim, key, i).render_offer()
                ),
            )
        },
        |n| format!("and {n} more NodePool(s) this pod can use"),
    )
}
