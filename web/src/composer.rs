//! The composer: the message box with its `/skill` completion (core's `skills::complete`), the
//! effort override, and the send button.

use leptos::html;
use leptos::prelude::*;
use portal_core::effort::Effort;
use portal_core::skills::{CatalogueEntry, complete};

/// The composer. `on_send` is called when the person sends the draft.
#[component]
pub fn Composer(
    draft: RwSignal<String>,
    /// The effort this message asks for; `None` keeps the agent's (rule E1).
    effort: RwSignal<Option<Effort>>,
    /// The skills the person can select, for the completion.
    skills: Signal<Vec<CatalogueEntry>>,
    running: Signal<bool>,
    on_send: Callback<()>,
) -> impl IntoView {
    let textarea = NodeRef::<html::Textarea>::new();
    // The cursor as a byte offset into the draft, as core counts.
    let cursor = RwSignal::new(0usize);
    let highlighted = RwSignal::new(0usize);
    let dismissed = RwSignal::new(false);
    let completion = Memo::new(move |_| {
        if dismissed.get() {
            return None;
        }
        skills.with(|skills| draft.with(|d| complete(d, cursor.get().min(d.len()), skills)))
    });
    let read_cursor = move || {
        if let Some(area) = textarea.get_untracked() {
            let value = area.value();
            let units = area.selection_start().ok().flatten().unwrap_or(0) as usize;
            cursor.set(byte_offset(&value, units));
        }
    };
    let accept = move |position: usize| {
        let Some(completion) = completion.get_untracked() else {
            return;
        };
        let Some(skill) = completion.matches.get(position) else {
            return;
        };
        let (text, at) = completion.accept(&draft.get_untracked(), &skill.name);
        let units = utf16_offset(&text, at);
        draft.set(text.clone());
        cursor.set(at);
        highlighted.set(0);
        if let Some(area) = textarea.get_untracked() {
            area.set_value(&text);
            let _ = area.set_selection_range(units, units);
            let _ = area.focus();
        }
    };
    let on_keydown = move |ev: web_sys::KeyboardEvent| {
        let offered = completion.with_untracked(|c| c.as_ref().map_or(0, |c| c.matches.len()));
        match ev.key().as_str() {
            "ArrowDown" | "ArrowUp" if offered > 0 => {
                ev.prevent_default();
                let step = if ev.key() == "ArrowDown" {
                    1
                } else {
                    offered - 1
                };
                highlighted.update(|h| *h = (*h + step) % offered);
            }
            "Enter" | "Tab" if offered > 0 && !ev.shift_key() => {
                ev.prevent_default();
                accept(highlighted.get_untracked().min(offered - 1));
            }
            "Escape" if offered > 0 => {
                ev.prevent_default();
                dismissed.set(true);
            }
            "Enter" if !ev.shift_key() => {
                ev.prevent_default();
                on_send.run(());
            }
            _ => {}
        }
    };

    view! {
        <form
            class="composer"
            on:submit=move |ev| {
                ev.prevent_default();
                on_send.run(());
            }
        >
            {move || {
                completion
                    .get()
                    .map(|c| {
                        let options = c
                            .matches
                            .into_iter()
                            .enumerate()
                            .map(|(position, skill)| {
                                view! {
                                    <li
                                        role="option"
                                        class="skill-option"
                                        aria-selected=move || (highlighted.get() == position).to_string()
                                        on:mousedown=move |ev| {
                                            ev.prevent_default();
                                            accept(position);
                                        }
                                    >
                                        <span class="slug">"/" {skill.name}</span>
                                        <span class="description">{skill.description}</span>
                                    </li>
                                }
                            })
                            .collect_view();
                        view! {
                            <ul class="skill-completion" id="skill-completion" role="listbox" aria-label="Skills">
                                {options}
                            </ul>
                        }
                    })
            }}
            <textarea
                node_ref=textarea
                aria-label="Message"
                aria-autocomplete="list"
                aria-controls="skill-completion"
                aria-expanded=move || completion.with(Option::is_some).to_string()
                placeholder="Write a message, or / for a skill"
                prop:value=move || draft.get()
                on:input=move |ev| {
                    draft.set(event_target_value(&ev));
                    dismissed.set(false);
                    highlighted.set(0);
                    read_cursor();
                }
                on:keyup=move |_| read_cursor()
                on:click=move |_| read_cursor()
                on:keydown=on_keydown
            ></textarea>
            <select
                class="effort"
                aria-label="Effort"
                on:change=move |ev| effort.set(parse_effort(&event_target_value(&ev)))
            >
                <option value="" selected=move || effort.get().is_none()>"Agent's effort"</option>
                {[Effort::Low, Effort::Medium, Effort::High]
                    .into_iter()
                    .map(|level| {
                        view! {
                            <option value=level.as_str() selected=move || effort.get() == Some(level)>
                                {level.as_str()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
            <button type="submit" disabled=running>
                "Send"
            </button>
        </form>
    }
}

fn parse_effort(value: &str) -> Option<Effort> {
    [Effort::Low, Effort::Medium, Effort::High]
        .into_iter()
        .find(|level| level.as_str() == value)
}

/// The byte offset of a position the browser gives in UTF-16 code units.
fn byte_offset(text: &str, units: usize) -> usize {
    let mut counted = 0;
    for (at, c) in text.char_indices() {
        if counted >= units {
            return at;
        }
        counted += c.len_utf16();
    }
    text.len()
}

/// The UTF-16 position the browser takes for a byte offset.
fn utf16_offset(text: &str, at: usize) -> u32 {
    text[..at].encode_utf16().count() as u32
}
