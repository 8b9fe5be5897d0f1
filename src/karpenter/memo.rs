//! A small thread-safe memo: answers that many workloads or NodePools of a large tree share
//! (the pools a pod reaches, the topology domains of a pool set, the instance types a
//! requirement set allows) are worked out once per run.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

#[derive(Debug)]
pub struct Memo<K, V>(Mutex<HashMap<K, V>>);

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Memo(Mutex::new(HashMap::new()))
    }
}

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    /// The value for `key`, computing it with `f` (outside the lock) the first time. When
    /// two threads compute one key at once, the value stored first is the one both return:
    /// callers compare shared values by pointer (`Pool::template_key`).
    pub fn get_or_insert_with(&self, key: K, f: impl FnOnce() -> V) -> V {
        // A poisoned lock only means another thread panicked; entries are inserted whole.
        let lock = || self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hit) = lock().get(&key) {
            return hit.clone();
        }
        let value = f();
        lock().entry(key).or_insert(value).clone()
    }

    /// [`Memo::get_or_insert_with`] for a key that is cloned only when it is new.
    pub fn get_or_insert_cloned(&self, key: &K, f: impl FnOnce() -> V) -> V
    where
        K: Clone,
    {
        let hit = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned();
        hit.unwrap_or_else(|| self.get_or_insert_with(key.clone(), f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_per_key() {
        let memo: Memo<&str, usize> = Memo::default();
        let mut calls = 0;
        assert_eq!(
            memo.get_or_insert_with("a", || {
                calls += 1;
                1
            }),
            1
        );
        assert_eq!(
            memo.get_or_insert_with("a", || {
                calls += 1;
                2
            }),
            1
        );
        assert_eq!(
            memo.get_or_insert_with("b", || {
                calls += 1;
                3
            }),
            3
        );
        assert_eq!(calls, 2);
    }

    #[test]
    fn a_key_by_reference_is_computed_once() {
        let memo: Memo<String, usize> = Memo::default();
        let mut calls = 0;
        for _ in 0..3 {
            let v = memo.get_or_insert_cloned(&"a".to_string(), || {
                calls += 1;
                7
            });
            assert_eq!(v, 7);
        }
        assert_eq!(calls, 1);
    }

    /// Threads racing on one key all get the value stored first (the same `Arc`), as the
    /// pools' template keys compare tables by pointer.
    #[test]
    fn racing_threads_share_the_first_value() {
        use std::sync::{Arc, Barrier};
        let memo: Memo<u8, Arc<u8>> = Memo::default();
        let barrier = Barrier::new(4);
        let values: Vec<Arc<u8>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        memo.get_or_insert_with(0, || {
                            barrier.wait();
                            Arc::new(0)
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("joins"))
                .collect()
        });
        assert!(values.iter().all(|v| Arc::ptr_eq(v, &values[0])));
    }
}
