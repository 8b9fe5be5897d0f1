//! The text formats of `karplint diff`: a human report, JSON, and Markdown sized for one
//! pull-request comment. The new findings are drawn by the lint's own formats, from HEAD's
//! report once BASE's findings are taken out of it.

use super::{BudgetChange, Changes, Placement, PlacementChange};
use crate::report::cost::money;
use crate::report::markdown::cell;
use crate::report::{Report, Shown, Texts, escape, human, json, markdown};
use serde::Serialize;

/// The hidden line that marks karplint's pull-request comment, so a later run finds and
/// updates it instead of adding another.
pub const MARKER: &str = "<!-- karplint-diff -->";

/// GitHub refuses a comment over 65,536 characters: the comment stays below this many
/// bytes, leaving room for the closing lines.
pub const COMMENT_LIMIT: usize = 60 * 1024;

/// How many workloads that only moved to other instance families the human report lists.
const FAMILIES_SHOWN: usize = 10;

/// A workload as the reports name it: `Deployment team/web`.
fn workload(c: &PlacementChange) -> String {
    let o = &c.object;
    let ns = (o.namespace.as_deref()).map_or_else(String::new, |n| format!("{n}/"));
    let role = (o.role.as_deref()).map_or_else(String::new, |r| format!(" ({r})"));
    format!("{} {ns}{}{role}", o.kind, o.name)
}

/// A placement in a few words: `2 of 3 Pending on default (m5, c5)`.
fn place(p: Option<&Placement>) -> String {
    let Some(p) = p else {
        return "(absent)".to_string();
    };
    let pool = p.nodepool.as_deref().unwrap_or("no NodePool");
    let families = if p.families.is_empty() {
        String::new()
    } else {
        format!(" ({})", p.families.join(", "))
    };
    if p.pending > 0 {
        format!("{} of {} Pending, {pool}{families}", p.pending, p.replicas)
    } else {
        format!("{} replica(s) on {pool}{families}", p.replicas)
    }
}

/// The Pending reason after the change, when it differs from before.
fn reason(c: &PlacementChange) -> Option<String> {
    let after = c.after.as_ref().and_then(|p| p.reason.clone());
    let before = c.before.as_ref().and_then(|p| p.reason.clone());
    (after != before).then(|| after.unwrap_or_else(|| "(no longer Pending)".to_string()))
}

fn budgets(p: Option<&crate::report::plan::PoolDisruption>) -> String {
    let Some(p) = p else {
        return "(absent)".to_string();
    };
    let mut parts = Vec::new();
    if let Some(c) = &p.consolidation_policy {
        parts.push(format!("consolidationPolicy={c}"));
    }
    if let Some(c) = &p.consolidate_after {
        parts.push(format!("consolidateAfter={c}"));
    }
    if p.budgets.is_empty() {
        parts.push("budgets: default (nodes=10%)".to_string());
    } else {
        parts.push(format!("budgets: {}", p.budgets.join("; ")));
    }
    parts.join(", ")
}

fn budget_line(b: &BudgetChange) -> String {
    format!(
        "NodePool {}: {} → {}",
        b.nodepool,
        budgets(b.before.as_ref()),
        budgets(b.after.as_ref())
    )
}

/// The headline: what the change adds.
fn headline(changes: &Changes, new: &Report) -> String {
    let s = &new.summary;
    let pending: usize = changes.placement.iter().map(|c| c.newly_pending()).sum();
    let families = changes.placement.iter().filter(|c| c.families_only).count();
    let cost = &changes.cost;
    format!(
        "{} new, {} replica(s) newly Pending, {} workload(s) placed differently, {families} on other instance families, monthly on-demand cost {}{}",
        human::severity_counts(s.errors, s.warnings, s.infos),
        pending,
        changes.placement.len() - families,
        if cost.monthly_difference >= 0.0 {
            "+"
        } else {
            ""
        },
        money(cost.monthly_difference, &cost.currency)
    )
}

fn count_and_money(n: usize, m: Option<f64>, currency: &str) -> String {
    match m {
        Some(m) => format!("{n} ({})", money(m, currency)),
        None if n == 0 => "0".to_string(),
        None => format!("{n} (no price)"),
    }
}

