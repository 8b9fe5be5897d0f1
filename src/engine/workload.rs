//! The workload phase: every document the cluster phase did not take is parsed now, a few
//! files per task, its objects checked by the per-object hooks, their facts and plan rows
//! taken, and the objects dropped.
//!
//! A task parses its files and then checks their objects together: interleaved file by
//! file, the parser's and the simulator's working sets evict each other from the caches.
//! If a streamed document turns out to hold an object of a held kind (its `kind` spelled
//! with an escape, an alias, or on its own line), the phase is abandoned: the files it has
//! not reached are still parsed, so that one more attempt finds every miss, but no longer
//! checked.

use super::cluster::FileState;
use super::sources::{self, ParsedFile};
use super::{LintOptions, ReadError};
use crate::facts::WorkloadFacts;
use crate::karpenter::cluster;
use crate::karpenter::scheduler::PendingWorkload;
use crate::karpenter::sim::{Simulator, Verdict};
use crate::model::Object;
use crate::model::identity::{self, Identity};
use crate::parse::Part;
use crate::progress::Progress;
use crate::report::{Source, plan};
use crate::rules::{self, Context, Findings, Placed};
use crate::suppress::Annotations;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A judged workload's pods for the batch, and which object of the cluster it defines.
pub(super) struct Pending {
    /// Its place in the run's order.
    pub key: (usize, usize, usize),
    /// Which object of the cluster it defines: a later definition of one object whose pods
    /// are the same to the batch is placed once.
    pub identity: Option<Identity>,
    pub pods: PendingWorkload,
}

/// Streamed files per task, parsed before their objects are checked together.
const FILES_PER_TASK: usize = 16;

/// What checking objects leaves behind.
#[derive(Default)]
pub(super) struct Checked {
    pub findings: Findings,
    /// One per workload, linted or context.
    pub facts: Vec<WorkloadFacts>,
    /// `karplint plan` rows, keyed by the object's place in the run's order.
    pub rows: Vec<((usize, usize, usize), plan::PlanRow)>,
    /// Each judged workload's pods, for the batch the verdict phase schedules.
    pub pending: Vec<Pending>,
    /// A linted workload runs only outside Karpenter, and the run knows no static capacity.
    pub static_only: bool,
}

impl Checked {
    /// Checks `o` (unless it is context), then takes its facts, its pods for the batch and
    /// its plan row.
    fn object(&mut self, o: &Object, cx: &Context, plan: Option<bool>) {
        let placed = Placed::new(o, cx);
        let f = &self.findings;
        let before = (f.found.len(), f.deferred.len(), f.settled.len());
        if !o.context {
            rules::check_object(cx, &placed, &mut self.findings);
        }
        if let Some(mut facts) = WorkloadFacts::of(o, placed.verdict(), cx.index, &cx.defaulted) {
            let f = &self.findings;
            let found = f.found[before.0..].iter();
            let deferred = f.deferred[before.1..].iter().map(|(f, _)| f);
            let settled = &f.settled[before.2..];
            facts.claimed = rules::claimed(found.clone().chain(deferred.clone()), settled);
            let settled = settled.iter().map(|(f, _)| f);
            facts.reported = found
                .chain(deferred)
                .chain(settled)
                .map(|f| f.rule)
                .collect();
            facts.static_capacity = rules::static_capacity_takes(cx, o);
            facts.pending_on = rules::pending_on(cx, &placed);
            self.facts.push(facts);
        }
        let key = crate::facts::order(o);
        if let (Some(count_types), Some(sim), Some(verdict)) = (plan, &cx.sim, placed.verdict()) {
            let row = if count_types {
                plan_row(o, sim)
            } else {
                plan::row(o, sim, verdict)
            };
            self.rows.extend(row.map(|row| (key, row)));
        }
        // Karpenter provisions for these pods: they take part in the batch.
        if let (Some(sim), Some(Verdict::Schedules(_) | Verdict::Pending(_))) =
            (&cx.sim, placed.verdict())
        {
            let pods = o
                .workload()
                .and_then(|w| PendingWorkload::new(sim, o, w.pod_spec()?, w.replica_count()));
            self.pending.extend(pods.map(|pods| Pending {
                key,
                identity: identity::definition(o),
                pods,
            }));
        }
        if !self.static_only && !o.context && !cx.cluster.has_static_capacity() {
            self.static_only = (o.workload().and_then(|w| w.pod_spec()))
                .is_some_and(|spec| cluster::static_only(o, spec).is_some());
        }
    }

    pub(super) fn merge(mut self, other: Checked) -> Checked {
        self.findings.merge(other.findings);
        self.facts.extend(other.facts);
        self.rows.extend(other.rows);
        self.pending.extend(other.pending);
        self.static_only |= other.static_only;
        self
    }
}

/// The `karplint plan` row of a judged workload. The lint's verdict stops at the first
/// fitting instance type; the plan counts them all, so it asks the simulator again.
fn plan_row(o: &Object, sim: &Simulator) -> Option<plan::PlanRow> {
    let w = o.workload()?;
    let verdict = sim.schedule(o, w.pod_spec()?, true);
    plan::row(o, sim, &verdict)
}

