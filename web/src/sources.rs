//! The sources under an answer (docs/knowledge.md): each passage the turn's `search_knowledge`
//! calls found, as core's `sources::of_turn` lists them, with its document and where in it the
//! passage is, and the passage itself on one line that opens whole. Each entry's id is
//! `portal_core::sources::element_id`'s, so that a citation can link to it.

use leptos::prelude::*;
use portal_core::sources::{self, Source};

use crate::turn_view::TurnView;

/// The sources of `turn`'s answer; nothing when its searches found none.
#[component]
pub fn Sources(turn: TurnView) -> impl IntoView {
    let found = Memo::new(move |_| turn.state.with(sources::of_turn));
    move || {
        let found = found.get();
        (!found.is_empty()).then(|| {
            let heading = format!("turn-{}-sources", turn.index);
            let labelled_by = heading.clone();
            let entries = found
                .into_iter()
                .map(|source| entry(turn.index, source))
                .collect_view();
            view! {
                <section class="sources" aria-labelledby=labelled_by data-testid="sources">
                    <h3 id=heading>"Sources"</h3>
                    <ol>{entries}</ol>
                </section>
            }
        })
    }
}

/// One passage of turn `turn`'s sources: its document and place, and its text on one line,
/// whole when opened.
fn entry(turn: u32, source: Source) -> impl IntoView {
    let id = sources::element_id(turn, &source.reference);
    let place = source.place().unwrap_or_default();
    // The style sheet runs the line's white space together and cuts it to the width.
    let line = source.text.clone();
    view! {
        <li id=id data-testid="source" data-reference=source.reference>
            <details>
                <summary>
                    <span class="source-document" dir="auto">{source.document}</span>
                    <span class="source-place" dir="auto">{place}</span>
                    <span class="source-line" dir="auto">{line}</span>
                </summary>
                <p class="source-text" dir="auto">{source.text}</p>
            </details>
        </li>
    }
}
