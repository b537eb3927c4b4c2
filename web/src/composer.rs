//! The composer: the message box with its `/skill` completion (core's `skills::complete`), the
//! attachments uploaded for the message (chosen with Attach or pasted into the message box), the
//! effort override, and the send button, under the bar that says a message is being edited. Enter
//! sends (Shift+Enter makes a new line), except while an input method is composing a character,
//! whose Enter confirms the character; Esc leaves an edit.

use leptos::html;
use leptos::prelude::*;
use portal_core::effort::Effort;
use portal_core::skills::{CatalogueEntry, complete};
use wasm_bindgen::JsCast;

use crate::attach::{attach, files_of};
use crate::attachment_chip::AttachmentChip;
use crate::edit_bar::{EDIT_BAR, EditBar};
use crate::editing;
use crate::icon::Icon;
use crate::state::portal;
use crate::waiting::Waiting;

/// The composer. `on_send` is called when the person sends the draft.
#[component]
pub fn Composer(
    draft: RwSignal<String>,
    /// The effort this message asks for; `None` keeps the agent's (rule E1).
    effort: RwSignal<Option<Effort>>,
    /// The agent's own effort, which `None` keeps.
    default_effort: Signal<Option<Effort>>,
    /// The skills the person can select, for the completion.
    skills: Signal<Vec<CatalogueEntry>>,
    running: Signal<bool>,
    on_send: Callback<()>,
) -> impl IntoView {
    let textarea = NodeRef::<html::Textarea>::new();
    let portal = portal();
    let attachments = portal.attachments;
    let on_files = move |ev: leptos::ev::Event| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        attach(portal, files_of(input.files()));
        // The same file can be chosen again after it was removed.
        input.set_value("");
    };
    // Files pasted go the Attach button's way; pasted text is left to the message box.
    let on_paste = move |ev: web_sys::ClipboardEvent| {
        let files = files_of(ev.clipboard_data().and_then(|data| data.files()));
        if !files.is_empty() {
            ev.prevent_default();
            attach(portal, files);
        }
    };
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
        // The Enter that confirms an input method's candidate (Japanese, Chinese, Korean) is the
        // input method's; Chromium reports some of them only by key code 229.
        if ev.is_composing() || ev.key_code() == 229 {
            return;
        }
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
            "Escape" if portal.editing.with_untracked(Option::is_some) => {
                ev.prevent_default();
                editing::end(portal);
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
                            <ul class="skill-completion" id="skill-completion" role="listbox" aria-label="Commands and skills">
                                {options}
                            </ul>
                        }
                    })
            }}
            <EditBar />
            {move || {
                let chips = attachments.get();
                (!chips.is_empty())
                    .then(|| {
                        view! {
                            <ul class="attachment-chips" aria-label="Attachments">
                                {chips
                                    .into_iter()
                                    .map(|chip| view! { <AttachmentChip chip /> })
                                    .collect_view()}
                            </ul>
                        }
                    })
            }}
            <textarea
                node_ref=textarea
                aria-label="Message"
                autocapitalize="sentences"
                aria-autocomplete="list"
                aria-controls=move || completion.with(Option::is_some).then_some("skill-completion")
                aria-describedby=move || portal.editing.with(Option::is_some).then_some(EDIT_BAR)
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
                on:paste=on_paste
            ></textarea>
            <Waiting />
            <label class="attach" title="Attach files">
                <Icon path="M13.5 6.5l-5.8 5.8a1.6 1.6 0 0 0 2.3 2.3l6-6a3.2 3.2 0 0 0-4.5-4.5l-6.2 6.2a4.8 4.8 0 0 0 6.8 6.8l5.4-5.4" />
                <span class="attach-label">"Attach"</span>
                <input type="file" multiple data-testid="attach" on:change=on_files />
            </label>
            <select
                class="effort"
                title="How hard the model thinks before it answers, for this message: low answers soonest, high thinks longest. The agent's own level is the first."
                aria-label="Effort"
                on:change=move |ev| effort.set(parse_effort(&event_target_value(&ev)))
            >
                <option value="" selected=move || effort.get().is_none()>
                    {move || match default_effort.get() {
                        Some(level) => format!("Agent's effort ({})", level.as_str()),
                        None => "Agent's effort".to_string(),
                    }}
                </option>
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
