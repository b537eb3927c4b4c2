//! Reciprocal rank fusion: known fusions, and the two properties a search relies on.

use portal_knowledge::fuse::{RRF_K, reciprocal_rank};
use proptest::prelude::*;

/// Fuses `lists` with [`RRF_K`] and compares the items, best first, with `expected`.
fn check(lists: &[Vec<&str>], expected: &[&str]) {
    let fused: Vec<&str> = reciprocal_rank(lists, RRF_K)
        .into_iter()
        .map(|(item, _)| item)
        .collect();
    assert_eq!(fused, expected, "fusing {lists:?}");
}

#[test]
fn fusions_rank_agreement_first_and_break_ties_by_first_appearance() {
    let cases: &[(&[Vec<&str>], &[&str])] = &[
        (&[], &[]),
        (&[vec![], vec![]], &[]),
        (&[vec!["a", "b", "c"]], &["a", "b", "c"]),
        // b is second in both; a and c are first in one each, and a appeared first.
        (&[vec!["a", "b"], vec!["c", "b"]], &["b", "a", "c"]),
        // An item repeated in one list counts at its first rank only.
        (&[vec!["a", "a", "b"], vec!["b"]], &["b", "a"]),
        (
            &[vec!["x", "y", "z"], vec!["z", "y", "x"]],
            &["x", "z", "y"],
        ),
    ];
    for (lists, expected) in cases {
        check(lists, expected);
    }
}

#[test]
fn scores_are_the_sum_of_reciprocal_ranks() {
    let fused = reciprocal_rank(&[vec![1, 2], vec![2]], 60.0);
    assert_eq!(fused, [(2, 1.0 / 62.0 + 1.0 / 61.0), (1, 1.0 / 61.0)]);
}

proptest! {
    #[test]
    fn a_list_fused_alone_keeps_its_order(list in prop::collection::hash_set(0u32..1_000, 0..50)) {
        let list: Vec<u32> = list.into_iter().collect();
        let fused: Vec<u32> = reciprocal_rank(std::slice::from_ref(&list), RRF_K)
            .into_iter()
            .map(|(item, _)| item)
            .collect();
        prop_assert_eq!(fused, list);
    }

    #[test]
    fn an_item_in_both_lists_outranks_items_in_one_ranked_no_better(
        first in prop::collection::hash_set(0u32..30, 0..20),
        second in prop::collection::hash_set(0u32..30, 0..20),
    ) {
        let lists: [Vec<u32>; 2] = [first.into_iter().collect(), second.into_iter().collect()];
        let place = |list: &[u32], item| list.iter().position(|&other| other == item);
        let fused: Vec<u32> = reciprocal_rank(&lists, RRF_K)
            .into_iter()
            .map(|(item, _)| item)
            .collect();
        for &both in &fused {
            let (Some(a), Some(b)) = (place(&lists[0], both), place(&lists[1], both)) else {
                continue;
            };
            for &one in &fused {
                let rank = match (place(&lists[0], one), place(&lists[1], one)) {
                    (Some(rank), None) | (None, Some(rank)) => rank,
                    _ => continue,
                };
                if a.min(b) <= rank {
                    prop_assert!(place(&fused, both) < place(&fused, one), "{both} {one} {lists:?}");
                }
            }
        }
    }
}