/// Checks `objects` in parallel.
pub(super) fn check_all(objects: &[Object], cx: &Context, plan: Option<bool>) -> Checked {
    objects
        .par_iter()
        .with_min_len(16)
        .fold(Checked::default, |mut acc, o| {
            acc.object(o, cx, plan);
            acc
        })
        .reduce(Checked::default, Checked::merge)
}

/// What the workload phase leaves.
#[derive(Default)]
pub(super) struct WorkloadPhase {
    pub checked: Checked,
    /// The `karplint.io/ignore` annotations of the streamed objects.
    pub annotations: Annotations,
    /// Files whose streamed documents held objects of held kinds after all: the phase was
    /// abandoned when this is not empty.
    pub missed: Vec<usize>,
}

impl WorkloadPhase {
    fn merge(mut self, other: WorkloadPhase) -> WorkloadPhase {
        self.checked = self.checked.merge(other.checked);
        self.annotations.merge(other.annotations);
        self.missed.extend(other.missed);
        self
    }
}

/// The run's streaming state shared by the tasks.
struct Stream<'r, 'a, 'c> {
    opts: &'r LintOptions,
    sources: &'r [Source],
    cx: &'r Context<'a, 'c>,
    progress: &'r Progress,
    /// The next free object id (held objects are numbered first).
    next_id: AtomicUsize,
    /// Some file was missed: the tasks only parse from now on.
    abandoned: AtomicBool,
}

/// Streams every file with documents left in `files`; each file's state becomes
/// [`FileState::Done`] with its parts merged.
pub(super) fn stream(
    opts: &LintOptions,
    sources: &[Source],
    files: &mut [FileState],
    cx: &Context,
    first_id: usize,
    progress: &Progress,
) -> WorkloadPhase {
    let run = Stream {
        opts,
        sources,
        cx,
        progress,
        next_id: AtomicUsize::new(first_id),
        abandoned: AtomicBool::new(false),
    };
    // Each task's results join one accumulator as soon as it ends: a tree of partial
    // results (rayon's `reduce`) would hold several growing copies at once.
    let done = std::sync::Mutex::new(WorkloadPhase::default());
    files
        .par_chunks_mut(FILES_PER_TASK)
        .enumerate()
        .for_each(|(chunk, states)| {
            let phase = run.task(chunk * FILES_PER_TASK, states);
            let mut done = super::lock(&done);
            let all = std::mem::take(&mut *done);
            *done = all.merge(phase);
        });
    super::into_inner(done)
}

impl Stream<'_, '_, '_> {
    /// Parses the files of one task, then checks their objects.
    fn task(&self, first: usize, states: &mut [FileState]) -> WorkloadPhase {
        let mut phase = WorkloadPhase::default();
        let mut objects: Vec<Object> = Vec::new();
        for (k, state) in states.iter_mut().enumerate() {
            if !state.to_stream() {
                continue;
            }
            let id = first + k;
            match self.parse_rest(id, state) {
                Err(()) => {
                    self.abandoned.store(true, Ordering::Relaxed);
                    phase.missed.push(id);
                }
                Ok(mut parsed) => {
                    phase.annotations.add(&parsed);
                    objects.append(&mut parsed);
                    self.progress.tick();
                }
            }
        }
        if self.abandoned.load(Ordering::Relaxed) {
            return phase;
        }
        let base = self.next_id.fetch_add(objects.len(), Ordering::Relaxed);
        super::number(&mut objects, base);
        phase.checked = check_all(&objects, self.cx, self.opts.plan_rows());
        phase
    }

    /// Parses what is left of source `id`, merging it into its state, and returns the
    /// objects parsed; `Err` when they hold an object of a held kind, or the file now reads
    /// differently from the part the cluster phase used.
    fn parse_rest(&self, id: usize, state: &mut FileState) -> Result<Vec<Object>, ()> {
        let src = &self.sources[id];
        let part = match state {
            FileState::Partly(_) => Part::Streamed,
            _ => Part::All,
        };
        let r = match state {
            FileState::Unread(Some(bytes)) => {
                let bytes = std::mem::take(bytes).into();
                Ok(sources::parse_bytes(id, src, bytes, part))
            }
            _ => sources::read_and_parse(id, src, self.opts.max_file_size, part),
        };
        let missed = match (&r, part) {
            // The file can no longer be read, or is skipped whole (it grew too large or
            // turned binary), so its held part stands alone: the next attempt reads it whole.
            (Err(_), Part::Streamed) => true,
            (Ok(p), Part::Streamed) if p.parsed.skipped.is_some() => true,
            (Ok(p), _) => p.parsed.objects.iter().any(|o| !o.kind.is_streamed()),
            (Err(_), _) => false,
        };
        if missed {
            return Err(());
        }
        let (r, objects) = match r {
            Ok(mut p) => {
                let objects = std::mem::take(&mut p.parsed.objects);
                (Ok(p), objects)
            }
            Err(e) => (Err(e), Vec::new()),
        };
        *state = FileState::Done(merge(std::mem::replace(state, FileState::Unread(None)), r));
        Ok(objects)
    }
}

/// A source's parts joined: the held part's parse with the streamed one's.
fn merge(before: FileState, rest: Result<ParsedFile, ReadError>) -> Result<ParsedFile, ReadError> {
    match (before, rest) {
        (FileState::Partly(mut first), Ok(rest)) => {
            first.parsed.merge(rest.parsed);
            Ok(first)
        }
        (_, rest) => rest,
    }
}
