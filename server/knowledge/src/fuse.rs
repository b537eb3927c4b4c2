//! Reciprocal rank fusion: several ranked lists (a keyword search's and an embedding search's,
//! say) become one, an item scoring `1 / (k + rank)` in each list it is in, rank 1 first. Only
//! ranks count, so scores from searches measured in different units need no scaling.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

/// The `k` of Cormack, Clarke and Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and
/// individual Rank Learning Methods" (SIGIR 2009), who found 60 good across collections: it keeps
/// one list's first place from outweighing an item ranked well in all of them.
pub const RRF_K: f64 = 60.0;

/// The items of `lists` with their fused scores, best first. Items with equal scores keep the
/// order in which they first appear, reading the lists one after another; an item repeated within
/// one list counts at its first rank there.
pub fn reciprocal_rank<T: Clone + Eq + Hash>(lists: &[Vec<T>], k: f64) -> Vec<(T, f64)> {
    let mut fused: Vec<(T, f64)> = Vec::new();
    let mut place: HashMap<&T, usize> = HashMap::new();
    for list in lists {
        let mut seen = HashSet::new();
        for (rank, item) in list.iter().enumerate() {
            if !seen.insert(item) {
                continue;
            }
            let score = 1.0 / (k + (rank + 1) as f64);
            match place.get(item) {
                Some(&at) => fused[at].1 += score,
                None => {
                    place.insert(item, fused.len());
                    fused.push((item.clone(), score));
                }
            }
        }
    }
    // A stable sort keeps first appearances first among equal scores.
    fused.sort_by(|a, b| b.1.total_cmp(&a.1));
    fused
}
