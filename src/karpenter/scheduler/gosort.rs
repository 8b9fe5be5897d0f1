//! Go's `sort.Slice`: the pattern-defeating quicksort of Go's standard library
//! (`pdqsort_func` in `sort/zsortfunc.go`, the same since Go 1.19), step for step.
//! Karpenter sorts its NodeClaims by pod count with it before each pod
//! (`Scheduler.add`), and it is not stable: NodeClaims of equal count come out in the
//! order this algorithm leaves them, which decides the NodeClaim a pod joins. Its one
//! source of "randomness" (`breakPatterns`) is a xorshift seeded with the length, so the
//! order is a function of the input.

/// `sort.Slice(data, less)`.
pub(super) fn slice<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let limit = usize::BITS - data.len().leading_zeros();
    let mut sorter = Sorter { data, less };
    let b = sorter.data.len();
    sorter.pdqsort(0, b, limit);
}

/// Whether `choosePivot` finds `data` (of 50 elements or more) increasing, so that
/// `pdqsort` first tries `partialInsertionSort` on it. When one element alone is out of
/// place, that partial insertion sort puts it where a stable sort would (among the
/// elements equal to it, after those it followed and before those it preceded).
pub(super) fn pivot_sees_increasing<T>(data: &[T], less: impl Fn(&T, &T) -> bool) -> bool {
    let less = |i: usize, j: usize| less(&data[i], &data[j]);
    matches!(choose_pivot(&less, 0, data.len()).1, Hint::Increasing)
}

/// `sortedHint`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

/// `lessSwap` over a slice.
struct Sorter<'d, T, F> {
    data: &'d mut [T],
    less: F,
}

