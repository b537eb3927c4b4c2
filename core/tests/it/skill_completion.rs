//! The composer's `/skill` autocomplete (rule S1): offered only among the leading slugs.

use portal_core::skills::{CatalogueEntry, complete};

fn selectable() -> Vec<CatalogueEntry> {
    ["fact-check", "far-east", "itinerary"]
        .into_iter()
        .map(|name| CatalogueEntry {
            name: name.into(),
            description: format!("Use for {name}."),
        })
        .collect()
}

/// `text` has the cursor at `|`; `expected` lists the offered names, empty for no completion.
fn check(text: &str, expected: &[&str]) {
    let cursor = text.find('|').expect("a cursor mark");
    let text = text.replace('|', "");
    let offered: Vec<String> = complete(&text, cursor, &selectable())
        .map(|c| c.matches.into_iter().map(|m| m.name).collect())
        .unwrap_or_default();
    assert_eq!(offered, expected, "for {text:?} at {cursor}");
}

#[test]
fn s1_completion_offers_skills_for_a_leading_slug() {
    check("/|", &["compact", "fact-check", "far-east", "itinerary"]);
    check("/f|", &["fact-check", "far-east"]);
    check("/fac|", &["fact-check"]);
    check("  /i|", &["itinerary"]);
    check("/fact-check /f|", &["far-east"]);
    check("/fact-check /|", &["far-east", "itinerary"]);
    check("/fact-check\n/it|", &["itinerary"]);
}

/// Issue 32: `/compact` is found where skills are, as the message's first token only.
#[test]
fn c6_completion_offers_the_compact_command_first_as_the_first_token() {
    check("/c|", &["compact"]);
    check("  /comp|", &["compact"]);
    check("/fact-check /c|", &[]);
    check("/compact|", &[]);
    check("/compacts|", &[]);
}

#[test]
fn s1_completion_offers_nothing_where_a_slug_would_select_nothing() {
    check("|", &[]);
    check("Hello /f|", &[]);
    check("/fact-check Is it /f|", &[]);
    check("/compact /f|", &[]);
    check("/F|", &[]);
    check("/fact-check|", &["fact-check"]);
    check("/fact-checks|", &[]);
    check("/zzz|", &[]);
    check("/fact-check / /f|", &[]);
}

#[test]
fn s1_accepting_a_completion_writes_the_slug_and_a_space() {
    let text = "/fact-check /it Plan my week";
    let cursor = "/fact-check /it".len();
    let completion = complete(text, cursor, &selectable()).unwrap();
    assert_eq!(
        completion.accept(text, "itinerary"),
        (
            "/fact-check /itinerary Plan my week".to_string(),
            "/fact-check /itinerary ".len()
        )
    );
    let text = "¿/f";
    assert_eq!(
        complete(text, text.len(), &selectable()),
        None,
        "a slug starts a token"
    );
    let text = "é /f";
    assert_eq!(complete(text, text.len(), &selectable()), None);
}
