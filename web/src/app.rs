//! The conversation view and the composer.

use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use portal_core::compaction::{
    CompactionConfig, Divider, compact_pill, composer_refusal, context_in_use, context_meter,
    divider,
};
use portal_core::display::{Drawn, drawn_as, has_answer};
use portal_core::effort::{Effort, winning_effort};
use portal_core::stream::TurnEvent;
use portal_core::tokens::EstimateCounter;
use portal_core::{Block, BlockKind, Role, Transcript, TurnStatus};

use crate::compaction::{CompactPill, Meter, Summarised, Summarising, now_ms};
use crate::composer::{Chip, Composer};
use crate::live::{LiveText, draw_plain};
use crate::{api, stream};

/// One turn as drawn: the user's message and the assistant's blocks.
#[derive(Debug, Clone, Copy)]
struct TurnView {
    index: u32,
    user_text: RwSignal<String>,
    /// The names of the files the user's message carries.
    attachments: StoredValue<Vec<String>>,
    /// The effort the turn runs with (rule E2), once known.
    effort: RwSignal<Option<Effort>>,
    blocks: RwSignal<Vec<BlockView>>,
    status: RwSignal<TurnStatus>,
    /// Whether the turn streamed in this page, so that the screen reader hears its answer once
    /// it settles (R14); a reloaded turn is not announced.
    announces: bool,
    /// Where each drawn block sits in the turn's messages, as the stream numbers them.
    positions: StoredValue<Vec<(usize, usize)>>,
    /// The turn's messages that are the user's (a clarification's answer), not drawn as blocks.
    user_messages: StoredValue<Vec<usize>>,
    /// The id of the last event read, to follow the turn again once it resumes.
    seen: StoredValue<usize>,
}

/// One block of the assistant's output, drawn into `body`, an element the view mounts.
#[derive(Debug, Clone, Copy)]
struct BlockView {
    kind: BlockKind,
    body: StoredValue<web_sys::Element, LocalStorage>,
    live: StoredValue<Option<LiveText>, LocalStorage>,
    settled: RwSignal<bool>,
    /// A streamed block's text once it has settled.
    text: RwSignal<Option<String>>,
    /// For a compaction: `None` while its summary is written, then the divider (R11, R12).
    divider: RwSignal<Option<Divider>>,
    /// For a compaction: when its summary began, for the clock (R11).
    started_ms: f64,
    /// For a compaction whose summary failed: nothing was committed, so nothing is drawn (C5).
    dropped: RwSignal<bool>,
}

impl TurnView {
    fn new(
        index: u32,
        user_text: String,
        attachments: Vec<String>,
        status: TurnStatus,
        announces: bool,
    ) -> Self {
        TurnView {
            index,
            user_text: RwSignal::new(user_text),
            attachments: StoredValue::new(attachments),
            effort: RwSignal::new(None),
            blocks: RwSignal::new(Vec::new()),
            status: RwSignal::new(status),
            announces,
            positions: StoredValue::new(Vec::new()),
            user_messages: StoredValue::new(Vec::new()),
            seen: StoredValue::new(0),
        }
    }

    /// The drawn block at `message`, `block` of the stream, if it was started.
    fn block_at(&self, message: usize, block: usize) -> Option<BlockView> {
        let at = self
            .positions
            .with_value(|p| p.iter().position(|&m| m == (message, block)))?;
        self.blocks.read_untracked().get(at).copied()
    }

