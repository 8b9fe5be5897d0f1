//! The cluster phase: the documents every workload is judged against (NodePools, node
//! classes, DaemonSets, PVCs, budgets, …) are parsed first and held for the whole run.
//!
//! A byte scan ([`parse::scan`]) picks the documents that may hold objects of those kinds;
//! only they are parsed here. A file the scan passes over entirely is left for the
//! workload phase, which streams it. A file the previous attempt found to hold such an
//! object after all (see [`super::lint`]) is held whole. Helm template syntax skips only
//! the documents it breaks, each on its own, so a file holding `{{` is split like any other.

use super::sources::{self, ParsedFile, Read};
use super::{LintOptions, ReadError};
use crate::model::Object;
use crate::parse::{self, Part};
use crate::progress::Progress;
use crate::report::Source;
use rayon::prelude::*;
use std::sync::Mutex;

/// Where a source stands once its held documents are parsed.
pub(super) enum FileState {
    /// Nothing in it may hold a cluster object: the workload phase parses it whole.
    Unread,
    /// Its held documents are parsed; the workload phase parses the others.
    Partly(ParsedFile),
    /// Parsed whole, skipped, or unreadable: nothing is left to stream.
    Done(Result<ParsedFile, ReadError>),
    /// Not a file of the cluster being judged (`clusters:`): not read for it. A source
    /// every judged cluster leaves outside is not a file of the run.
    Outside,
}

impl FileState {
    /// Is anything of this source left for the workload phase?
    pub(super) fn to_stream(&self) -> bool {
        matches!(self, FileState::Unread | FileState::Partly(_))
    }
}

/// What the cluster phase leaves: each source's state, and the held objects in source
/// order, numbered from 0.
pub(super) struct ClusterPhase {
    pub files: Vec<FileState>,
    pub objects: Vec<Object>,
}

/// Parses the held documents of every source of the cluster (`member[id]`), in parallel;
/// `hold_whole[id]` holds a source whole.
pub(super) fn parse_held(
    opts: &LintOptions,
    sources: &[Source],
    member: &[bool],
    hold_whole: &[bool],
    progress: &Progress,
) -> ClusterPhase {
    // Each file's held objects join the list as soon as the file is parsed, so the
    // per-file vectors are freed at once and their memory reused for the next files.
    let gathered = Mutex::new(Vec::<Object>::new());
    let files = (sources.par_iter().enumerate())
        .map(|(id, src)| {
            let mut state = if member[id] {
                held_part(id, src, opts.max_file_size, hold_whole[id])
            } else {
                FileState::Outside
            };
            if let FileState::Partly(p) | FileState::Done(Ok(p)) = &mut state {
                let mut objects = std::mem::take(&mut p.parsed.objects);
                // Numbered by their place in the file, which keeps them in order below.
                super::number(&mut objects, 0);
                if !objects.is_empty() {
                    super::lock(&gathered).append(&mut objects);
                }
            }
            if !state.to_stream() {
                progress.tick();
            }
            state
        })
        .collect();
    let mut objects = super::into_inner(gathered);
    objects.sort_unstable_by_key(|o| (o.source, o.id));
    objects.shrink_to_fit();
    super::number(&mut objects, 0);
    ClusterPhase { files, objects }
}

/// Reads one source and parses the documents the cluster phase takes from it.
fn held_part(id: usize, src: &Source, max: u64, hold_whole: bool) -> FileState {
    let bytes = match sources::read(src, max) {
        Err(e) => return FileState::Done(Err(e)),
        Ok(Read::Skipped(reason)) => return FileState::Done(Ok(ParsedFile::skipped(reason))),
        Ok(Read::Bytes(bytes)) => bytes,
    };
    let part = if hold_whole {
        Part::All
    } else if !parse::scan::may_hold_cluster_objects(&bytes) {
        return FileState::Unread;
    } else {
        Part::Held
    };
    let p = sources::parse_bytes(id, src, bytes, part);
    if part == Part::Held && p.parsed.skipped.is_none() && p.parsed.left_out > 0 {
        FileState::Partly(p)
    } else {
        FileState::Done(Ok(p))
    }
}
