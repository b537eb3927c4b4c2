//! The conversation view and the composer.

use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use portal_core::display::{Drawn, drawn_as, has_answer};
use portal_core::stream::TurnEvent;
use portal_core::{Block, BlockKind, Role, Transcript, TurnStatus};

use crate::live::{LiveText, draw_plain};
use crate::{api, stream};

/// One turn as drawn: the user's message and the assistant's blocks.
#[derive(Debug, Clone, Copy)]
struct TurnView {
    index: u32,
    user_text: RwSignal<String>,
    blocks: RwSignal<Vec<BlockView>>,
    status: RwSignal<TurnStatus>,
    /// The answer's text once it has settled, for the screen reader's single announcement (R14).
    announced: RwSignal<Option<String>>,
}

/// One block of the assistant's output, drawn into `body`, an element the view mounts.
#[derive(Debug, Clone, Copy)]
struct BlockView {
    kind: BlockKind,
    body: StoredValue<web_sys::Element, LocalStorage>,
    live: StoredValue<Option<LiveText>, LocalStorage>,
    settled: RwSignal<bool>,
}

impl TurnView {
    fn new(index: u32, user_text: String, status: TurnStatus) -> Self {
        TurnView {
            index,
            user_text: RwSignal::new(user_text),
            blocks: RwSignal::new(Vec::new()),
            status: RwSignal::new(status),
            announced: RwSignal::new(None),
        }
    }

    fn settled(&self) -> bool {
        !self.status.get().is_open() && self.blocks.get().iter().all(|b| b.settled.get())
    }
}

impl BlockView {
    /// A block drawn as settled plain text, as a reloaded conversation shows it (R10).
    fn settled(kind: BlockKind, text: &str) -> Self {
        let body = body_element();
        draw_plain(&body, text);
        BlockView {
            kind,
            body: StoredValue::new_local(body),
            live: StoredValue::new_local(None),
            settled: RwSignal::new(true),
        }
    }

    /// A block whose text streams in and plays out.
    fn live(kind: BlockKind, turn: TurnView) -> Self {
        let body = body_element();
        let settled = RwSignal::new(false);
        let live = LiveText::new(body.clone(), move |text| {
            settled.set(true);
            if kind == BlockKind::Text {
                turn.announced.set(Some(text));
            }
        });
        BlockView {
            kind,
            body: StoredValue::new_local(body),
            live: StoredValue::new_local(Some(live)),
            settled,
        }
    }
}

fn body_element() -> web_sys::Element {
    let body = document()
        .create_element("div")
        .expect("creating a div succeeds");
    body.set_class_name("body");
    body
}

fn document() -> web_sys::Document {
    web_sys::window()
        .and_then(|w| w.document())
        .expect("the portal runs in a page")
}

#[component]
pub fn App() -> impl IntoView {
    let info = LocalResource::new(api::info);
    let conversation = RwSignal::new(None::<String>);
    let turns = RwSignal::new(Vec::<TurnView>::new());
    let draft = RwSignal::new(String::new());
    let problem = RwSignal::new(None::<String>);
    let running = move || {
        turns
            .read()
            .last()
            .is_some_and(|t| t.status.get().is_open())
    };

    if let Some(id) = conversation_in_url() {
        conversation.set(Some(id.clone()));
        spawn_local(async move {
            match api::transcript(&id).await {
                Ok(transcript) => turns.set(settled_turns(&transcript)),
                Err(error) => problem.set(Some(error)),
            }
        });
    }

    let send = move || {
        let text = draft.get_untracked().trim().to_string();
        if text.is_empty() || running() {
            return;
        }
        draft.set(String::new());
        problem.set(None);
        spawn_local(async move {
            if let Err(error) = send_turn(conversation, turns, text).await {
                problem.set(Some(error));
            }
        });
    };

    view! {
        <main class="portal">
            <header class="portal-header">
                <h1>"Portal"</h1>
                {move || {
                    info.get()
                        .and_then(|i| i.ok())
                        .map(|i| {
                            view! {
                                <span class="model-label" class:demo=i.demo data-testid="model-label">
                                    {if i.demo { format!("{} · demo, offline", i.model) } else { i.model }}
                                </span>
                            }
                        })
                }}
            </header>
            <section class="conversation" aria-label="Conversation">
                <For each=move || turns.get() key=|turn| turn.index let(turn)>
                    <Turn turn=turn />
                </For>
            </section>
            {move || problem.get().map(|p| view! { <p class="problem" role="alert">{p}</p> })}
            <form
                class="composer"
                on:submit=move |ev| {
                    ev.prevent_default();
                    send();
                }
            >
                <textarea
                    aria-label="Message"
                    placeholder="Write a message"
                    prop:value=move || draft.get()
                    on:input=move |ev| draft.set(event_target_value(&ev))
                    on:keydown=move |ev: web_sys::KeyboardEvent| {
                        if ev.key() == "Enter" && !ev.shift_key() {
                            ev.prevent_default();
                            send();
                        }
                    }
                ></textarea>
                <button type="submit" disabled=running>
                    "Send"
                </button>
            </form>
        </main>
    }
}