    /// Adds a drawn block for `message`, `block` of the stream.
    fn push(&self, message: usize, block: usize, view: BlockView) {
        self.positions.update_value(|p| p.push((message, block)));
        self.blocks.update(|b| b.push(view));
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
            text: RwSignal::new(None),
            divider: RwSignal::new(None),
            started_ms: 0.0,
            dropped: RwSignal::new(false),
        }
    }

    /// A compaction: written (`Some`) or still being written (`None`).
    fn compaction(divider: Option<Divider>) -> Self {
        let view = BlockView::settled(BlockKind::Compaction, "");
        let writing = divider.is_none();
        view.settled.set(!writing);
        view.divider.set(divider);
        BlockView {
            started_ms: if writing { now_ms() } else { 0.0 },
            ..view
        }
    }

    /// A block whose text streams in and plays out.
    fn live(kind: BlockKind) -> Self {
        let body = body_element();
        let settled = RwSignal::new(false);
        let settled_text = RwSignal::new(None);
        let live = LiveText::new(body.clone(), move |text| {
            settled_text.set(Some(text));
            settled.set(true);
        });
        BlockView {
            kind,
            body: StoredValue::new_local(body),
            live: StoredValue::new_local(Some(live)),
            settled,
            text: settled_text,
            divider: RwSignal::new(None),
            started_ms: 0.0,
            dropped: RwSignal::new(false),
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
    let effort = RwSignal::new(None::<Effort>);
    let skills = LocalResource::new(api::skills);
    let agents = LocalResource::new(api::agents);
    // The agent a new conversation opens with (`None`: the first), or the one a stored
    // conversation talks to.
    let agent = RwSignal::new(None::<String>);
    let attachments = RwSignal::new(Vec::<Chip>::new());
    // Whether a message is on its way to the server, so it is not sent twice.
    let sending = RwSignal::new(false);
    let problem = RwSignal::new(None::<String>);
    let in_use = RwSignal::new(None::<u64>);
    let latest_status = move || turns.read().last().map(|t| t.status.get());
    let running = move || latest_status().is_some_and(|s| s.is_open());
    // The agent as the header shows it: the chosen or stored one, else the organisation's first.
    let shown_agent = move || {
        let agents = agents.get()?.ok()?;
        match agent.get() {
            Some(id) => agents.into_iter().find(|a| a.id == id),
            None => agents.into_iter().next(),
        }
    };
    // The newest divider, as (turn, block): everything above it is dimmed until hovered (R12).
    let newest_divider = Memo::new(move |_| {
        turns.get().iter().rev().find_map(|t| {
            t.blocks
                .get()
                .iter()
                .rposition(|b| b.divider.get().is_some())
                .map(|at| (t.index, at))
        })
    });
    let meter = move || {
        let window = info.get()?.ok()?.context_window?;
        context_meter(in_use.get()?, window, &CompactionConfig::default())
    };

    if let Some(id) = conversation_in_url() {
        conversation.set(Some(id.clone()));
        let asked = id.clone();
        spawn_local(async move {
            match api::conversation_agent(&asked).await {
                Ok(id) => agent.set(Some(id)),
                Err(error) => problem.set(Some(error)),
            }
        });
        spawn_local(async move {
            match api::transcript(&id).await {
                Ok(transcript) => {
                    in_use.set(Some(context_in_use(&transcript, &EstimateCounter)));
                    // Rule E2: a reopened conversation's composer shows the effort it last ran
                    // with, so the next message goes on at that level unless changed.
                    effort.set(transcript.turns.iter().rev().find_map(|t| t.effort));
                    turns.set(settled_turns(&transcript));
                }
                Err(error) => problem.set(Some(error)),
            }
        });
    }

    let send = move || {
        let text = draft.get_untracked().trim().to_string();
        if let Some(refusal) = composer_refusal(&text, latest_status()) {
            problem.set(Some(refusal.to_string()));
            return;
        }
        if text.is_empty() || running() || sending.get_untracked() {
            return;
        }
        let chips = attachments.get_untracked();
        if chips.iter().any(|c| c.uploaded.is_none()) {
            problem.set(Some(
                "an attachment is still uploading; send once its chip shows it is attached"
                    .to_string(),
            ));
            return;
        }
        problem.set(None);
        sending.set(true);
        let message = Outgoing {
            text: text.clone(),
            effort: effort.get_untracked(),
            agent: shown_agent(),
            attachments: chips
                .iter()
                .filter_map(|c| c.uploaded.as_ref())
                .map(|a| (a.id().to_string(), a.filename().to_string()))
                .collect(),
        };
        spawn_local(async move {
            // A refused message keeps its draft and attachments, for the person to change.
            match send_turn(conversation, turns, in_use, message).await {
                Ok(()) => {
                    if draft.get_untracked().trim() == text {
                        draft.set(String::new());
                    }
                    attachments.set(Vec::new());
                }
                Err(error) => problem.set(Some(error)),
            }
            sending.set(false);
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
                {move || {
                    let list = agents.get().and_then(Result::ok).unwrap_or_default();
                    let chosen = shown_agent()?;
                    if conversation.get().is_some() || list.len() < 2 {
                        return Some(
                            view! {
                                <span class="agent-label" data-testid="agent-name">{chosen.name}</span>
                            }
                            .into_any(),
                        );
                    }
                    let options = list
                        .into_iter()
                        .map(|a| {
                            let selected = a.id == chosen.id;
                            view! { <option value=a.id selected=selected>{a.name}</option> }
                        })
                        .collect_view();
                    Some(
                        view! {
                            <select
                                class="agent-picker"
                                aria-label="Agent"
                                data-testid="agent-picker"
                                on:change=move |ev| agent.set(Some(event_target_value(&ev)))
                            >
                                {options}
                            </select>
                        }
                        .into_any(),
                    )
                }}
                {move || meter().map(|meter| view! { <Meter meter /> })}
            </header>
            <section class="conversation" aria-label="Conversation">
                <For each=move || turns.get() key=|turn| turn.index let(turn)>
                    <Turn turn=turn newest_divider=newest_divider.into() conversation in_use problem />
                </For>
            </section>
            {move || problem.get().map(|p| view! { <p class="problem" role="alert">{p}</p> })}
            <Composer
                draft
                effort
                skills=Signal::derive(move || skills.get().and_then(Result::ok).unwrap_or_default())
                attachments
                problem
                running=Signal::derive(move || running() || sending.get())
                on_send=Callback::new(move |()| send())
            />
        </main>
    }
}

#[component]
fn Turn(
    turn: TurnView,
    newest_divider: Signal<Option<(u32, usize)>>,
    conversation: RwSignal<Option<String>>,
    in_use: RwSignal<Option<u64>>,
    problem: RwSignal<Option<String>>,
) -> impl IntoView {
    let status = move || status_name(turn.status.get());
    let kinds = move || turn.blocks.get().iter().map(|b| b.kind).collect::<Vec<_>>();
    // The answer, announced once when the whole turn has settled: until the turn ends, a text
    // block may still turn out to be narration before a tool call (R14).
    let announcement = move || {
        if !turn.announces || !turn.settled() {
            return None;
        }
        let answer: Vec<String> = turn
            .blocks
            .get()
            .iter()
            .zip(drawn_as(&kinds()))
            .filter(|(_, drawn)| *drawn == Drawn::Answer)
            .filter_map(|(block, _)| block.text.get())
            .collect();
        (!answer.is_empty()).then(|| answer.join("\n\n"))
    };
    let pill = move || compact_pill(&turn.user_text.get());
    // A turn above the newest divider is dimmed; in the divider's own turn, what precedes it.
    // The `/compact` pill opening the divider's turn is the command, not conversation: not dimmed.
    let above = move |position: Option<usize>| match newest_divider.get() {
        Some((at, _)) if at > turn.index => true,
        Some((at, block)) if at == turn.index => position.is_some_and(|p| p < block),
        _ => false,
    };
    let user_dimmed = move || match newest_divider.get() {
        Some((at, _)) if at > turn.index => true,
        Some((at, _)) if at == turn.index => pill().is_none(),
        _ => false,
    };
    view! {
        <article
            class="turn"
            class:has-answer=move || has_answer(&kinds())
            data-turn=turn.index
            data-turn-status=status
            data-settled=move || turn.settled().to_string()
        >
            <div class="message user" class:dimmed=user_dimmed class:compact=move || pill().is_some()>
                {move || match pill() {
                    Some(instructions) => view! { <CompactPill instructions /> }.into_any(),
                    None => view! { <p>{turn.user_text.get()}</p> }.into_any(),
                }}
                {turn
                    .attachments
                    .with_value(|names| {
                        (!names.is_empty())
                            .then(|| {
                                let names = names
                                    .iter()
                                    .map(|name| {
                                        view! { <li data-testid="attachment-name">{name.clone()}</li> }
                                    })
                                    .collect_view();
                                view! { <ul class="attachments" aria-label="Attachments">{names}</ul> }
                            })
                    })}
            </div>
            <div class="message assistant" aria-busy=move || (!turn.settled()).to_string()>
                <For
                    each=move || numbered(turn.blocks.get())
                    key=|(position, _)| *position
                    let(entry)
                >
                    <BlockSlot
                        block=entry.1
                        drawn=Signal::derive(move || drawn_as(&kinds()).get(entry.0).copied())
                        dimmed=Signal::derive(move || above(Some(entry.0)))
                    />
                </For>
            </div>
            <p class="turn-note">
                {move || {
                    (turn.status.get() == TurnStatus::CutOff)
                        .then(|| view! { <span class="cut-off" data-testid="cut-off">"Stopped"</span> })
                }}
                {move || {
                    turn.effort
                        .get()
                        .filter(|_| pill().is_none())
                        .map(|e| view! { <span class="effort-label" data-testid="effort">"Effort: " {e.as_str()}</span> })
                }}
            </p>
            <TurnControls turn conversation in_use problem />
            <div class="announce" aria-live="polite">
                {announcement}
            </div>
        </article>
    }
}

/// The buttons of an open turn: stop it while it runs; approve, decline or answer while it is
/// paused. Each resumes following the turn after the last event read.
#[component]
fn TurnControls(
    turn: TurnView,
    conversation: RwSignal<Option<String>>,
    in_use: RwSignal<Option<u64>>,
    problem: RwSignal<Option<String>>,
) -> impl IntoView {
    let reply = RwSignal::new(String::new());
    let act = move |action: Action| {
        let Some(id) = conversation.get_untracked() else {
            return;
        };
        let index = turn.index;
        spawn_local(async move {
            let done = match &action {
                Action::Cancel => api::cancel_turn(&id, index).await,
                Action::Decide(approve) => api::decide(&id, index, *approve).await,
                Action::Answer(text) => api::answer(&id, index, text).await,
            };
            let resumed = match done {
                Ok(()) if action != Action::Cancel => {
                    turn.status.set(TurnStatus::Running);
                    follow_turn(id, turn, in_use)
                }
                Ok(()) => Ok(()),
                Err(error) => Err(error),
            };
            if let Err(error) = resumed {
                problem.set(Some(error));
            }
        });
    };
    move || {
        let status = turn.status.get();
        if !status.is_open() {
            return ().into_any();
        }
        let waiting = (status == TurnStatus::Paused)
            .then(|| waiting_for(&turn))
            .flatten();
        view! {
            <div class="turn-controls">
                {match waiting {
                    Some(BlockKind::ApprovalRequest) => view! {
                        <button type="button" data-testid="approve" on:click=move |_| act(Action::Decide(true))>
                            "Approve"
                        </button>
                        <button type="button" data-testid="decline" on:click=move |_| act(Action::Decide(false))>
                            "Decline"
                        </button>
                    }
                    .into_any(),
                    Some(_) => view! {
                        <form
                            class="answer"
                            on:submit=move |ev| {
                                ev.prevent_default();
                                let text = reply.get_untracked().trim().to_string();
                                if !text.is_empty() {
                                    reply.set(String::new());
                                    act(Action::Answer(text));
                                }
                            }
                        >
                            <input
                                aria-label="Answer"
                                prop:value=move || reply.get()
                                on:input=move |ev| reply.set(event_target_value(&ev))
                            />
                            <button type="submit" data-testid="answer">"Answer"</button>
                        </form>
                    }
                    .into_any(),
                    None => ().into_any(),
                }}
                <button type="button" class="cancel" data-testid="cancel" on:click=move |_| act(Action::Cancel)>
                    "Stop"
                </button>
            </div>
        }
        .into_any()
    }
}

/// What the user did to an open turn.
#[derive(Debug, Clone, PartialEq)]
enum Action {
    Cancel,
    Decide(bool),
    Answer(String),
}

#[component]
fn BlockSlot(
    block: BlockView,
    drawn: Signal<Option<Drawn>>,
    dimmed: Signal<bool>,
) -> impl IntoView {
    if block.kind == BlockKind::Compaction {
        return view! {
            <div class="block compaction" class:dimmed=dimmed>
                {move || match block.divider.get() {
                    _ if block.dropped.get() => ().into_any(),
                    Some(divider) => view! { <Summarised divider /> }.into_any(),
                    None => view! { <Summarising started_ms=block.started_ms /> }.into_any(),
                }}
            </div>
        }
        .into_any();
    }
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
        let dimmed = if dimmed.get() { " dimmed" } else { "" };
        format!("block {role}{live}{dimmed}")
    };
    view! { <div class=class node_ref=slot aria-hidden=move || (!block.settled.get()).then_some("true")></div> }
        .into_any()
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
            let names = turn
                .messages
                .first()
                .map(|m| {
                    m.attachments
                        .iter()
                        .map(|a| a.filename().to_string())
                        .collect()
                })
                .unwrap_or_default();
            let view = TurnView::new(turn.index, user_text, names, turn.status, false);
            view.effort.set(turn.effort);
            for (m, message) in turn.messages.iter().enumerate().skip(1) {
                if message.role == Role::User {
                    view.user_messages.update_value(|u| u.push(m));
                    continue;
                }
                for (b, block) in message.blocks.iter().enumerate() {
                    let drawn = match block {
                        Block::Text { text } => BlockView::settled(BlockKind::Text, text),
                        Block::Thinking { text } => BlockView::settled(BlockKind::Thinking, text),
                        Block::Compaction { .. } => BlockView::compaction(divider(block)),
                        Block::ClarificationRequest { question, .. } => {
                            BlockView::settled(BlockKind::ClarificationRequest, question)
                        }
                        Block::ApprovalRequest { summary, .. } => {
                            BlockView::settled(BlockKind::ApprovalRequest, summary)
                        }
                        other => BlockView::settled(other.kind(), ""),
                    };
                    view.push(m, b, drawn);
                }
            }
            view
        })
        .collect()
}

