//! `karplint plan`: one row per workload with its replicas, effective requests and where
//! Karpenter would put it (NodePool, how many instance types fit, the smallest), or why it
//! would stay Pending. A view of the simulator's verdicts, in text or JSON.

use super::escape;
use crate::diagnostic::ObjectRef;
use crate::karpenter::pod::Ignored;
use crate::karpenter::scheduler::{self, PendingWorkload, PodOutcome};
use crate::karpenter::sim::{NO_NODEPOOL_LEFT, PoolFailure, Simulator, Verdict};
use crate::model::Object;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct PlanRow {
    pub object: ObjectRef,
    pub replicas: i64,
    pub cpu: String,
    pub memory: String,
    /// `schedules`, `pending`, `ignored` or `not-provisioned`.
    pub outcome: &'static str,
    pub nodepool: Option<String>,
    pub fitting_types: usize,
    pub smallest_type: Option<String>,
    /// Why the pod would not be scheduled (Karpenter's words), when it would not.
    pub reason: Option<String>,
    /// When pending: why each NodePool refused the pod, in the order Karpenter tries them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<PoolRefusal>,
    /// Each replica as Karpenter places the run's pending pods in one batch (they may
    /// differ from the row: replicas share NodeClaims and the pools' limits).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<PodRow>,
}

/// One replica of a workload in the batch.
#[derive(Debug, Clone, Serialize)]
pub struct PodRow {
    pub replica: usize,
    /// `schedules` or `pending`.
    pub outcome: &'static str,
    pub nodepool: Option<String>,
    /// When pending: the kind of the first NodePool's failure, in Karpenter's order.
    pub kind: Option<&'static str>,
}

/// One NodePool's refusal of a pending pod.
#[derive(Debug, Clone, Serialize)]
pub struct PoolRefusal {
    pub nodepool: String,
    /// `taint`, `requirements`, `resources` or `limits` (see [`crate::karpenter::sim::Failure::kind`]).
    pub kind: &'static str,
    /// Karpenter's message.
    pub message: String,
}

/// The row of workload `o`, from the simulator's `verdict` on its pod template. The plan
/// counts every fitting type, so the verdict is the exhaustive one
/// ([`Simulator::schedule`] with `exhaustive`), not the one the rules read.
pub fn row(o: &Object, sim: &Simulator, verdict: &Verdict) -> Option<PlanRow> {
    let w = o.workload()?;
    let spec = w.pod_spec()?;
    let req = crate::karpenter::pod::requests(o, spec).total;
    let mut row = PlanRow {
        object: ObjectRef::of(o),
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
        reason: None,
        failures: Vec::new(),
        pods: Vec::new(),
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
            row.reason = f.first().map(|f| {
                let nodepool = &sim.pools[f.pool].name;
                format!("NodePool \"{nodepool}\": {}", f.failure.headline(nodepool))
            });
            row.failures = refusals(sim, f);
        }
    }
    Some(row)
}

/// Places every planned workload's pods in one batch ([`scheduler::solve`]) and gives
/// each row, matched by key, its replicas' outcomes.
pub fn add_pods<K: Ord + Copy>(
    rows: &mut [(K, PlanRow)],
    pending: Vec<(K, PendingWorkload)>,
    sim: &Simulator,
) {
    let (keys, workloads): (Vec<K>, Vec<PendingWorkload>) = pending.into_iter().unzip();
    let outcomes = scheduler::solve(sim, &workloads);
    for (key, pods) in keys.into_iter().zip(outcomes) {
        let Ok(at) = rows.binary_search_by_key(&key, |(k, _)| *k) else {
            continue;
        };
        rows[at].1.pods = pods
            .into_iter()
            .enumerate()
            .map(|(replica, pod)| pod_row(sim, replica, pod))
            .collect();
    }
}

fn pod_row(sim: &Simulator, replica: usize, pod: PodOutcome) -> PodRow {
    match pod {
        PodOutcome::Scheduled { pool } => PodRow {
            replica,
            outcome: "schedules",
            nodepool: Some(sim.pools[pool].name.clone()),
            kind: None,
        },
        PodOutcome::Pending(first) => PodRow {
            replica,
            outcome: "pending",
            nodepool: None,
            kind: Some(first.map_or("no-nodepool", |(_, f)| f.kind())),
        },
    }
}

/// The pod's error as Karpenter composes it: the refusal of every NodePool it tried, in
/// its order; pools it skipped before trying pods are not among them, and when it skipped
/// them all the error is [`NO_NODEPOOL_LEFT`].
fn refusals(sim: &Simulator, failures: &[PoolFailure]) -> Vec<PoolRefusal> {
    let mut in_order: Vec<&PoolFailure> = failures
        .iter()
        .filter(|f| !f.failure.skips_pool())
        .collect();
    in_order.sort_by_key(|f| f.pool);
    if in_order.is_empty() {
        return vec![PoolRefusal {
            nodepool: String::new(),
            kind: "no-nodepool",
            message: NO_NODEPOOL_LEFT.to_string(),
        }];
    }
    in_order
        .into_iter()
        .map(|f| {
            let nodepool = &sim.pools[f.pool].name;
            PoolRefusal {
                nodepool: nodepool.clone(),
                kind: f.failure.kind(),
                message: f.failure.karpenter_message(nodepool),
            }
        })
        .collect()
}

/// The plan as an aligned text table.
pub fn render_table(rows: &[PlanRow]) -> String {
    let mut table: Vec<[String; 6]> = vec![[
        "WORKLOAD".into(),
        "REPLICAS".into(),
        "REQUESTS".into(),
        "NODEPOOL".into(),
        "TYPES".into(),
        "SMALLEST / REASON".into(),
    ]];
    for r in rows {
        let ns = r
            .object
            .namespace
            .as_deref()
            .map(|n| format!("{n}/"))
            .unwrap_or_default();
        let row = [
            format!("{} {ns}{}", r.object.kind, r.object.name),
            r.replicas.to_string(),
            format!("{} / {}", r.cpu, r.memory),
            r.nodepool
                .clone()
                .unwrap_or_else(|| format!("({})", r.outcome)),
            if r.outcome == "schedules" {
                r.fitting_types.to_string()
            } else {
                "-".into()
            },
            r.smallest_type
                .clone()
                .or_else(|| r.reason.clone())
                .unwrap_or_default(),
        ];
        // Names and reasons come from the manifests: no control character reaches the
        // terminal, and none breaks the row (see `super::escape`).
        table.push(row.map(|cell| escape::line(&cell).into_owned()));
    }
    let widths: Vec<usize> = (0..5)
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
            if i < 5 {
                out.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            } else {
                out.push_str(cell);
            }
        }
        out.push('\n');
    }
    if rows.is_empty() {
        out.push_str("(no workloads, or no NodePool found: pass the directory that holds your NodePools with --context)\n");
    }
    out
}
