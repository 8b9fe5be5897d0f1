//! Clusters kept side by side (`clusters:`): which sources each cluster reads, and how the
//! findings and notes of the clusters' runs come together.
//!
//! A source belongs to the cluster whose directory holds it most closely (a rendered
//! kustomization by its root's file); a source under no cluster's directory belongs to
//! every cluster. Each cluster is judged on its own, against its own NodePools. A finding
//! on a file one cluster reads names that cluster; a finding on a file several read is
//! reported once when each of them finds it, and otherwise once per cluster, its message
//! saying which.

use super::ClusterScope;
use super::run::Judged;
use crate::diagnostic::Finding;
use crate::karpenter::cluster::ClusterFacts;
use crate::report::{Note, Source};
use std::collections::HashMap;
use std::path::PathBuf;

/// One judgement of the run: a cluster, or the whole run when no cluster is configured.
pub(super) struct Scope<'o> {
    pub name: Option<&'o str>,
    /// Per source: read by this judgement.
    pub member: Vec<bool>,
    /// Per source: its parse is counted, its annotations read and its file state kept by
    /// this judgement (the first that reads it).
    pub counted: Vec<bool>,
    pub facts: Option<&'o ClusterFacts>,
}

impl Scope<'_> {
    /// A plan row as a run of several clusters shows it: naming its cluster, and every
    /// NodePool by its qualified name.
    fn name_row(&self, row: &mut crate::report::plan::PlanRow) {
        row.cluster = self.name.map(str::to_string);
        let qualify =
            |pool: &mut Option<String>| *pool = pool.as_deref().map(|p| self.qualified(p));
        qualify(&mut row.nodepool);
        for pod in &mut row.pods {
            qualify(&mut pod.nodepool);
        }
        for refusal in &mut row.failures {
            refusal.nodepool = self.qualified(&refusal.nodepool);
            for pool in &mut refusal.nodepools {
                *pool = self.qualified(pool);
            }
        }
    }

    /// A NodePool's name as a run of several clusters shows it: `prod/default`.
    pub fn qualified(&self, pool: &str) -> String {
        match self.name {
            Some(cluster) => format!("{cluster}/{pool}"),
            None => pool.to_string(),
        }
    }
}

/// The judgements of a run, and per source which of them read it.
pub(super) struct Scopes<'o> {
    pub list: Vec<Scope<'o>>,
    readers: Vec<Vec<usize>>,
    /// The clusters not judged: no linted source lies in them.
    pub idle: Vec<&'o str>,
}

