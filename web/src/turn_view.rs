//! The view model of one turn: core's [`TurnState`] in a signal, with the elements its blocks are
//! drawn into and their live playouts. Core decides what an event changes; this module mirrors
//! the change in the page.

use leptos::prelude::*;
use portal_core::attachment::Attachment;
use portal_core::effort::Effort;
use portal_core::stream::TurnEvent;
use portal_core::turn_state::{Change, CompactionState};
use portal_core::{BlockKind, Turn, TurnState};
use portal_drawer::page::{document, element, now_ms};
use portal_drawer::{LiveReply, draw_reply};

use crate::highlight;

/// One turn as drawn.
#[derive(Debug, Clone, Copy)]
pub struct TurnView {
    pub index: u32,
    pub state: RwSignal<TurnState>,
    /// The files the user's message carries.
    pub attachments: StoredValue<Vec<Attachment>>,
    /// The effort the turn runs with (rule E2), once known.
    pub effort: RwSignal<Option<Effort>>,
    /// The drawn blocks, in the order of the state's blocks.
    pub blocks: RwSignal<Vec<BlockView>>,
    /// Whether the turn streamed in this page, so that the screen reader hears its answer once
    /// it settles (R14); a reloaded turn is not announced.
    pub announces: bool,
    /// The id of the last event read, to follow the turn again once it resumes.
    pub seen: StoredValue<usize>,
    /// The turn whose message this one answers again (a version of it, `crate::versions`).
    pub again: Option<u32>,
}

/// One block of the assistant's output, drawn into `body`, an element the view mounts.
#[derive(Debug, Clone, Copy)]
pub struct BlockView {
    pub kind: BlockKind,
    pub body: StoredValue<web_sys::Element, LocalStorage>,
    live: StoredValue<Option<LiveReply>, LocalStorage>,
    /// Whether the block is drawn whole: its playout ended, or it never had one.
    pub settled: RwSignal<bool>,
    /// For a compaction: when its summary began, for the clock (R11).
    pub started_ms: f64,
}

impl TurnView {
    /// A turn the person just sent, running, as the server numbered it.
    pub fn sent(
        index: u32,
        text: String,
        attachments: Vec<Attachment>,
        again: Option<u32>,
    ) -> Self {
        TurnView::new(TurnState::opened(index, text), attachments, true, again)
    }

    /// A stored turn drawn as settled plain text: no playout (R10).
    pub fn stored(turn: &Turn) -> Self {
        TurnView::drawn(TurnState::stored(turn), turn, false)
    }

    /// A turn still running when its conversation is opened: what storage holds drawn as plain
    /// text, a block still streaming going on from there, and the rest played out as the turn's
    /// events bring it (they are read from the turn's start; core keeps what storage held from
    /// being drawn twice).
    pub fn resumed(turn: &Turn) -> Self {
        TurnView::drawn(TurnState::resumed(turn), turn, true)
    }

    /// `turn`, drawn from `state`: each whole block plain, an open one live after its text so far.
    fn drawn(state: TurnState, turn: &Turn, announces: bool) -> Self {
        let view = TurnView::new(state, attachments(turn), announces, turn.answers_again());
        view.effort.set(turn.effort);
        let blocks = view.state.with_untracked(|s| {
            s.blocks
                .iter()
                .map(|b| match b.kind {
                    BlockKind::Compaction => BlockView::compaction(true),
                    kind if drawn_by_card(kind) => BlockView::settled(kind, ""),
                    kind if b.ended => BlockView::settled(kind, &b.text),
                    kind => BlockView::resumed(kind, &b.text),
                })
                .collect()
        });
        view.blocks.set(blocks);
        view
    }

    fn new(
        state: TurnState,
        attachments: Vec<Attachment>,
        announces: bool,
        again: Option<u32>,
    ) -> Self {
        TurnView {
            index: state.index,
            state: RwSignal::new(state),
            attachments: StoredValue::new(attachments),
            effort: RwSignal::new(None),
            blocks: RwSignal::new(Vec::new()),
            announces,
            seen: StoredValue::new(0),
            again,
        }
    }

    /// Folds one streamed event into the turn and draws what it changed; true when it ended or
    /// paused the turn (a pause read again is not one).
    pub fn apply(&self, event: &TurnEvent) -> bool {
        let Some(change) = self.state.try_update(|s| s.apply(event)) else {
            return false;
        };
        let ended = matches!(change, Change::TurnEnded { .. });
        match change {
            Change::Nothing => {}
            Change::Started { at } => {
                let kind = self.state.with_untracked(|s| s.blocks[at].kind);
                let view = match kind {
                    BlockKind::Compaction => BlockView::compaction(false),
                    kind if drawn_by_card(kind) => BlockView::settled(kind, ""),
                    kind => BlockView::live(kind),
                };
                self.blocks.update(|b| b.push(view));
            }
            Change::Grew { at, text } => {
                if let Some(live) = self.block(at).and_then(|b| b.live.get_value()) {
                    live.push(&text);
                }
            }
            Change::Ended { at } | Change::Compacted { at } => match self.block(at) {
                Some(view) => view.end(),
                // A compaction written with no start read (a follower that joined late).
                None => self.blocks.update(|b| b.push(BlockView::compaction(true))),
            },
            Change::Withdrawn { from } => {
                let withdrawn = self
                    .blocks
                    .try_update(|b| b.split_off(from.min(b.len())))
                    .unwrap_or_default();
                for view in withdrawn {
                    view.withdraw();
                }
            }
            Change::TurnEnded { .. } => {
                for view in self.blocks.get_untracked() {
                    view.end();
                }
            }
        }
        ended
    }