/// The cost lines: before, after, difference, then one per instance type that changed.
fn cost_lines(changes: &Changes) -> Vec<[String; 3]> {
    let c = &changes.cost;
    let total = |cost: Option<&crate::report::cost::Cost>| {
        cost.map_or_else(
            || "no NodePool".to_string(),
            |x| {
                let unpriced = if x.unpriced_nodes > 0 {
                    format!(", {} unpriced", x.unpriced_nodes)
                } else {
                    String::new()
                };
                format!(
                    "{} node(s), {}{unpriced}",
                    x.node_count,
                    money(x.monthly, &x.currency)
                )
            },
        )
    };
    let mut out = vec![[
        "total".to_string(),
        total(c.before.as_ref()),
        total(c.after.as_ref()),
    ]];
    for n in &c.nodes {
        let spot = if n.capacity_type == "spot" {
            " (spot)"
        } else {
            ""
        };
        out.push([
            format!("{}{spot}", n.instance_type),
            count_and_money(n.before, n.monthly_before, &c.currency),
            count_and_money(n.after, n.monthly_after, &c.currency),
        ]);
    }
    out
}

/// The human report: the headline, the placement, disruption and cost changes, then the
/// new findings as the lint draws them.
pub fn render_human(
    changes: &Changes,
    new: &Report,
    texts: &Texts,
    style: human::Style,
    shown: Shown,
) -> String {
    let line = |s: String| format!("{}\n", escape::line(&s));
    let mut out = line(format!(
        "karplint diff {} → {}: {}",
        changes.base,
        changes.head,
        headline(changes, new)
    ));
    let (families, moved): (Vec<&PlacementChange>, Vec<&PlacementChange>) =
        changes.placement.iter().partition(|c| c.families_only);
    if !moved.is_empty() {
        out.push_str("\nPlacement:\n");
        for c in moved {
            out.push_str(&line(format!(
                "  {}: {} → {}",
                workload(c),
                place(c.before.as_ref()),
                place(c.after.as_ref())
            )));
            if let Some(r) = reason(c) {
                out.push_str(&line(format!("    now: {r}")));
            }
        }
    }
    if !families.is_empty() {
        out.push_str("\nInstance families (the same NodePool, other instance types):\n");
        for c in families.iter().take(FAMILIES_SHOWN) {
            out.push_str(&line(format!(
                "  {}: {} → {}",
                workload(c),
                place(c.before.as_ref()),
                place(c.after.as_ref())
            )));
        }
        if families.len() > FAMILIES_SHOWN {
            out.push_str(&format!(
                "  … and {} more (`karplint diff --format json` lists them)\n",
                families.len() - FAMILIES_SHOWN
            ));
        }
    }
    let blocked: Vec<_> = (new.findings.iter())
        .filter(|f| f.rule == super::CONSOLIDATION_BLOCKED)
        .collect();
    if !blocked.is_empty() || !changes.budgets.is_empty() {
        out.push_str("\nDisruption:\n");
        for f in blocked {
            out.push_str(&line(format!("  newly blocked: {}", f.message)));
        }
        for b in &changes.budgets {
            out.push_str(&line(format!("  {}", budget_line(b))));
        }
    }
    out.push_str("\nProjected nodes (before → after):\n");
    for [what, before, after] in cost_lines(changes) {
        out.push_str(&line(format!("  {what}: {before} → {after}")));
    }
    if let Some(c) = changes.cost.after.as_ref().or(changes.cost.before.as_ref()) {
        for n in crate::report::cost::notes(c) {
            out.push_str(&line(format!("  note: {n}")));
        }
    }
    if !new.findings.is_empty() {
        out.push_str("\nNew findings:\n\n");
        out.push_str(&human::render_shown(new, texts, style, shown));
    }
    out
}

