//! `karplint plan`: one row per workload with its replicas, effective requests and where
//! Karpenter would put it (NodePool, how many instance types fit, the smallest), or why it
//! would stay Pending. A view of the simulator's verdicts, as a table (human), one line
//! per workload (concise), a Markdown table or JSON (`{"version": 1, "workloads": [...]}`).
//! Names and reasons come from the manifests: every text format escapes their control
//! characters (see [`super::escape`]).

use super::{LineIndex, Note, Source, cost, escape, markdown};
use crate::diagnostic::ObjectRef;
use crate::karpenter::pod::Ignored;
use crate::karpenter::scheduler::{Existing, PodOutcome};
use crate::karpenter::sim::{Failure, NO_NODEPOOL_LEFT, Simulator, Verdict};
use crate::model::{Object, SourceId, Span};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, Serialize)]
pub struct PlanRow {
    pub object: ObjectRef,
    /// The cluster of `clusters:` the row was judged in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// Where the workload is written: its name (set by [`locate`]).
    pub file: String,
    pub line: usize,
    pub column: usize,
    #[serde(skip)]
    pub source: SourceId,
    #[serde(skip)]
    pub span: Span,
    pub replicas: i64,
    pub cpu: String,
    pub memory: String,
    /// `schedules`, `pending`, `ignored` or `not-provisioned`.
    pub outcome: &'static str,
    pub nodepool: Option<String>,
    pub fitting_types: usize,
    pub smallest_type: Option<String>,
    /// When no NodePool takes the pod but every replica runs on the static nodes of a node
    /// group outside Karpenter: the group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_group: Option<String>,
    /// Why the pod would not be scheduled (Karpenter's words), when it would not.
    pub reason: Option<String>,
    /// When pending: why each NodePool refused the pod, in the order Karpenter tries them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<PoolRefusal>,
    /// Each replica as Karpenter places the run's pending pods in one batch (they may
    /// differ from the row: replicas share NodeClaims and the pools' limits).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<PodRow>,
    /// The instance types of the nodes its replicas launch on in the batch, with how many
    /// replicas land on each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instance_types: Vec<cost::RowLaunch>,
    /// Its share of those nodes' monthly on-demand cost (a node shared by several workloads
    /// is split by their pod counts), when some of them is priced ([`cost`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monthly_cost: Option<f64>,
}

/// One replica of a workload in the batch.
#[derive(Debug, Clone, Serialize)]
pub struct PodRow {
    pub replica: usize,
    /// `schedules` or `pending`.
    pub outcome: &'static str,
    pub nodepool: Option<String>,
    /// When bound to a static node outside Karpenter: its node group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_group: Option<String>,
    /// When scheduled by Karpenter: the provisioning round that planned its NodeClaim (from 1; a pod
    /// of a later round waits for the nodes of the rounds before it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// When pending: the kind of the first NodePool's failure, in Karpenter's order.
    pub kind: Option<&'static str>,
    /// When it was Pending after the first round (scheduled in a later one, or still
    /// Pending): the kind of its failure then, what Karpenter's first `Solve` reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_round: Option<&'static str>,
}

/// One NodePool's disruption settings: what decides when Karpenter may disrupt its nodes.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PoolDisruption {
    pub nodepool: String,
    pub consolidation_policy: Option<String>,
    pub consolidate_after: Option<String>,
    /// Each budget as `nodes=10%`, with its `schedule`, `duration` and `reasons` when set.
    pub budgets: Vec<String>,
}

impl PoolDisruption {
    /// The settings of NodePool `name`.
    pub fn of(name: &str, np: &crate::model::karpenter::NodePool) -> Self {
        let d = &np.disruption;
        let budgets = (d.budgets.iter())
            .map(|b| {
                let mut parts = Vec::new();
                if let Some(n) = &b.nodes {
                    parts.push(format!("nodes={}", n.value));
                }
                if let Some(s) = &b.schedule {
                    parts.push(format!("schedule={}", s.value));
                }
                if let Some(s) = &b.duration {
                    parts.push(format!("duration={}", s.value));
                }
                if let Some(r) = &b.reasons {
                    let r: Vec<&str> = r.iter().map(|r| &*r.value).collect();
                    parts.push(format!("reasons={}", r.join(",")));
                }
                parts.join(" ")
            })
            .collect();
        PoolDisruption {
            nodepool: name.to_string(),
            consolidation_policy: d.consolidation_policy.as_ref().map(|p| p.value.to_string()),
            consolidate_after: d.consolidate_after.as_ref().map(|p| p.value.to_string()),
            budgets,
        }
    }
}