#[component]
fn Turn(turn: TurnView) -> impl IntoView {
    let status = move || status_name(turn.status.get());
    let kinds = move || turn.blocks.get().iter().map(|b| b.kind).collect::<Vec<_>>();
    view! {
        <article
            class="turn"
            class:has-answer=move || has_answer(&kinds())
            data-turn=turn.index
            data-turn-status=status
            data-settled=move || turn.settled().to_string()
        >
            <div class="message user">
                <p>{move || turn.user_text.get()}</p>
            </div>
            <div class="message assistant" aria-busy=move || (!turn.settled()).to_string()>
                <For
                    each=move || numbered(turn.blocks.get())
                    key=|(position, _)| *position
                    let(entry)
                >
                    <BlockSlot block=entry.1 drawn=Signal::derive(move || drawn_as(&kinds()).get(entry.0).copied()) />
                </For>
            </div>
            <div class="announce" aria-live="polite">
                {move || turn.announced.get()}
            </div>
        </article>
    }
}

#[component]
fn BlockSlot(block: BlockView, drawn: Signal<Option<Drawn>>) -> impl IntoView {
    let slot = NodeRef::<html::Div>::new();
    Effect::new(move || {
        if let Some(slot) = slot.get() {
            block.body.with_value(|body| {
                let _ = slot.append_child(body);
            });
        }
    });
    let class = move || {
        let role = match drawn.get() {
            Some(Drawn::Answer) => "text answer",
            Some(Drawn::Narration) => "text narration",
            Some(Drawn::Thinking) => "thinking",
            _ => block.kind.as_str(),
        };
        let live = if block.settled.get() { "" } else { " live" };
        format!("block {role}{live}")
    };
    view! { <div class=class node_ref=slot aria-hidden=move || (!block.settled.get()).then_some("true")></div> }
}

fn status_name(status: TurnStatus) -> &'static str {
    match status {
        TurnStatus::Running => "running",
        TurnStatus::Paused => "paused",
        TurnStatus::Completed => "completed",
        TurnStatus::CutOff => "cut_off",
        TurnStatus::Failed => "failed",
    }
}

fn numbered(blocks: Vec<BlockView>) -> Vec<(usize, BlockView)> {
    blocks.into_iter().enumerate().collect()
}

/// The conversation id in the page's address (`#c1`), so a reload reopens the conversation.
fn conversation_in_url() -> Option<String> {
    let hash = web_sys::window()?.location().hash().ok()?;
    let id = hash.trim_start_matches('#');
    (!id.is_empty()).then(|| id.to_string())
}

/// A stored conversation drawn as settled plain text: no playout (R10).
fn settled_turns(transcript: &Transcript) -> Vec<TurnView> {
    transcript
        .turns
        .iter()
        .map(|turn| {
            let user_text = turn
                .messages
                .first()
                .and_then(|m| m.blocks.first())
                .map(|b| match b {
                    Block::Text { text } => text.clone(),
                    _ => String::new(),
                })
                .unwrap_or_default();
            let view = TurnView::new(turn.index, user_text, turn.status);
            let blocks = turn
                .messages
                .iter()
                .filter(|m| m.role == Role::Assistant)
                .flat_map(|m| &m.blocks)
                .filter_map(|block| match block {
                    Block::Text { text } => Some(BlockView::settled(BlockKind::Text, text)),
                    Block::Thinking { text } => Some(BlockView::settled(BlockKind::Thinking, text)),
                    _ => None,
                })
                .collect();
            view.blocks.set(blocks);
            view
        })
        .collect()
}

async fn send_turn(
    conversation: RwSignal<Option<String>>,
    turns: RwSignal<Vec<TurnView>>,
    text: String,
) -> Result<(), String> {
    let id = match conversation.get_untracked() {
        Some(id) => id,
        None => {
            let id = api::create_conversation().await?;
            if let Some(window) = web_sys::window() {
                let _ = window.location().set_hash(&id);
            }
            conversation.set(Some(id.clone()));
            id
        }
    };
    let index = api::send_message(&id, &text).await?;
    let turn = TurnView::new(index, text, TurnStatus::Running);
    turns.update(|t| t.push(turn));
    stream::follow(&id, index, move |event| apply(turn, event))
}

fn apply(turn: TurnView, event: TurnEvent) {
    let live_of = |block: usize| {
        turn.blocks
            .read_untracked()
            .get(block)
            .and_then(|b| b.live.get_value())
    };
    match event {
        TurnEvent::BlockStart { kind, .. } => {
            let view = match kind {
                BlockKind::Text | BlockKind::Thinking => BlockView::live(kind, turn),
                other => BlockView::settled(other, ""),
            };
            turn.blocks.update(|b| b.push(view));
        }
        TurnEvent::Delta { block, text, .. } => {
            if let Some(live) = live_of(block) {
                live.push(&text);
            }
        }
        TurnEvent::BlockEnd { block, .. } => {
            if let Some(live) = live_of(block) {
                live.finish();
            }
        }
        TurnEvent::TurnEnd { status } => {
            for block in turn.blocks.get_untracked() {
                if let Some(live) = block.live.get_value() {
                    live.finish();
                }
            }
            turn.status.set(status);
        }
        TurnEvent::MessageStart { .. } | TurnEvent::Compacted { .. } => {}
    }
}