impl<T, F: Fn(&T, &T) -> bool> Sorter<'_, T, F> {
    fn less(&self, i: usize, j: usize) -> bool {
        (self.less)(&self.data[i], &self.data[j])
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.data.swap(i, j);
    }

    /// `insertionSort_func`.
    fn insertion_sort(&mut self, a: usize, b: usize) {
        for i in a + 1..b {
            let mut j = i;
            while j > a && self.less(j, j - 1) {
                self.swap(j, j - 1);
                j -= 1;
            }
        }
    }

    /// `siftDown_func`.
    fn sift_down(&mut self, lo: usize, hi: usize, first: usize) {
        let mut root = lo;
        loop {
            let mut child = 2 * root + 1;
            if child >= hi {
                return;
            }
            if child + 1 < hi && self.less(first + child, first + child + 1) {
                child += 1;
            }
            if !self.less(first + root, first + child) {
                return;
            }
            self.swap(first + root, first + child);
            root = child;
        }
    }

    /// `heapSort_func`.
    fn heap_sort(&mut self, a: usize, b: usize) {
        let (first, lo, hi) = (a, 0, b - a);
        for i in (0..=(hi - 1) / 2).rev() {
            self.sift_down(i, hi, first);
        }
        for i in (0..hi).rev() {
            self.swap(first, first + i);
            self.sift_down(lo, i, first);
        }
    }

    /// `pdqsort_func`.
    fn pdqsort(&mut self, mut a: usize, mut b: usize, mut limit: u32) {
        const MAX_INSERTION: usize = 12;
        let (mut was_balanced, mut was_partitioned) = (true, true);
        loop {
            let length = b - a;
            if length <= MAX_INSERTION {
                self.insertion_sort(a, b);
                return;
            }
            if limit == 0 {
                self.heap_sort(a, b);
                return;
            }
            if !was_balanced {
                self.break_patterns(a, b);
                limit -= 1;
            }
            let (mut pivot, mut hint) = choose_pivot(&|i, j| self.less(i, j), a, b);
            if hint == Hint::Decreasing {
                self.reverse_range(a, b);
                pivot = (b - 1) - (pivot - a);
                hint = Hint::Increasing;
            }
            if was_balanced
                && was_partitioned
                && hint == Hint::Increasing
                && self.partial_insertion_sort(a, b)
            {
                return;
            }
            if a > 0 && !self.less(a - 1, pivot) {
                a = self.partition_equal(a, b, pivot);
                continue;
            }
            let (mid, already_partitioned) = self.partition(a, b, pivot);
            was_partitioned = already_partitioned;
            let (left_len, right_len) = (mid - a, b - mid);
            let balance_threshold = length / 8;
            if left_len < right_len {
                was_balanced = left_len >= balance_threshold;
                self.pdqsort(a, mid, limit);
                a = mid + 1;
            } else {
                was_balanced = right_len >= balance_threshold;
                self.pdqsort(mid + 1, b, limit);
                b = mid;
            }
        }
    }

    /// `partition_func`: the new place of the pivot, and whether the slice was already
    /// partitioned. Go writes the loop's first pass out before the loop, returning at once
    /// when it swaps nothing; here the loop's first pass is it.
    fn partition(&mut self, a: usize, b: usize, pivot: usize) -> (usize, bool) {
        self.swap(a, pivot);
        // Inclusive bounds of what is left to partition; `j` may pass below `a + 1`.
        let (mut i, mut j) = (a + 1, b - 1);
        let mut already_partitioned = true;
        loop {
            while i <= j && self.less(i, a) {
                i += 1;
            }
            while i <= j && !self.less(j, a) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i, j);
            i += 1;
            j -= 1;
            already_partitioned = false;
        }
        self.swap(j, a);
        (j, already_partitioned)
    }

    /// `partitionEqual_func`.
    fn partition_equal(&mut self, a: usize, b: usize, pivot: usize) -> usize {
        self.swap(a, pivot);
        let (mut i, mut j) = (a + 1, b - 1);
        loop {
            while i <= j && !self.less(a, i) {
                i += 1;
            }
            while i <= j && self.less(a, j) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
        i
    }

    /// `partialInsertionSort_func`: whether the slice is sorted at the end.
    fn partial_insertion_sort(&mut self, a: usize, b: usize) -> bool {
        const MAX_STEPS: usize = 5;
        const SHORTEST_SHIFTING: usize = 50;
        let mut i = a + 1;
        for _ in 0..MAX_STEPS {
            while i < b && !self.less(i, i - 1) {
                i += 1;
            }
            if i == b {
                return true;
            }
            if b - a < SHORTEST_SHIFTING {
                return false;
            }
            self.swap(i, i - 1);
            // Go shifts down to index 1 of the whole slice, not to `a`.
            if i - a >= 2 {
                let mut j = i - 1;
                while j >= 1 && self.less(j, j - 1) {
                    self.swap(j, j - 1);
                    j -= 1;
                }
            }
            if b - i >= 2 {
                let mut j = i + 1;
                while j < b && self.less(j, j - 1) {
                    self.swap(j, j - 1);
                    j += 1;
                }
            }
        }
        false
    }

    /// `breakPatterns_func`.
    fn break_patterns(&mut self, a: usize, b: usize) {
        let length = b - a;
        if length >= 8 {
            let mut random = length as u64;
            let modulus = 1usize << (usize::BITS - length.leading_zeros());
            for idx in a + (length / 4) * 2 - 1..=a + (length / 4) * 2 + 1 {
                random ^= random << 13;
                random ^= random >> 7;
                random ^= random << 17;
                let mut other = (random as usize) & (modulus - 1);
                if other >= length {
                    other -= length;
                }
                self.swap(idx, a + other);
            }
        }
    }

    /// `reverseRange_func`.
    fn reverse_range(&mut self, a: usize, b: usize) {
        let (mut i, mut j) = (a, b - 1);
        while i < j {
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
    }
}

/// `choosePivot_func`, over `less` of two indices (it only compares).
fn choose_pivot(less: &impl Fn(usize, usize) -> bool, a: usize, b: usize) -> (usize, Hint) {
    const SHORTEST_NINTHER: usize = 50;
    const MAX_SWAPS: usize = 4 * 3;
    let l = b - a;
    let mut swaps = 0;
    let (mut i, mut j, mut k) = (a + l / 4, a + l / 4 * 2, a + l / 4 * 3);
    if l >= 8 {
        if l >= SHORTEST_NINTHER {
            i = median(less, i - 1, i, i + 1, &mut swaps);
            j = median(less, j - 1, j, j + 1, &mut swaps);
            k = median(less, k - 1, k, k + 1, &mut swaps);
        }
        j = median(less, i, j, k, &mut swaps);
    }
    match swaps {
        0 => (j, Hint::Increasing),
        MAX_SWAPS => (j, Hint::Decreasing),
        _ => (j, Hint::Unknown),
    }
}

/// `order2_func`.
fn order2(
    less: &impl Fn(usize, usize) -> bool,
    a: usize,
    b: usize,
    swaps: &mut usize,
) -> (usize, usize) {
    if less(b, a) {
        *swaps += 1;
        return (b, a);
    }
    (a, b)
}

/// `median_func`.
fn median(
    less: &impl Fn(usize, usize) -> bool,
    a: usize,
    b: usize,
    c: usize,
    swaps: &mut usize,
) -> usize {
    let (a, b) = order2(less, a, b, swaps);
    let (b, _) = order2(less, b, c, swaps);
    let (_, b) = order2(less, a, b, swaps);
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `sort.Slice` sorts.
        #[test]
        fn slice_sorts(mut keys in proptest::collection::vec(0u8..6, 0..300)) {
            let mut expected = keys.clone();
            expected.sort_unstable();
            slice(&mut keys, |a, b| a < b);
            prop_assert_eq!(keys, expected);
        }

        /// Up to 12 elements, `sort.Slice` is an insertion sort: stable.
        #[test]
        fn slice_is_stable_up_to_twelve(keys in proptest::collection::vec(0u8..4, 0..=12)) {
            let mut tagged: Vec<(u8, usize)> = keys.iter().copied().zip(0..).collect();
            let mut expected = tagged.clone();
            expected.sort_by_key(|&(k, _)| k);
            slice(&mut tagged, |a, b| a.0 < b.0);
            prop_assert_eq!(tagged, expected);
        }
    }

    proptest! {
        /// What [`pivot_sees_increasing`] promises: sorted keys with one of them raised by
        /// one, or a smallest key put last (a NodeClaim took a pod, or was made), come out
        /// of `sort.Slice` as a stable sort leaves them, up to 12 elements and, from 50,
        /// when its pivot sees them increasing.
        #[test]
        fn one_move_sorts_as_stable_when_promised(
            mut keys in proptest::collection::vec(1u8..5, 1..200),
            at in any::<prop::sample::Index>(),
            made in any::<bool>(),
        ) {
            keys.sort_unstable();
            if made {
                keys.push(1);
            } else {
                let at = at.index(keys.len());
                keys[at] += 1;
            }
            let mut tagged: Vec<(u8, usize)> = keys.iter().copied().zip(0..).collect();
            let n = tagged.len();
            let promised = n <= 12 || (n >= 50 && pivot_sees_increasing(&tagged, |a, b| a.0 < b.0));
            let mut stable = tagged.clone();
            stable.sort_by_key(|&(k, _)| k);
            slice(&mut tagged, |a, b| a.0 < b.0);
            if promised {
                prop_assert_eq!(tagged, stable);
            }
        }
    }

    /// Orders Go 1.26's `sort.Slice` gives (by a Go program sorting the same tagged keys
    /// by key alone): equal keys do not keep their order beyond 12 elements.
    #[test]
    fn slice_matches_go() {
        let cases: &[(&[u8], &[usize])] = GO_CASES;
        for (keys, go) in cases {
            let mut tagged: Vec<(u8, usize)> = keys.iter().copied().zip(0..).collect();
            slice(&mut tagged, |a, b| a.0 < b.0);
            let order: Vec<usize> = tagged.iter().map(|&(_, i)| i).collect();
            assert_eq!(&order, go, "keys {keys:?}");
        }
    }

    include!("gosort_cases.rs");
}