/// One NodePool's refusal of a pending pod, or that of several NodePools that refuse it in
/// the same words.
#[derive(Debug, Clone, Serialize)]
pub struct PoolRefusal {
    /// The NodePool (the first of [`PoolRefusal::nodepools`], when there are several).
    pub nodepool: String,
    /// `taint`, `requirements`, `resources` or `limits` (see [`crate::karpenter::sim::Failure::kind`]).
    pub kind: &'static str,
    /// Karpenter's message (the first NodePool's).
    pub message: String,
    /// When more than one NodePool refuses the pod in the same words, but for its name in
    /// the `karpenter.sh/nodepool` requirement: all of them, in Karpenter's order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodepools: Vec<String>,
}

/// The row of workload `o`, from the simulator's `verdict` on its pod template. The plan
/// counts every fitting type, so the verdict is the exhaustive one
/// ([`Simulator::schedule`] with `exhaustive`), not the one the rules read.
pub fn row(o: &Object, sim: &Simulator, verdict: &Verdict) -> Option<PlanRow> {
    let w = o.workload()?;
    let spec = w.pod_spec()?;
    let req = sim.admitted().requests(o, spec, sim.version()).total;
    let mut row = PlanRow {
        cluster: None,
        object: ObjectRef::of(o),
        file: String::new(),
        line: 0,
        column: 0,
        source: o.source,
        span: o.name_span(),
        replicas: w.replica_count(),
        cpu: req
            .get("cpu")
            .map(|q| q.display_for("cpu"))
            .unwrap_or_else(|| "-".into()),
        memory: req
            .get("memory")
            .map(|q| q.display_for("memory"))
            .unwrap_or_else(|| "-".into()),
        outcome: "schedules",
        nodepool: None,
        fitting_types: 0,
        smallest_type: None,
        node_group: None,
        reason: None,
        failures: Vec::new(),
        pods: Vec::new(),
        instance_types: Vec::new(),
        monthly_cost: None,
    };
    match verdict {
        Verdict::NotProvisionable => {
            row.outcome = "not-provisioned";
            row.reason = Some("DaemonSet or nodeName: Karpenter does not provision for it".into());
        }
        Verdict::Ignored(Ignored::NotOnKarpenterNodes) => {
            row.outcome = "not-provisioned";
            row.reason = Some("requires karpenter.sh/nodepool DoesNotExist: runs on nodes Karpenter does not manage".into());
        }
        Verdict::Ignored(Ignored::Restricted { key, reason, .. }) => {
            row.outcome = "ignored";
            row.reason = Some(format!("selector on \"{key}\": {reason}"));
        }
        Verdict::Schedules(p) => {
            row.nodepool = Some(sim.pools[p.pool].name.clone());
            row.fitting_types = p.fitting_types;
            row.smallest_type = Some(p.smallest.to_string());
        }
        Verdict::Pending(f) => {
            row.outcome = "pending";
            row.reason = sim
                .headline(spec, f)
                .map(|f| reason(sim, f.pool, &f.failure));
            row.failures = refusals(sim, f.iter().map(|f| (f.pool, &f.failure)));
        }
    }
    Some(row)
}

/// A row whose pod template a NodePool takes, but none of whose replicas the batch places
/// (`pods`: the pools' limits run out before them, or topology leaves them no domain): it
/// stays pending, in the words of its first replica's failure.
pub fn settle_pending_in_batch(row: &mut PlanRow, sim: &Simulator, pods: &[PodOutcome]) {
    let mut failures = pods.iter().map(|p| match p {
        PodOutcome::Pending(first, _) => Some(first),
        _ => None,
    });
    let Some(Some(first)) = failures.next() else {
        return;
    };
    if row.outcome != "schedules" || failures.any(|f| f.is_none()) {
        return;
    }
    row.outcome = "pending";
    row.nodepool = None;
    row.fitting_types = 0;
    row.smallest_type = None;
    row.reason = first
        .as_ref()
        .map(|(pool, failure)| reason(sim, *pool, failure));
    row.failures = refusals(sim, first.iter().map(|(pool, failure)| (*pool, failure)));
}