/// The Markdown comment: the marker, the headline, the newly Pending workloads, the new
/// findings (most severe first), disruption and cost, and every placement change in a
/// collapsed table; below [`COMMENT_LIMIT`] bytes.
pub fn render_markdown(changes: &Changes, new: &Report, texts: &Texts, shown: Shown) -> String {
    let mut out = format!(
        "{MARKER}\n## karplint diff\n\n`{}` → `{}`: **{}**\n",
        changes.base.replace('`', "'"),
        changes.head.replace('`', "'"),
        cell(&headline(changes, new))
    );
    let pending: Vec<&PlacementChange> = (changes.placement.iter())
        .filter(|c| c.newly_pending() > 0)
        .collect();
    if !pending.is_empty() {
        out.push_str(
            "\n### Newly Pending\n\n| Workload | Before | After | Reason |\n|---|---|---|---|\n",
        );
        for c in pending.iter().take(20) {
            out.push_str(&placement_row(c));
        }
        if pending.len() > 20 {
            out.push_str(&format!("\n{} more below.\n", pending.len() - 20));
        }
    }
    if !new.findings.is_empty() {
        let room = COMMENT_LIMIT.saturating_sub(out.len()) / 2;
        let table = markdown::render_within(new, texts, shown, None, room);
        out.push('\n');
        out.push_str(&table.replacen("## karplint\n", "### New findings\n", 1));
    }
    out.push_str(&disruption_markdown(changes, new));
    out.push_str("\n### Projected nodes\n\n| | Before | After |\n|---|---|---|\n");
    for [what, before, after] in cost_lines(changes) {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            cell(&what),
            cell(&before),
            cell(&after)
        ));
    }
    if let Some(c) = changes.cost.after.as_ref().or(changes.cost.before.as_ref()) {
        out.push('\n');
        for n in crate::report::cost::notes(c) {
            out.push_str(&format!("> note: {}\n", cell(&n)));
        }
    }
    out.push_str(&details(changes, COMMENT_LIMIT.saturating_sub(out.len())));
    out
}

fn placement_row(c: &PlacementChange) -> String {
    format!(
        "| {} | {} | {} | {} |\n",
        cell(&workload(c)),
        cell(&place(c.before.as_ref())),
        cell(&place(c.after.as_ref())),
        cell(&reason(c).unwrap_or_default())
    )
}

fn disruption_markdown(changes: &Changes, new: &Report) -> String {
    let blocked: Vec<_> = (new.findings.iter())
        .filter(|f| f.rule == super::CONSOLIDATION_BLOCKED)
        .take(20)
        .collect();
    if blocked.is_empty() && changes.budgets.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n### Disruption\n\n");
    for f in blocked {
        out.push_str(&format!("- newly blocked: {}\n", cell(&f.message)));
    }
    for b in changes.budgets.iter().take(20) {
        out.push_str(&format!("- {}\n", cell(&budget_line(b))));
    }
    out
}

/// Every placement change in a collapsed table, as many as fit in `room` bytes.
fn details(changes: &Changes, room: usize) -> String {
    if changes.placement.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n<details><summary>All placement changes ({})</summary>\n\n| Workload | Before | After | Reason |\n|---|---|---|---|\n",
        changes.placement.len()
    );
    let close = "\n</details>\n";
    let mut budget = markdown::Budget::new(0);
    for (i, c) in changes.placement.iter().enumerate() {
        let row = placement_row(c);
        let fits = out.len() + row.len() + close.len() + 200 < room && budget.take(row.len());
        if !fits {
            out.push_str(&format!(
                "\n{} of {} shown; `karplint diff --format json` lists them all.\n",
                i,
                changes.placement.len()
            ));
            break;
        }
        out.push_str(&row);
    }
    out.push_str(close);
    out
}

/// The JSON of a diff: `{"version": 1, "base", "head", "placement", "disruption",
/// "cost", "findings"}`, the findings in the lint's JSON shape.
#[derive(Serialize)]
struct DiffJson<'a> {
    version: u32,
    base: &'a str,
    head: &'a str,
    placement: &'a [PlacementChange],
    disruption: Disruption<'a>,
    cost: &'a super::CostChange,
    findings: json::JsonReport<'a>,
}

#[derive(Serialize)]
struct Disruption<'a> {
    /// The new `consolidation-blocked` findings' messages.
    newly_blocked: Vec<&'a str>,
    budgets: &'a [BudgetChange],
}

/// Writes the diff's JSON to `w`.
pub fn write_json(
    changes: &Changes,
    new: &Report,
    texts: &Texts,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let doc = DiffJson {
        version: 1,
        base: &changes.base,
        head: &changes.head,
        placement: &changes.placement,
        disruption: Disruption {
            newly_blocked: (new.findings.iter())
                .filter(|f| f.rule == super::CONSOLIDATION_BLOCKED)
                .map(|f| f.message.as_str())
                .collect(),
            budgets: &changes.budgets,
        },
        cost: &changes.cost,
        findings: json::build(new, texts),
    };
    crate::report::write_json(&doc, w)
}