/// A message on its way: what was typed, the effort asked for, the agent it goes to, and its
/// attachments as (id, name).
struct Outgoing {
    text: String,
    effort: Option<Effort>,
    agent: Option<api::Agent>,
    attachments: Vec<(String, String)>,
}

async fn send_turn(
    conversation: RwSignal<Option<String>>,
    turns: RwSignal<Vec<TurnView>>,
    in_use: RwSignal<Option<u64>>,
    message: Outgoing,
) -> Result<(), String> {
    let id = match conversation.get_untracked() {
        Some(id) => id,
        None => {
            let agent = message.agent.as_ref().map(|a| a.id.as_str());
            let id = api::create_conversation(agent).await?;
            if let Some(window) = web_sys::window() {
                let _ = window.location().set_hash(&id);
            }
            conversation.set(Some(id.clone()));
            id
        }
    };
    let (ids, names): (Vec<String>, Vec<String>) = message.attachments.into_iter().unzip();
    let index = api::send_message(&id, &message.text, message.effort, &ids).await?;
    let turn = TurnView::new(index, message.text, names, TurnStatus::Running, true);
    turn.effort.set(
        message
            .agent
            .map(|a| winning_effort(a.effort, message.effort)),
    );
    turns.update(|t| t.push(turn));
    show_turn(index);
    follow_turn(id, turn, in_use)
}

