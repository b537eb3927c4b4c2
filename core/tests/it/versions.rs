//! Versions of one message (issue 32): a turn that answers another's message again joins its
//! versions, numbered in order; the page shows one of them at a time.

use crate::prompt_support;

use portal_core::display::{Version, versions};
use portal_core::{TraceEntry, TurnKind, TurnStatus, validate};
use prompt_support::*;

/// `turns` is each turn as `N` or `N>K` (turn N answers turn K again); `expected` each turn as
/// `N:first:number/of`.
fn check(turns: &str, expected: &str) {
    let parsed: Vec<(u32, Option<u32>)> = turns
        .split_whitespace()
        .map(|t| match t.split_once('>') {
            Some((n, k)) => (n.parse().unwrap(), Some(k.parse().unwrap())),
            None => (t.parse().unwrap(), None),
        })
        .collect();
    let shown: Vec<String> = parsed
        .iter()
        .zip(versions(&parsed))
        .map(|(&(n, _), Version { first, number, of })| format!("{n}:{first}:{number}/{of}"))
        .collect();
    assert_eq!(shown.join(" "), expected, "{turns}");
}

#[test]
fn turns_answered_again_are_versions_of_the_first() {
    check("1 2 3", "1:1:1/1 2:2:1/1 3:3:1/1");
    check("1 2>1", "1:1:1/2 2:1:2/2");
    // Regenerated twice, then a new message, regenerated once.
    check("1 2>1 3>2 4 5>4", "1:1:1/3 2:1:2/3 3:1:3/3 4:4:1/2 5:4:2/2");
    // Each time the first is named, not the latest version.
    check("1 2 3>2 4>2", "1:1:1/1 2:2:1/3 3:2:2/3 4:2:3/3");
    check("", "");
}

#[test]
fn a_link_that_does_not_point_back_starts_versions_of_its_own() {
    // Messy input never panics: a turn naming itself, a later turn or one not there.
    check("1>1 2>5 3>0", "1:1:1/1 2:2:1/1 3:3:1/1");
}

#[test]
fn validate_refuses_a_turn_answering_again_what_is_not_an_earlier_chat_turn() {
    for (again, compact_first, valid) in [
        (1, false, true),
        (2, false, false),
        (3, false, false),
        (1, true, false),
    ] {
        let mut conversation = transcript(vec![chat("Hola", "¡Hola!"), chat("Hola", "¡Buenas!")]);
        if compact_first {
            conversation.turns[0].kind = TurnKind::Compact;
            conversation.turns[0].status = TurnStatus::CutOff;
        }
        conversation.turns[1]
            .trace
            .push(TraceEntry::AnswersAgain { turn: again });
        let checked = validate(&conversation);
        assert_eq!(
            checked.is_ok(),
            valid,
            "again {again}, compact {compact_first}: {checked:?}"
        );
        if let Err(error) = checked {
            assert!(
                error.to_string().starts_with("turn 2: turn answers turn"),
                "{error}"
            );
        }
    }
}