    /// Whether the turn has ended and every block has played out.
    pub fn settled(&self) -> bool {
        !self.state.with(|s| s.status.is_open())
            && self.blocks.get().iter().all(|b| b.settled.get())
    }

    /// The reader wants the rest of an ended turn's reply at once (Stop while it plays out): every
    /// block still playing out is drawn whole and settles now.
    pub fn settle_now(&self) {
        for view in self.blocks.get_untracked() {
            if let Some(live) = view.live.get_value() {
                live.settle_now();
            }
        }
    }

    /// The answer as the page draws it, its markdown's text without the syntax, for the screen
    /// reader's one announcement once the turn settles (R14).
    pub fn drawn_answer(&self) -> Option<String> {
        self.state.with(|s| s.answer())?;
        let drawn = self.state.with(|s| s.drawn());
        let texts: Vec<String> = self.blocks.with(|blocks| {
            blocks
                .iter()
                .zip(drawn)
                .filter(|(_, drawn)| *drawn == portal_core::display::Drawn::Answer)
                .map(|(block, _)| block.body.with_value(drawn_text))
                .collect()
        });
        Some(texts.join("\n\n"))
    }

    /// The compaction state of the block at `at`, if it is a compaction.
    pub fn compaction(&self, at: usize) -> Option<CompactionState> {
        self.state
            .with(|s| s.blocks.get(at).and_then(|b| b.compaction.clone()))
    }

    fn block(&self, at: usize) -> Option<BlockView> {
        self.blocks.with_untracked(|b| b.get(at).copied())
    }
}

impl BlockView {
    /// A block drawn as settled plain text, as a reloaded conversation shows it (R10).
    fn settled(kind: BlockKind, text: &str) -> Self {
        let body = body_element();
        draw_reply(&body, text, &highlight::drawing());
        BlockView {
            kind,
            body: StoredValue::new_local(body),
            live: StoredValue::new_local(None),
            settled: RwSignal::new(true),
            started_ms: 0.0,
        }
    }

    /// A compaction: written, or still being written (its clock starts now).
    fn compaction(written: bool) -> Self {
        let view = BlockView::settled(BlockKind::Compaction, "");
        view.settled.set(written);
        BlockView {
            started_ms: if written { 0.0 } else { now_ms() },
            ..view
        }
    }

    /// A block whose text streams in and plays out.
    fn live(kind: BlockKind) -> Self {
        BlockView::resumed(kind, "")
    }

    /// A block whose text so far, `shown`, is drawn plain, and whose rest streams in and plays
    /// out after it.
    fn resumed(kind: BlockKind, shown: &str) -> Self {
        let body = body_element();
        let settled = RwSignal::new(false);
        let live = LiveReply::resumed(body.clone(), shown, highlight::drawing(), move |_| {
            settled.set(true)
        });
        BlockView {
            kind,
            body: StoredValue::new_local(body),
            live: StoredValue::new_local(Some(live)),
            settled,
            started_ms: 0.0,
        }
    }

    /// The block was withdrawn (rule C2): its playout stops where it is; the page drops it.
    fn withdraw(&self) {
        if let Some(live) = self.live.get_value() {
            live.stop();
        }
    }

    /// Nothing more arrives: a playout plays out what is left (R9); anything else is whole.
    fn end(&self) {
        match self.live.get_value() {
            Some(live) => live.finish(),
            None => self.settled.set(true),
        }
    }
}

/// Whether blocks of `kind` are drawn as cards from the turn's state (web/src/tool_card.rs), so
/// their text is never played out: a call, its result, an approval request.
fn drawn_by_card(kind: BlockKind) -> bool {
    matches!(
        kind,
        BlockKind::ToolUse | BlockKind::ToolResult | BlockKind::ApprovalRequest
    )
}

/// The files the person's message in `turn` carries.
fn attachments(turn: &Turn) -> Vec<Attachment> {
    turn.messages
        .first()
        .map(|m| m.attachments.clone())
        .unwrap_or_default()
}

/// A block's text as the page lays it out: paragraphs, items and cells apart, no syntax.
fn drawn_text(body: &web_sys::Element) -> String {
    use wasm_bindgen::JsCast;
    body.dyn_ref::<web_sys::HtmlElement>().map_or_else(
        || body.text_content().unwrap_or_default(),
        |b| b.inner_text(),
    )
}

fn body_element() -> web_sys::Element {
    let body = element(&document(), "div");
    body.set_class_name("body");
    // Arabic or Hebrew text runs right to left, as its first strong character says.
    let _ = body.set_attribute("dir", "auto");
    body
}