impl<'o> Scopes<'o> {
    /// The scopes of `clusters` over `sources`; `place()` gives where each source lies
    /// (its file, or a rendered root's kustomization file), normal, and is asked only when
    /// there are clusters. A cluster that reads no linted source (only context, or nothing
    /// the run was given) is not judged; its name is in [`Scopes::idle`].
    pub fn new(
        clusters: &'o [ClusterScope],
        place: impl FnOnce() -> Vec<Option<PathBuf>>,
        linted: &[bool],
    ) -> Scopes<'o> {
        let n = linted.len();
        let place = if clusters.is_empty() {
            Vec::new()
        } else {
            place()
        };
        let dirs: Vec<Vec<PathBuf>> = (clusters.iter())
            .map(|c| c.dirs.iter().map(|d| crate::discover::normal(d)).collect())
            .collect();
        let all: Vec<Vec<usize>> = (place.iter())
            .map(|p| owners(p.as_deref(), &dirs).unwrap_or_else(|| (0..clusters.len()).collect()))
            .collect();
        let busy: Vec<usize> = (0..clusters.len())
            .filter(|c| (0..n).any(|id| linted[id] && all[id].contains(c)))
            .collect();
        let idle = (clusters.iter().enumerate())
            .filter(|(c, _)| !busy.contains(c))
            .map(|(_, cluster)| cluster.name.as_str())
            .collect();
        let clusters: Vec<&ClusterScope> = busy.iter().map(|&c| &clusters[c]).collect();
        if clusters.is_empty() {
            return Scopes {
                list: vec![Scope {
                    name: None,
                    member: vec![true; n],
                    counted: vec![true; n],
                    facts: None,
                }],
                readers: vec![vec![0]; n],
                idle: Vec::new(),
            };
        }
        // Readers among the judged clusters, numbered as `clusters` now is.
        let readers: Vec<Vec<usize>> = (all.iter())
            .map(|r| {
                (r.iter())
                    .filter_map(|c| busy.iter().position(|b| b == c))
                    .collect()
            })
            .collect();
        let list = (clusters.iter().enumerate())
            .map(|(i, c)| Scope {
                name: Some(c.name.as_str()),
                member: readers.iter().map(|r| r.contains(&i)).collect(),
                counted: readers.iter().map(|r| r.first() == Some(&i)).collect(),
                facts: c.facts.as_ref(),
            })
            .collect();
        Scopes {
            list,
            readers,
            idle,
        }
    }

    /// The judgements of every scope as one: findings and notes as below, plan rows naming
    /// their cluster, and the NodePools of cost and disruption by their qualified names.
    pub fn merge(&self, judged: Vec<Judged>) -> Judged {
        if self.list[0].name.is_none() {
            return judged.into_iter().next().unwrap_or_default();
        }
        let (mut findings, mut notes) = (Vec::new(), Vec::new());
        let mut all = Judged::default();
        for (scope, mut one) in self.list.iter().zip(judged) {
            findings.push(std::mem::take(&mut one.findings));
            notes.push(std::mem::take(&mut one.notes));
            for row in &mut one.plan {
                scope.name_row(row);
            }
            all.plan.append(&mut one.plan);
            for d in &mut one.disruption {
                d.nodepool = scope.qualified(&d.nodepool);
            }
            all.disruption.append(&mut one.disruption);
            if let Some(mut cost) = one.cost {
                for n in &mut cost.nodes {
                    n.nodepool = scope.qualified(&n.nodepool);
                }
                for p in &mut cost.nodepools {
                    p.nodepool = scope.qualified(&p.nodepool);
                }
                match &mut all.cost {
                    None => all.cost = Some(cost),
                    Some(sum) => {
                        sum.nodes.append(&mut cost.nodes);
                        sum.nodepools.append(&mut cost.nodepools);
                        sum.node_count += cost.node_count;
                        sum.monthly += cost.monthly;
                        sum.unpriced_nodes += cost.unpriced_nodes;
                    }
                }
            }
        }
        all.findings = self.findings(findings);
        all.notes = self.notes(notes);
        all
    }

    /// The findings of every judgement, in scope order, as one list: see the module's
    /// documentation.
    fn findings(&self, judged: Vec<Vec<Finding>>) -> Vec<Finding> {
        if self.list[0].name.is_none() {
            return judged.into_iter().flatten().collect();
        }
        let mut found_by: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, findings) in judged.iter().enumerate() {
            for f in findings {
                found_by.entry(key(f)).or_default().push(i);
            }
        }
        let mut out = Vec::new();
        for (i, findings) in judged.into_iter().enumerate() {
            let name = self.list[i].name.unwrap_or_default();
            for mut f in findings {
                let readers = &self.readers[f.source];
                let by = &found_by[&key(&f)];
                if readers.len() > 1 && by.len() == readers.len() {
                    // Every cluster that reads the file finds it: reported once, by the first.
                    if by[0] == i {
                        out.push(f);
                    }
                    continue;
                }
                if readers.len() > 1 {
                    f.message = format!("in cluster {name}: {}", f.message);
                }
                f.cluster = Some(name.into());
                out.push(f);
            }
        }
        out
    }

    /// The notes of every judgement: a note each judgement gives once, the others once per
    /// cluster, saying which.
    fn notes(&self, judged: Vec<Vec<Note>>) -> Vec<Note> {
        if self.list[0].name.is_none() {
            return judged.into_iter().flatten().collect();
        }
        let mut out: Vec<Note> = Vec::new();
        for (i, notes) in judged.iter().enumerate() {
            let name = self.list[i].name.unwrap_or_default();
            for note in notes {
                let everywhere = judged.iter().all(|other| other.contains(note));
                if everywhere {
                    if !out.contains(note) {
                        out.push(note.clone());
                    }
                    continue;
                }
                let mut note = note.clone();
                note.message = format!("cluster {name}: {}", note.message);
                out.push(note);
            }
        }
        out
    }
}

/// The clusters whose directory holds `place` most closely; `None` when none holds it.
fn owners(place: Option<&std::path::Path>, dirs: &[Vec<PathBuf>]) -> Option<Vec<usize>> {
    let place = place?;
    let depth = |i: usize| {
        (dirs[i].iter())
            .filter(|d| place.starts_with(d))
            .map(|d| d.components().count())
            .max()
    };
    let deepest = (0..dirs.len()).filter_map(depth).max()?;
    Some(
        (0..dirs.len())
            .filter(|&i| depth(i) == Some(deepest))
            .collect(),
    )
}

/// What makes two findings the same finding.
fn key(f: &Finding) -> String {
    format!(
        "{}\0{}\0{}\0{}\0{}\0{}\0{}",
        f.rule, f.source, f.span.offset, f.span.len, f.message, f.label, f.help
    )
}

/// Where each source lies, for [`Scopes::new`].
pub(super) fn places(
    sources: &[Source],
    renders: &[(usize, crate::kustomize::remap::RenderMap)],
) -> Vec<Option<PathBuf>> {
    let normal = crate::discover::Normal::here();
    let mut places: Vec<Option<PathBuf>> = (sources.iter())
        .map(|s| s.path().map(|p| normal.of(p)))
        .collect();
    for (id, map) in renders {
        places[*id] = Some(map.root().to_path_buf());
    }
    places
}
