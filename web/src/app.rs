//! The conversation view and the composer.

use leptos::prelude::*;
use leptos::task::spawn_local;
use portal_core::stream::TurnEvent;
use portal_core::{BlockKind, TurnStatus};

use crate::{api, stream};

/// One turn as drawn: the user's message and the assistant's blocks.
#[derive(Debug, Clone, Copy)]
struct TurnView {
    index: u32,
    user_text: RwSignal<String>,
    blocks: RwSignal<Vec<BlockView>>,
    status: RwSignal<TurnStatus>,
}

/// One block of the assistant's message.
#[derive(Debug, Clone, Copy)]
struct BlockView {
    kind: BlockKind,
    text: RwSignal<String>,
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
            .is_some_and(|t| t.status.get() == TurnStatus::Running)
    };

    let send = move || {
        let text = draft.get_untracked().trim().to_string();
        if text.is_empty() || running() {
            return;
        }
        draft.set(String::new());
        problem.set(None);
        spawn_local(async move {
            match send_turn(conversation, turns, text).await {
                Ok(()) => {}
                Err(error) => problem.set(Some(error)),
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
    let status = move || match turn.status.get() {
        TurnStatus::Running => "running",
        TurnStatus::Paused => "paused",
        TurnStatus::Completed => "completed",
        TurnStatus::CutOff => "cut_off",
        TurnStatus::Failed => "failed",
    };
    view! {
        <article class="turn" data-turn=turn.index data-turn-status=status>
            <div class="message user">
                <p>{move || turn.user_text.get()}</p>
            </div>
            <div class="message assistant">
                <For each=move || numbered(turn.blocks.get()) key=|(position, _)| *position let(entry)>
                    <div class=format!("block {}", entry.1.kind.as_str())>
                        {move || entry.1.text.get()}
                    </div>
                </For>
            </div>
        </article>
    }
}

fn numbered(blocks: Vec<BlockView>) -> Vec<(usize, BlockView)> {
    blocks.into_iter().enumerate().collect()
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
            conversation.set(Some(id.clone()));
            id
        }
    };
    let index = api::send_message(&id, &text).await?;
    let turn = TurnView {
        index,
        user_text: RwSignal::new(text),
        blocks: RwSignal::new(Vec::new()),
        status: RwSignal::new(TurnStatus::Running),
    };
    turns.update(|t| t.push(turn));
    stream::follow(&id, index, move |event| apply(turn, event))
}

fn apply(turn: TurnView, event: TurnEvent) {
    match event {
        TurnEvent::BlockStart { kind, .. } => turn.blocks.update(|b| {
            b.push(BlockView {
                kind,
                text: RwSignal::new(String::new()),
            })
        }),
        TurnEvent::Delta { block, text, .. } => {
            if let Some(view) = turn.blocks.read_untracked().get(block) {
                view.text.update(|t| t.push_str(&text));
            }
        }
        TurnEvent::TurnEnd { status } => turn.status.set(status),
        TurnEvent::MessageStart { .. }
        | TurnEvent::BlockEnd { .. }
        | TurnEvent::Compacted { .. } => {}
    }
}
