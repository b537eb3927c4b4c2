//! Passages: each source's split against what it should be, and the invariants of any split.

use expect_test::{Expect, expect};
use portal_knowledge::chunk::{Chunk, PASSAGE_CHARS, Source, split};
use proptest::prelude::*;

/// Splits `source` into at most `most` passages and compares them, one line each (page, start,
/// headings, length, then the text's ends), with `expected`.
fn check(source: Source<'_>, most: usize, expected: Expect) {
    let shown: String = split(source, most).iter().map(show).collect();
    expected.assert_eq(&shown);
}

fn show(chunk: &Chunk) -> String {
    let page = chunk.page.map_or(String::new(), |page| format!("p{page} "));
    let chars: Vec<char> = chunk.text.chars().collect();
    let ends = if chars.len() <= 60 {
        chunk.text.clone()
    } else {
        let head: String = chars[..30].iter().collect();
        let tail: String = chars[chars.len() - 20..].iter().collect();
        format!("{head}…{tail}")
    };
    format!(
        "{page}@{} {:?} {} chars: {:?}\n",
        chunk.start,
        chunk.headings,
        chars.len(),
        ends
    )
}

/// `sentences` sentences of filler, each 60 characters with its space.
fn filler(sentences: usize) -> String {
    "The quick brown fox jumps over the lazy dog near the river. ".repeat(sentences)
}

#[test]
fn markdown_passages_carry_the_headings_they_start_under() {
    let text = format!(
        "# Installation\n\n{}\n\n## On Debian\n\n{}\n\n### Troubleshooting\n\n{}\n\n## On macOS\n\n{}\n\n# Use\n\n{}\n",
        filler(8),
        filler(15),
        filler(12),
        filler(10),
        filler(4),
    );
    check(
        Source::Markdown(&text),
        100,
        expect![[r####"
            @0 ["Installation"] 495 chars: "# Installation\n\nThe quick brow… dog near the river."
            @498 ["Installation", "On Debian"] 913 chars: "## On Debian\n\nThe quick brown … dog near the river."
            @1414 ["Installation", "On Debian", "Troubleshooting"] 740 chars: "### Troubleshooting\n\nThe quick… dog near the river."
            @2157 ["Installation", "On macOS"] 861 chars: "## On macOS\n\nThe quick brown f… dog near the river."
        "####]],
    );
}

#[test]
fn setext_headings_count_and_a_long_heading_is_cut() {
    let long = "Very long heading ".repeat(20);
    let text = format!(
        "Guide\n=====\n\n{}\n\nSetup *with* `code`\n-----\n\n{}\n\n# {long}\n\n{}\n",
        filler(15),
        filler(15),
        filler(5),
    );
    let chunks = split(Source::Markdown(&text), 100);
    let headings: Vec<_> = chunks.iter().map(|chunk| chunk.headings.clone()).collect();
    assert_eq!(headings[0], ["Guide"]);
    assert_eq!(headings[1], ["Guide", "Setup with code"]);
    let last = &headings[2];
    assert_eq!(last.len(), 1, "a level-one heading pops the others");
    assert_eq!(last[0].chars().count(), 200);
    assert!(long.starts_with(&last[0]));
}

#[test]
fn plain_text_splits_at_paragraphs_without_headings() {
    let text = format!(
        "  \n\n{}\n\n# Not a heading here\n\n{}",
        filler(15),
        filler(15)
    );
    check(
        Source::Plain(&text),
        100,
        expect![[r##"
            @4 [] 899 chars: "The quick brown fox jumps over… dog near the river."
            @906 [] 921 chars: "# Not a heading here\n\nThe quic… dog near the river."
        "##]],
    );
}

#[test]
fn pages_are_split_each_on_its_own_and_blank_pages_give_nothing() {
    let pages = [filler(3), " \n\t ".to_owned(), filler(30), String::new()];
    check(
        Source::Pages(&pages),
        100,
        expect![[r#"
            p1 @0 [] 179 chars: "The quick brown fox jumps over… dog near the river."
            p3 @0 [] 839 chars: "The quick brown fox jumps over… dog near the river."
            p3 @840 [] 839 chars: "The quick brown fox jumps over… dog near the river."
            p3 @1680 [] 119 chars: "The quick brown fox jumps over… dog near the river."
        "#]],
    );
}

#[test]
fn most_caps_the_passages_of_a_hostile_document() {
    let pages = vec![filler(30); 10_000];
    check(
        Source::Pages(&pages),
        3,
        expect![[r#"
            p1 @0 [] 839 chars: "The quick brown fox jumps over… dog near the river."
            p1 @840 [] 839 chars: "The quick brown fox jumps over… dog near the river."
            p1 @1680 [] 119 chars: "The quick brown fox jumps over… dog near the river."
        "#]],
    );
    check(Source::Markdown(&filler(1_000)), 0, expect![""]);
}

#[test]
fn empty_and_blank_sources_give_nothing() {
    for source in [
        Source::Markdown(""),
        Source::Markdown("\n\n   \n"),
        Source::Plain(" \t\n"),
        Source::Pages(&[]),
    ] {
        assert_eq!(split(source, 10), []);
    }
}

/// Text with markdown's structure and some of its edges: headings of both kinds, lists, code,
/// blank runs and characters of several bytes.
fn markdownish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-zé日 .,]{0,300}",
        "#{1,6} [A-Za-z ]{0,40}\n",
        Just("Heading\n===\n".to_owned()),
        Just("\n\n".to_owned()),
        Just("- item\n- item\n".to_owned()),
        Just("```\ncode\n```\n".to_owned()),
        Just("   \n\t".to_owned()),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

/// What must hold of any split of `text`: each passage is at its start, at most `most` of them,
/// none longer than the most a passage has, none blank or untrimmed.
fn holds(text: &str, chunks: &[Chunk], most: usize) -> Result<(), TestCaseError> {
    prop_assert!(chunks.len() <= most);
    for chunk in chunks {
        prop_assert!(text[chunk.start..].starts_with(&chunk.text), "{chunk:?}");
        prop_assert!(chunk.text.chars().count() <= *PASSAGE_CHARS.end());
        prop_assert!(!chunk.text.is_empty());
        prop_assert_eq!(chunk.text.trim(), &chunk.text);
    }
    Ok(())
}

proptest! {
    #[test]
    fn markdown_passages_are_found_where_they_start(text in markdownish(), most in 0usize..8) {
        let chunks = split(Source::Markdown(&text), most);
        holds(&text, &chunks, most)?;
        prop_assert!(chunks.windows(2).all(|pair| pair[0].start < pair[1].start));
    }

    #[test]
    fn plain_passages_are_found_where_they_start(text in markdownish(), most in 0usize..8) {
        holds(&text, &split(Source::Plain(&text), most), most)?;
    }

    #[test]
    fn page_passages_are_found_on_their_pages(
        pages in prop::collection::vec(markdownish(), 0..4),
        most in 0usize..8,
    ) {
        let chunks = split(Source::Pages(&pages), most);
        prop_assert!(chunks.len() <= most);
        for chunk in &chunks {
            let page = chunk.page.expect("a page's passage has its page") as usize;
            holds(&pages[page - 1], std::slice::from_ref(chunk), most)?;
        }
    }
}
