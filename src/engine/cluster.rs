//! The cluster phase: the documents every workload is judged against (NodePools, node
//! classes, DaemonSets, PVCs, budgets, …) are parsed first and held for the whole run.
//!
//! A byte scan ([`parse::scan`]) picks the documents that may hold objects of those kinds;
//! only they are parsed here. A file the scan passes over entirely is left for the
//! workload phase, which streams it, from the bytes read here while they fit in
//! [`KEPT_BYTES`]. A file the previous attempt found to hold such an
//! object after all (see [`super::lint`]) is held whole. Helm template syntax skips only
//! the documents it breaks, each on its own, so a file holding `{{` is split like any other.

use super::sources::{self, ParsedFile, Read};
use super::{LintOptions, ReadError};
use crate::model::Object;
use crate::parse::{self, Part};
use crate::progress::Progress;
use crate::report::Source;
use rayon::prelude::*;
use std::borrow::Cow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The bytes of unread files the cluster phase keeps for the workload phase, so that a
/// tree up to this size is read once; a larger tree's other files are read again. Kept
/// bytes are freed as the workload phase parses them, before it holds its most.
pub(super) const KEPT_BYTES: u64 = 32 << 20;

/// Where a source stands once its held documents are parsed.
pub(super) enum FileState {
    /// Nothing in it may hold a cluster object: the workload phase parses it whole, from
    /// its bytes when they were kept ([`KEPT_BYTES`]), else read again.
    Unread(Option<Vec<u8>>),
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
        matches!(self, FileState::Unread(_) | FileState::Partly(_))
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
    let keep = AtomicU64::new(KEPT_BYTES);
    let files = (sources.par_iter().enumerate())
        .map(|(id, src)| {
            let mut state = if member[id] {
                held_part(id, src, opts.max_file_size, hold_whole[id], &keep)
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

/// Reads one source and parses the documents the cluster phase takes from it; the bytes of
/// a file it leaves unread are kept while `keep` (bytes left to keep) allows.
fn held_part(id: usize, src: &Source, max: u64, hold_whole: bool, keep: &AtomicU64) -> FileState {
    let bytes = match sources::read(src, max) {
        Err(e) => return FileState::Done(Err(e)),
        Ok(Read::Skipped(reason)) => return FileState::Done(Ok(ParsedFile::skipped(reason))),
        Ok(Read::Bytes(bytes)) => bytes,
    };
    let part = if hold_whole {
        Part::All
    } else if !parse::scan::may_hold_cluster_objects(&bytes) {
        return FileState::Unread(kept(bytes, keep));
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

/// `bytes`, owned, when `keep` still has room for them (taken from it).
fn kept(bytes: Cow<'_, [u8]>, keep: &AtomicU64) -> Option<Vec<u8>> {
    let Cow::Owned(bytes) = bytes else {
        return None;
    };
    let len = bytes.len() as u64;
    keep.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
        left.checked_sub(len)
    })
    .ok()
    .map(|_| bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_kept_while_the_budget_holds_them() {
        let keep = AtomicU64::new(15);
        let ten = || Cow::Owned(vec![b'a'; 10]);
        assert_eq!(kept(ten(), &keep).map(|b| b.len()), Some(10));
        assert_eq!(keep.load(Ordering::Relaxed), 5);
        // Too large for what is left: read again later, and the budget stays.
        assert_eq!(kept(ten(), &keep), None);
        assert_eq!(keep.load(Ordering::Relaxed), 5);
        assert_eq!(
            kept(Cow::Owned(vec![b'a'; 5]), &keep).map(|b| b.len()),
            Some(5)
        );
        assert_eq!(keep.load(Ordering::Relaxed), 0);
        // Standard input is borrowed, and stays where it is.
        let keep = AtomicU64::new(15);
        assert_eq!(kept(Cow::Borrowed(b"abc"), &keep), None);
        assert_eq!(keep.load(Ordering::Relaxed), 15);
    }
}