/// A row whose pod no NodePool takes alone, but some of whose replicas the batch places
/// (on static nodes, or on NodeClaims that other pods opened): it schedules where its first
/// placed replica went, and the others count as Pending in the batch (`50 (47 pending)`),
/// as the lint reports them.
pub fn settle_placed_in_batch(row: &mut PlanRow) {
    if row.outcome != "pending" {
        return;
    }
    let Some(placed) = row.pods.iter().find(|p| p.outcome == "schedules") else {
        return;
    };
    row.outcome = "schedules";
    row.nodepool = placed.nodepool.clone();
    row.node_group = placed.node_group.clone();
    row.reason = None;
    row.failures.clear();
}

/// A pending row's reason: NodePool `pool`'s refusal, in Karpenter's words.
fn reason(sim: &Simulator, pool: usize, failure: &Failure) -> String {
    let nodepool = &sim.pools[pool].name;
    format!(
        "NodePool \"{nodepool}\": {}",
        failure.headline_on(nodepool, sim.version())
    )
}

/// Each replica's row, from its outcome in the batch.
pub fn pod_rows(sim: &Simulator, existing: &Existing, pods: Vec<PodOutcome>) -> Vec<PodRow> {
    pods.into_iter()
        .enumerate()
        .map(|(replica, pod)| pod_row(sim, existing, replica, pod))
        .collect()
}

fn pod_row(sim: &Simulator, existing: &Existing, replica: usize, pod: PodOutcome) -> PodRow {
    match pod {
        PodOutcome::OnExistingNode { group } => PodRow {
            replica,
            outcome: "schedules",
            nodepool: None,
            node_group: Some(existing.group(group).name.clone()),
            round: None,
            kind: None,
            first_round: None,
        },
        PodOutcome::Scheduled {
            pool,
            round,
            waited,
        } => PodRow {
            replica,
            outcome: "schedules",
            nodepool: Some(sim.pools[pool].name.clone()),
            node_group: None,
            round: Some(round),
            kind: None,
            first_round: waited,
        },
        PodOutcome::Pending(first, after_first) => PodRow {
            replica,
            outcome: "pending",
            nodepool: None,
            node_group: None,
            round: None,
            kind: Some(first.map_or("no-nodepool", |(_, f)| f.kind())),
            first_round: after_first,
        },
    }
}

/// The pod's error as Karpenter composes it: the refusal of every NodePool it tried, in
/// its order; pools it skipped before trying pods are not among them, and when it skipped
/// them all the error is [`NO_NODEPOOL_LEFT`]. Refusals in the same words are one entry
/// that lists their NodePools, where the first one stood: a run with a thousand NodePools
/// says a thousand times why a pod fits none of them.
fn refusals<'f>(
    sim: &Simulator,
    failures: impl Iterator<Item = (usize, &'f Failure)>,
) -> Vec<PoolRefusal> {
    let mut in_order: Vec<(usize, &Failure)> = failures.filter(|(_, f)| !f.skips_pool()).collect();
    in_order.sort_by_key(|(pool, _)| *pool);
    if in_order.is_empty() {
        return vec![PoolRefusal {
            nodepool: String::new(),
            kind: "no-nodepool",
            message: NO_NODEPOOL_LEFT.to_string(),
            nodepools: Vec::new(),
        }];
    }
    let mut out: Vec<PoolRefusal> = Vec::new();
    let mut groups: HashMap<(&'static str, String), usize> = HashMap::new();
    for (pool, failure) in in_order {
        let nodepool = &sim.pools[pool].name;
        let kind = failure.kind();
        let message = failure.message_on(nodepool, sim.version());
        let words = (kind, failure.nameless_message(nodepool, sim.version()));
        match groups.get(&words) {
            Some(&g) => {
                let group = &mut out[g];
                if group.nodepools.is_empty() {
                    group.nodepools.push(group.nodepool.clone());
                }
                group.nodepools.push(nodepool.clone());
            }
            None => {
                groups.insert(words, out.len());
                out.push(PoolRefusal {
                    nodepool: nodepool.clone(),
                    kind,
                    message,
                    nodepools: Vec::new(),
                });
            }
        }
    }
    out
}

/// Fills in each row's file, line and column: every source with a row is read and indexed
/// once.
pub fn locate(rows: &mut [PlanRow], sources: &[Source]) {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| rows[i].source);
    let mut loaded: Option<(SourceId, String, LineIndex)> = None;
    for i in order {
        let row = &mut rows[i];
        let Some(source) = sources.get(row.source) else {
            continue;
        };
        if loaded.as_ref().is_none_or(|(id, _, _)| *id != row.source) {
            let text = source.reread();
            let index = LineIndex::new(&text);
            loaded = Some((row.source, text, index));
        }
        if let Some((_, text, index)) = &loaded {
            let span = super::widen(text, row.span);
            (row.line, row.column) = index.line_col(text, span.offset);
        }
        row.file = source.name.clone();
    }
}

