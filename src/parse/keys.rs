//! Parse stage, serde-saphyr's duplicate-key check for the readers that walk the parser's
//! events themselves ([`super::skim`], [`super::fast`]).

use std::borrow::Cow;
use std::collections::HashSet;

/// Mappings with more keys than this check duplicates with a hash set instead of a scan.
const SCAN_KEYS: usize = 16;

/// The keys of one document's open mappings: each mapping's after its parent's in one list,
/// so that a mapping of a few keys costs no allocation of its own.
#[derive(Default)]
pub(super) struct OpenKeys<'a> {
    keys: Vec<Cow<'a, str>>,
}

/// One open mapping's keys in its [`OpenKeys`].
pub(super) struct MapKeys<'a> {
    /// Where this mapping's keys start in the shared list, while few.
    start: usize,
    /// This mapping's keys, once many.
    set: Option<HashSet<Cow<'a, str>>>,
}

impl<'a> OpenKeys<'a> {
    /// A mapping opened inside the ones open.
    pub(super) fn open(&self) -> MapKeys<'a> {
        MapKeys {
            start: self.keys.len(),
            set: None,
        }
    }

    /// Adds `key` to `map`'s keys: `false` when it is one of them already.
    pub(super) fn insert(&mut self, map: &mut MapKeys<'a>, key: Cow<'a, str>) -> bool {
        if let Some(set) = &mut map.set {
            return set.insert(key);
        }
        if self.keys[map.start..].contains(&key) {
            return false;
        }
        self.keys.push(key);
        if self.keys.len() - map.start > SCAN_KEYS {
            map.set = Some(self.keys.drain(map.start..).collect());
        }
        true
    }

    /// `map`, the innermost open mapping, ends.
    pub(super) fn close(&mut self, map: &MapKeys<'a>) {
        self.keys.truncate(map.start);
    }
}
