//! Markdown goldens: every document in `tests/markdown/` parsed whole, as the tree's outline in
//! the `.txt` golden beside it. Played out one grapheme cluster at a time, every document ends
//! as the same tree; a `streaming-*` document's golden also shows each frame that draws
//! something new. Regenerate with `UPDATE_EXPECT=1 cargo test -p portal-core --test it markdown::`.

use crate::markdown_support;

use expect_test::{expect, expect_file};
use markdown_support::{documents, drawn, outline, play, read};
use portal_core::markdown::{StreamingMarkdown, Update, parse};

/// How many documents the goldens cover at least.
const AT_LEAST: usize = 40;

/// Past this length (in bytes) a document plays out this many clusters at a time, so that the
/// deep hostile documents stay quick in debug builds.
const PLAYED_ONE_BY_ONE: usize = 4_000;
const LONG_DOCUMENT_PIECE: usize = 97;

fn check(name: &str) {
    let reply = read(name);
    let blocks = parse(&reply);
    let mut shown = outline(&blocks);
    let clusters = if reply.len() > PLAYED_ONE_BY_ONE {
        LONG_DOCUMENT_PIECE
    } else {
        1
    };
    let mut frames = Vec::new();
    let streamed = play(&reply, clusters, |_, markdown| {
        let drawing = drawn(markdown.blocks());
        if frames.last() != Some(&drawing) {
            frames.push(drawing);
        }
    });
    frames.push(drawn(streamed.blocks()));
    assert_eq!(
        streamed.blocks(),
        blocks.as_slice(),
        "{name}: played out, the reply ends as parsed whole"
    );
    if name.starts_with("streaming-") {
        shown.push_str("\nas it plays out:\n");
        for frame in frames {
            shown.push_str(&frame);
            shown.push('\n');
        }
    }
    expect_file![format!("../../../tests/markdown/{name}.txt")].assert_eq(&shown);
}

#[test]
fn every_document_draws_as_its_golden() {
    let names = documents();
    assert!(
        names.len() >= AT_LEAST,
        "{} documents, at least {AT_LEAST} wanted",
        names.len()
    );
    for name in &names {
        check(name);
    }
}

#[test]
fn the_tree_serialises_as_tagged_camel_case_objects() {
    let blocks = parse("# Hi\n\n- [x] **a** [b](https://b.example)\n\n```rust\nx\n```\n");
    let json = serde_json::to_string_pretty(&blocks).expect("a tree serialises");
    expect![[r#"
        [
          {
            "kind": "heading",
            "level": 1,
            "content": [
              {
                "kind": "text",
                "text": "Hi",
                "source": {
                  "start": 2,
                  "end": 4
                }
              }
            ]
          },
          {
            "kind": "list",
            "start": null,
            "tight": true,
            "items": [
              {
                "task": true,
                "blocks": [
                  {
                    "kind": "paragraph",
                    "content": [
                      {
                        "kind": "strong",
                        "content": [
                          {
                            "kind": "text",
                            "text": "a",
                            "source": {
                              "start": 14,
                              "end": 15
                            }
                          }
                        ]
                      },
                      {
                        "kind": "text",
                        "text": " ",
                        "source": {
                          "start": 17,
                          "end": 18
                        }
                      },
                      {
                        "kind": "link",
                        "href": "https://b.example",
                        "pending": false,
                        "image": false,
                        "content": [
                          {
                            "kind": "text",
                            "text": "b",
                            "source": {
                              "start": 19,
                              "end": 20
                            }
                          }
                        ]
                      }
                    ]
                  }
                ]
              }
            ]
          },
          {
            "kind": "code",
            "language": "rust",
            "content": [
              {
                "text": "x\n",
                "source": {
                  "start": 50,
                  "end": 52
                }
              }
            ]
          }
        ]"#]]
    .assert_eq(&json);
}

#[test]
fn an_update_names_what_a_renderer_draws_again() {
    let mut markdown = StreamingMarkdown::new();
    let update = markdown.push("First paragraph.\n\nSecond");
    assert_eq!(
        update,
        Update {
            unchanged: 0,
            redrawn: vec![],
            settled: 1
        }
    );
    let update = markdown.push(" one.");
    assert_eq!(
        update,
        Update {
            unchanged: 1,
            redrawn: vec![],
            settled: 1
        }
    );
    // A frame that reveals nothing leaves every block as drawn.
    let update = markdown.push("");
    assert_eq!(
        update,
        Update {
            unchanged: 2,
            redrawn: vec![],
            settled: 1
        }
    );
    // A definition that arrives later redraws the settled block that used its label.
    let mut markdown = StreamingMarkdown::new();
    markdown.push("See [the spec][spec].\n\nMore text.\n\n");
    let update = markdown.push("[spec]: https://spec.example\n\nDone");
    assert_eq!(
        update,
        Update {
            unchanged: 1,
            redrawn: vec![0],
            settled: 2
        }
    );
    let update = markdown.finish();
    assert_eq!(update.settled, 3);
    assert_eq!(markdown.blocks(), parse(markdown.reply()).as_slice());
}

#[test]
fn a_definition_counts_only_once_its_line_has_ended() {
    // Played out up to `https://x`, the first two lines are a definition; the rest of the line
    // makes them none, so `[a b]` stays text, as in the whole reply.
    let reply = "[a\nb]: https://x and more\n\n[a b]\n";
    let mut markdown = StreamingMarkdown::new();
    markdown.push("[a\nb]: https://x");
    markdown.push(" and more\n\n[a b]\n");
    markdown.finish();
    assert_eq!(markdown.blocks(), parse(reply).as_slice());
}
