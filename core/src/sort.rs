//! One small stable sort for the whole crate.
//!
//! The standard library's sorts are fast, but each element type they are
//! used with brings its own copy of their code (driftsort, ipnsort and
//! their sorting networks) into the filter's `.wasm`: about 5 KB a type
//! after `wasm-opt`, 73 KB over the dozen types the crate and its
//! dependencies sorted, more than any other part of the module. This sort
//! is the stable in-place merge of Go's `sort.Stable` (insertion-sorted
//! blocks, then `sym_merge` by rotations): no allocation, no `Clone`,
//! O(n log n) comparisons and O(n log² n) moves in the worst case, a few
//! hundred bytes a type. What the crate sorts is short (a request's
//! findings, edits and used entries; lists built once per VM), so the
//! extra moves do not show. The vault index sorts its hash words with its
//! own quicksort (`snapshot/token_matcher.rs`): those are a vault's worth.

/// Sorts `v` by `less` (a strict order: `less(a, b)` when `a` goes before
/// `b`); equal elements keep their order.
pub fn sort_by<T>(v: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    stable(v, &mut less);
}

/// Sorts `v` by the key `key` gives (computed at each comparison: keep it
/// cheap); equal keys keep their order.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    stable(v, &mut |a: &T, b: &T| key(a) < key(b));
}

/// Sorts `v` in its natural order; equal elements keep their order.
pub fn sort<T: Ord>(v: &mut [T]) {
    stable(v, &mut |a: &T, b: &T| a < b);
}

/// Blocks this long are insertion-sorted before the merges.
const BLOCK: usize = 20;

/// The order comes as `dyn`: one copy of the code per element type, not
/// one per comparison written at a call site.
type Less<'a, T> = dyn FnMut(&T, &T) -> bool + 'a;

fn stable<T>(v: &mut [T], less: &mut Less<'_, T>) {
    let n = v.len();
    let mut a = 0;
    while a < n {
        let b = (a + BLOCK).min(n);
        insertion_sort(&mut v[a..b], less);
        a = b;
    }
    let mut block = BLOCK;
    while block < n {
        let mut a = 0;
        while a + block < n {
            let b = (a + 2 * block).min(n);
            sym_merge(v, a, a + block, b, less);
            a = b;
        }
        block *= 2;
    }
}

fn insertion_sort<T>(v: &mut [T], less: &mut Less<'_, T>) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && less(&v[j], &v[j - 1]) {
            v.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// Merges the sorted runs `v[a..m]` and `v[m..b]` in place (Kim and
/// Kutzner's SymMerge, as Go's `sort.Stable` writes it).
fn sym_merge<T>(v: &mut [T], a: usize, m: usize, b: usize, less: &mut Less<'_, T>) {
    if a >= m || m >= b {
        return;
    }
    if m - a == 1 {
        // One element on the left: it goes before the first right element
        // not less than it.
        let (mut i, mut j) = (m, b);
        while i < j {
            let h = i + (j - i) / 2;
            if less(&v[h], &v[a]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        v[a..i].rotate_left(1);
        return;
    }
    if b - m == 1 {
        // One element on the right: it goes after the last left element
        // not greater than it.
        let (mut i, mut j) = (a, m);
        while i < j {
            let h = i + (j - i) / 2;
            if !less(&v[m], &v[h]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        v[i..=m].rotate_right(1);
        return;
    }
    let mid = a + (b - a) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = start + (r - start) / 2;
        if !less(&v[p - c], &v[c]) {
            start = c + 1;
        } else {
            r = c;
        }
    }
    let end = n - start;
    if start < m && m < end {
        v[start..end].rotate_left(m - start);
    }
    if a < start && start < mid {
        sym_merge(v, a, start, mid, less);
    }
    if mid < end && end < b {
        sym_merge(v, mid, end, b, less);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The same order as the standard library's stable sort, equal
        /// keys in their first order (each element carries its position).
        #[test]
        fn sorts_like_the_standard_stable_sort(
            keys in proptest::collection::vec(0u8..12, 0..300),
        ) {
            let mut ours: Vec<(u8, usize)> = keys.iter().copied().zip(0..).collect();
            let mut std_sorted = ours.clone();
            sort_by_key(&mut ours, |&(k, _)| k);
            std_sorted.sort_by_key(|&(k, _)| k);
            prop_assert_eq!(ours, std_sorted);
        }

        #[test]
        fn sort_and_sort_by_agree_with_the_standard_sort(
            items in proptest::collection::vec(any::<u16>(), 0..200),
        ) {
            let mut natural = items.clone();
            let mut reversed = items.clone();
            let mut expected = items;
            sort(&mut natural);
            sort_by(&mut reversed, |a, b| b < a);
            expected.sort();
            prop_assert_eq!(&natural, &expected);
            expected.reverse();
            prop_assert_eq!(reversed, expected);
        }
    }

    #[test]
    fn long_runs_of_every_shape_are_sorted() {
        for n in [0, 1, 2, 19, 20, 21, 40, 41, 1000, 4097] {
            let shapes: [Vec<usize>; 4] = [
                (0..n).collect(),
                (0..n).rev().collect(),
                vec![7; n],
                (0..n).map(|i| (i * 7919) % 101).collect(),
            ];
            for shape in shapes {
                let mut ours: Vec<(usize, usize)> = shape.iter().copied().zip(0..).collect();
                let mut expected = ours.clone();
                sort_by_key(&mut ours, |&(k, _)| k);
                expected.sort_by_key(|&(k, _)| k);
                assert_eq!(ours, expected, "n = {n}");
            }
        }
    }
}