/// Brings a just-sent turn to the top of the window once it is drawn, so the person sees their
/// message and the reply growing under it, whatever they had scrolled to.
fn show_turn(index: u32) {
    request_animation_frame(move || {
        let turn = web_sys::window().and_then(|w| w.document()).and_then(|d| {
            d.query_selector(&format!("[data-turn=\"{index}\"]"))
                .ok()
                .flatten()
        });
        if let Some(turn) = turn {
            turn.scroll_into_view_with_bool(true);
        }
    });
}

/// Reads the stored conversation again after a turn, for the context meter and the effort the
/// turn recorded (rule E2).
fn refresh_after(id: String, turn: TurnView, in_use: RwSignal<Option<u64>>) {
    spawn_local(async move {
        if let Ok(transcript) = api::transcript(&id).await {
            in_use.set(Some(context_in_use(&transcript, &EstimateCounter)));
            if let Some(stored) = transcript.turns.iter().find(|t| t.index == turn.index) {
                turn.effort.set(stored.effort);
            }
        }
    });
}

fn apply(turn: TurnView, event: TurnEvent) {
    match event {
        TurnEvent::BlockStart {
            message,
            block,
            kind,
            ..
        } => {
            // A resumed turn followed from its start again skips what is drawn already, and the
            // user's answer to a question is not the assistant's block.
            let known = turn.block_at(message, block).is_some()
                || turn.user_messages.with_value(|u| u.contains(&message));
            if known {
                return;
            }
            let view = match kind {
                BlockKind::Text
                | BlockKind::Thinking
                | BlockKind::ClarificationRequest
                | BlockKind::ApprovalRequest => BlockView::live(kind),
                BlockKind::Compaction => BlockView::compaction(None),
                other => BlockView::settled(other, ""),
            };
            turn.push(message, block, view);
        }
        TurnEvent::Delta {
            message,
            block,
            text,
        } => {
            if let Some(live) = turn
                .block_at(message, block)
                .and_then(|b| b.live.get_value())
            {
                live.push(&text);
            }
        }
        TurnEvent::BlockEnd { message, block } => {
            let Some(view) = turn.block_at(message, block) else {
                return;
            };
            if let Some(live) = view.live.get_value() {
                live.finish();
            }
            // A compaction that ends without its summary failed: nothing was committed (C5).
            if view.kind == BlockKind::Compaction && view.divider.get_untracked().is_none() {
                view.dropped.set(true);
                view.settled.set(true);
            }
        }
        TurnEvent::Compacted {
            message,
            block,
            trigger,
            covers,
            summary,
        } => {
            let shown = divider(&Block::Compaction {
                summary,
                trigger,
                covers,
                kept_messages: 0,
            });
            match turn.block_at(message, block) {
                Some(view) => {
                    view.divider.set(shown);
                    view.settled.set(true);
                }
                None => turn.push(message, block, BlockView::compaction(shown)),
            }
        }
        TurnEvent::TurnEnd { status } => {
            for block in turn.blocks.get_untracked() {
                if let Some(live) = block.live.get_value() {
                    live.finish();
                }
                if block.kind == BlockKind::Compaction && block.divider.get_untracked().is_none() {
                    block.dropped.set(true);
                    block.settled.set(true);
                }
            }
            turn.status.set(status);
        }
        TurnEvent::MessageStart { message, role } => {
            if role == Role::User {
                turn.user_messages.update_value(|u| {
                    if !u.contains(&message) {
                        u.push(message)
                    }
                });
            }
        }
    }
}

/// Follows `turn` of conversation `id` after the last event it read, drawing what it streams.
fn follow_turn(id: String, turn: TurnView, in_use: RwSignal<Option<u64>>) -> Result<(), String> {
    let followed = id.clone();
    stream::follow(
        &followed,
        turn.index,
        turn.seen.get_value(),
        move |at, event| {
            let ended = matches!(event, TurnEvent::TurnEnd { .. });
            turn.seen.set_value(at);
            apply(turn, event);
            if ended {
                refresh_after(id.clone(), turn, in_use);
            }
        },
    )
}

/// What a turn waits for while it is paused: the kind of its last request block.
fn waiting_for(turn: &TurnView) -> Option<BlockKind> {
    turn.blocks.get().iter().rev().find_map(|b| {
        matches!(
            b.kind,
            BlockKind::ApprovalRequest | BlockKind::ClarificationRequest
        )
        .then_some(b.kind)
    })
}