/// Whether the row's workload would stay Pending: some of its replicas stay Pending once
/// every pod of the run is placed ([`PlanRow::pods`]), or, for a workload not placed with
/// them, Karpenter ignores the pod for a selector it refuses (`ignored`).
pub fn stays_pending(row: &PlanRow) -> bool {
    if row.pods.is_empty() {
        matches!(row.outcome, "pending" | "ignored")
    } else {
        pending_in_batch(row) > 0
    }
}

/// How many of the row's replicas stay Pending in the batch.
pub fn pending_in_batch(row: &PlanRow) -> usize {
    row.pods.iter().filter(|p| p.outcome == "pending").count()
}

/// The replicas, with how many of them stay Pending in the batch when the pod schedules
/// alone: `10 (5 pending)`.
fn replicas(r: &PlanRow) -> String {
    match pending_in_batch(r) {
        n if n > 0 && r.outcome == "schedules" => format!("{} ({n} pending)", r.replicas),
        _ => r.replicas.to_string(),
    }
}

/// `file:line` of a row, escaped for one line.
fn location(r: &PlanRow) -> String {
    escape::line(&format!("{}:{}", r.file, r.line)).into_owned()
}

/// A row's workload as the tables name it: `Deployment team/web`, or in a run of several
/// clusters `Deployment team/web in staging`.
pub fn workload_name(r: &PlanRow) -> String {
    workload(r)
}

fn workload(r: &PlanRow) -> String {
    let ns = r
        .object
        .namespace
        .as_deref()
        .map(|n| format!("{n}/"))
        .unwrap_or_default();
    let role = r
        .object
        .role
        .as_deref()
        .map(|role| format!(" ({role})"))
        .unwrap_or_default();
    let cluster = (r.cluster.as_deref())
        .map(|c| format!(" in {c}"))
        .unwrap_or_default();
    format!("{} {ns}{}{role}{cluster}", r.object.kind, r.object.name)
}

/// The last column: the smallest type, or why the pod is not placed.
fn smallest_or_reason(r: &PlanRow) -> String {
    r.smallest_type
        .clone()
        .or_else(|| r.reason.clone())
        .unwrap_or_default()
}

fn nodepool(r: &PlanRow) -> String {
    (r.nodepool.clone())
        .or_else(|| r.node_group.as_ref().map(|g| format!("(node group {g})")))
        .unwrap_or_else(|| format!("({})", r.outcome))
}

fn types(r: &PlanRow) -> String {
    if r.outcome == "schedules" {
        r.fitting_types.to_string()
    } else {
        "-".into()
    }
}

/// The plan as an aligned text table.
pub fn render_table(rows: &[PlanRow]) -> String {
    const COLUMNS: usize = 7;
    let mut table: Vec<[String; COLUMNS]> = vec![[
        "WORKLOAD".into(),
        "LOCATION".into(),
        "REPLICAS".into(),
        "REQUESTS".into(),
        "NODEPOOL".into(),
        "TYPES".into(),
        "SMALLEST / REASON".into(),
    ]];
    for r in rows {
        let row = [
            workload(r),
            format!("{}:{}", r.file, r.line),
            replicas(r),
            format!("{} / {}", r.cpu, r.memory),
            nodepool(r),
            types(r),
            smallest_or_reason(r),
        ];
        // Names and reasons come from the manifests: no control character reaches the
        // terminal, and none breaks the row (see `super::escape`).
        table.push(row.map(|cell| escape::line(&cell).into_owned()));
    }
    let widths: Vec<usize> = (0..COLUMNS - 1)
        .map(|i| {
            table
                .iter()
                .map(|row| row[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &table {
        for (i, cell) in row.iter().enumerate() {
            match widths.get(i) {
                Some(w) => out.push_str(&format!("{cell:<w$}  ")),
                None => out.push_str(cell),
            }
        }
        out.push('\n');
    }
    if rows.is_empty() {
        out.push_str(NOTHING_PLANNED);
        out.push('\n');
    }
    out
}

const NOTHING_PLANNED: &str = "(no workloads, or no NodePool found: pass the directory that holds your NodePools with --context)";

/// The closing line of the table: how many workloads land, and how many stay Pending.
pub fn summary_line(rows: &[PlanRow]) -> String {
    let count = |outcome: &str| rows.iter().filter(|r| r.outcome == outcome).count();
    let in_batch: usize = (rows.iter())
        .filter(|r| r.outcome == "schedules")
        .map(pending_in_batch)
        .sum();
    let batch = if in_batch > 0 {
        format!(
            "; {in_batch} replica(s) of scheduling workloads stay Pending once every pod is placed together"
        )
    } else {
        String::new()
    };
    format!(
        "karplint plan: {} workload(s): {} schedule, {} pending, {} ignored, {} not provisioned by Karpenter{batch}\n",
        rows.len(),
        count("schedules"),
        count("pending"),
        count("ignored"),
        count("not-provisioned")
    )
}

/// One line per workload: `path:line:col: outcome: workload: NodePool or reason`.
pub fn render_concise(rows: &[PlanRow]) -> String {
    let mut out = String::new();
    for r in rows {
        let place = match &r.nodepool {
            Some(pool) => format!(
                "NodePool \"{pool}\", {} type(s), smallest {}{}",
                r.fitting_types,
                r.smallest_type.as_deref().unwrap_or("-"),
                match pending_in_batch(r) {
                    0 => String::new(),
                    n => format!(", {n} of {} replicas stay Pending", r.replicas),
                }
            ),
            None => r.reason.clone().unwrap_or_default(),
        };
        out.push_str(&format!(
            "{}:{}:{}: {}: {}: {}\n",
            escape::line(&r.file),
            r.line,
            r.column,
            r.outcome,
            escape::line(&workload(r)),
            escape::line(&place)
        ));
    }
    out
}

/// The plan as a Markdown table, capped below GitHub's step-summary limit like the lint's.
pub fn render_markdown(rows: &[PlanRow]) -> String {
    let pending = rows.iter().filter(|r| stays_pending(r)).count();
    let mut out = format!(
        "## karplint plan\n\n**{} workload(s), {pending} would stay Pending**\n\n",
        rows.len()
    );
    if rows.is_empty() {
        out.push_str(NOTHING_PLANNED);
        out.push('\n');
        return out;
    }
    out.push_str(
        "| Workload | Location | Replicas | Requests | NodePool | Types | Smallest / reason |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|\n");
    let mut budget = markdown::Budget::new(out.len());
    for (i, r) in rows.iter().enumerate() {
        let line = format!(
            "| {} | `{}` | {} | {} | {} | {} | {} |\n",
            markdown::cell(&workload(r)),
            location(r).replace('`', "'").replace('|', "\\|"),
            replicas(r),
            markdown::cell(&format!("{} / {}", r.cpu, r.memory)),
            markdown::cell(&nodepool(r)),
            types(r),
            markdown::cell(&smallest_or_reason(r)),
        );
        if !budget.take(line.len()) {
            out.push_str(&format!(
                "\n{} of {} workloads shown (GitHub keeps 1 MiB of a step summary); run `karplint plan --format json` for all of them\n",
                i,
                rows.len()
            ));
            return out;
        }
        out.push_str(&line);
    }
    out
}

/// The run's notes, one line each, as the plan's table closes.
pub fn render_notes(notes: &[Note]) -> String {
    (notes.iter())
        .map(|n| format!("note: {}\n", escape::text(&n.message)))
        .collect()
}

/// The plan as JSON: `{"version": 1, "workloads": [...], "cost": {...}, "notes": [...]}`.
#[derive(Serialize)]
pub struct PlanJson<'a> {
    pub version: u32,
    pub workloads: &'a [PlanRow],
    /// The projected nodes and their cost, when the run has NodePools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<&'a cost::Cost>,
    /// The run's notes, as the lint's report gives them.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub notes: &'a [Note],
}

/// Writes the plan's JSON to `w` as it is serialised.
pub fn write_json(
    rows: &[PlanRow],
    cost: Option<&cost::Cost>,
    notes: &[Note],
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    super::write_json(
        &PlanJson {
            version: 1,
            workloads: rows,
            cost,
            notes,
        },
        w,
    )
}
