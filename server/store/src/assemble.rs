//! What both databases share once rows are read: assembling a transcript from its rows, the
//! conversation list's pages and summaries, and the checks made before anything is written.

use portal_core::attachment::{Attachment, ReadingStatus};
use portal_core::title::title_from_message;
use portal_core::{Block, Message, Role, TraceEntry, Transcript, Turn, TurnKind};

use super::codec::{append_text, parse_json, parse_name, parse_status};
use super::{
    ConversationId, ConversationPage, ConversationQuery, ConversationSummary, ListCursor, Result,
    StorageError,
};

/// Which turns of a conversation to load: every turn from `from` on, and turn `also` when it lies
/// before them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turns {
    pub from: u32,
    pub also: Option<u32>,
}

impl Turns {
    /// The whole conversation.
    pub const ALL: Turns = Turns {
        from: 1,
        also: None,
    };

    /// The latest `past_turns + 1` turns of a conversation whose latest turn is `latest`, and the
    /// turn of its newest compaction (rule M1).
    pub fn recent(latest: Option<u32>, newest_compaction: Option<u32>, past_turns: usize) -> Self {
        let past = u32::try_from(past_turns).unwrap_or(u32::MAX);
        Turns {
            from: latest.unwrap_or(0).saturating_sub(past).max(1),
            also: newest_compaction,
        }
    }
}

/// A turns row: (turn, kind, status, effort, context tokens).
pub type TurnRow = (u32, String, String, Option<String>, Option<u64>);

/// The rows of a range of turns, each list in the order of its primary key.
#[derive(Debug, Default)]
pub struct TurnRows {
    pub turns: Vec<TurnRow>,
    /// (turn, entry as JSON)
    pub trace: Vec<(u32, String)>,
    /// (turn, message, role)
    pub messages: Vec<(u32, usize, String)>,
    /// (turn, message, block, body as JSON)
    pub blocks: Vec<(u32, usize, usize, String)>,
    /// (turn, message, block, streamed text), oldest first within a block.
    pub chunks: Vec<(u32, usize, usize, String)>,
    /// (turn, message, attachment metadata as JSON), in the message's order.
    pub attachments: Vec<(u32, usize, String)>,
}

/// The transcript `turns` selects, reading each range of turns with `range(from, to)`.
pub fn transcript(
    turns: Turns,
    mut range: impl FnMut(u32, u32) -> Result<TurnRows>,
) -> Result<Transcript> {
    let mut transcript = match turns.also.filter(|&also| also < turns.from) {
        Some(also) => assemble(also, range(also, also)?)?,
        None => Transcript::new(),
    };
    let from = assemble(turns.from, range(turns.from, u32::MAX)?)?;
    transcript.turns.extend(from.turns);
    Ok(transcript)
}

/// The turns from `from` on that `rows` hold. Messages without blocks are left out: only a
/// turn's last message can be one (see `Storage::append_message`), so no position shifts.
fn assemble(from: u32, rows: TurnRows) -> Result<Transcript> {
    let mut transcript = Transcript::new();
    for (expected, (index, kind, status, effort, context_tokens)) in (from..).zip(rows.turns) {
        if index != expected {
            return Err(gap("turn"));
        }
        transcript.turns.push(Turn {
            index,
            kind: parse_name::<TurnKind>("turn kind", &kind)?,
            status: parse_status(&status)?,
            effort: effort
                .map(|effort| parse_name("effort", &effort))
                .transpose()?,
            context_tokens,
            trace: Vec::new(),
            messages: Vec::new(),
        });
    }
    for (turn, entry) in rows.trace {
        let entry: TraceEntry = parse_json("trace entry", &entry)?;
        turn_at(&mut transcript, turn)?.trace.push(entry);
    }
    for (turn, message, role) in rows.messages {
        let messages = &mut turn_at(&mut transcript, turn)?.messages;
        if message != messages.len() {
            return Err(gap("message"));
        }
        messages.push(Message::new(parse_name::<Role>("role", &role)?, Vec::new()));
    }
    for (turn, message, block, body) in rows.blocks {
        let blocks = &mut message_at(&mut transcript, turn, message)?.blocks;
        if block != blocks.len() {
            return Err(gap("block"));
        }
        blocks.push(parse_json("block", &body)?);
    }
    for (turn, message, block, text) in rows.chunks {
        let content = message_at(&mut transcript, turn, message)?
            .blocks
            .get_mut(block)
            .ok_or_else(|| gap("block"))?;
        stream_into(content, &text)?;
    }
    for (turn, message, metadata) in rows.attachments {
        let attachment: Attachment = parse_json("attachment", &metadata)?;
        message_at(&mut transcript, turn, message)?
            .attachments
            .push(attachment);
    }
    for turn in &mut transcript.turns {
        turn.messages.retain(|message| !message.blocks.is_empty());
    }
    Ok(transcript)
}

/// Gives a text document stored without its text ([`super::Storage::put_attachment`]) its text,
/// read from its bytes, which `bytes` loads by the attachment's id (rule A2); a document stored
/// with its text, and any other attachment, is left as it is.
pub fn text_from_bytes(
    attachment: &mut Attachment,
    bytes: impl FnOnce(&str) -> Result<Vec<u8>>,
) -> Result<()> {
    if let Attachment::Document(document) = attachment
        && document.is_text_file()
        && document.status == ReadingStatus::Finished
        && document.text.is_none()
    {
        document.text = portal_core::attachment::text_from_bytes(bytes(&document.id)?);
    }
    Ok(())
}

/// [`text_from_bytes`] for every attachment of `transcript`'s messages.
pub fn texts_from_bytes(
    transcript: &mut Transcript,
    mut bytes: impl FnMut(&str) -> Result<Vec<u8>>,
) -> Result<()> {
    let attachments = transcript
        .turns
        .iter_mut()
        .flat_map(|turn| &mut turn.messages)
        .flat_map(|message| &mut message.attachments);
    for attachment in attachments {
        text_from_bytes(attachment, &mut bytes)?;
    }
    Ok(())
}

/// One turn's streamed text not yet folded into its blocks, joined per block: `chunks` are
/// ((message, block), text) in block order, oldest first within a block.
pub fn join_chunks(
    chunks: impl IntoIterator<Item = ((usize, usize), String)>,
) -> Vec<((usize, usize), String)> {
    let mut joined: Vec<((usize, usize), String)> = Vec::new();
    for (key, text) in chunks {
        match joined.last_mut() {
            Some((last, whole)) if *last == key => whole.push_str(&text),
            _ => joined.push((key, text)),
        }
    }
    joined
}

/// A stored block's body with `text` streamed into it, as JSON: how a turn that stopped
/// streaming keeps its text in its blocks.
pub fn folded(body: &str, text: &str) -> Result<String> {
    let mut content: Block = parse_json("block", body)?;
    stream_into(&mut content, text)?;
    super::codec::to_json("block", &content)
}

/// Adds streamed text to a block that takes it.
fn stream_into(block: &mut Block, text: &str) -> Result<()> {
    if append_text(block, text) {
        Ok(())
    } else {
        Err(StorageError::Unreadable {
            what: "streamed text",
            detail: format!("it belongs to a {} block", block.kind()),
        })
    }
}

fn turn_at(transcript: &mut Transcript, turn: u32) -> Result<&mut Turn> {
    transcript.turn_mut(turn).ok_or_else(|| gap("turn"))
}

fn message_at(transcript: &mut Transcript, turn: u32, message: usize) -> Result<&mut Message> {
    turn_at(transcript, turn)?
        .messages
        .get_mut(message)
        .ok_or_else(|| gap("message"))
}

fn gap(what: &'static str) -> StorageError {
    StorageError::Unreadable {
        what,
        detail: "positions are not numbered 0, 1, 2, … (turns 1, 2, 3, …) in order".into(),
    }
}

/// A conversation list row: (id, title, created at, last activity, latest turn's status,
/// project, pinned).
pub type SummaryRow = (
    String,
    String,
    i64,
    i64,
    Option<String>,
    Option<String>,
    bool,
);

pub fn summary(
    (id, title, created_at_ms, last_activity_ms, status, project, pinned): SummaryRow,
) -> Result<ConversationSummary> {
    Ok(ConversationSummary {
        id: ConversationId::new(id),
        title,
        created_at_ms,
        last_activity_ms,
        status: status.as_deref().map(parse_status).transpose()?,
        project,
        pinned,
    })
}

/// A page of the conversation list from up to `query.limit + 1` rows: the one past the limit
/// only tells that a next page exists.
pub fn page(rows: Vec<SummaryRow>, query: &ConversationQuery) -> Result<ConversationPage> {
    let mut conversations = rows.into_iter().map(summary).collect::<Result<Vec<_>>>()?;
    let next = if conversations.len() > query.limit as usize {
        conversations.truncate(query.limit as usize);
        conversations.last().map(|last| ListCursor {
            pinned: last.pinned,
            last_activity_ms: last.last_activity_ms,
            id: last.id.clone(),
        })
    } else {
        None
    };
    Ok(ConversationPage {
        conversations,
        next,
    })
}

/// The title a conversation gets from `message`, its newest user message, when it has none yet
/// (rule of [`title_from_message`]); empty when the message gives none.
pub fn title_of(message: &Message) -> String {
    let text: Vec<&str> = message
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    title_from_message(&text.join(" "))
}

/// The metadata a document left `reading` by a stopped process keeps: the same, `failed`.
/// `None` for anything but a document.
pub fn reading_failed(metadata: &str) -> Result<Option<String>> {
    let Attachment::Document(mut document) = parse_json("attachment", metadata)? else {
        return Ok(None);
    };
    document.status = ReadingStatus::Failed;
    super::codec::to_json("attachment", &Attachment::Document(document)).map(Some)
}

/// Which stored kind name an attachment kind read back from the database is, or why it is
/// unreadable.
pub fn stored_kind(kind: &str) -> Result<&'static str> {
    match kind {
        "document" => Ok("document"),
        "picture" => Ok("picture"),
        other => Err(StorageError::Unreadable {
            what: "attachment kind",
            detail: format!("`{other}` is neither a document nor a picture"),
        }),
    }
}

pub fn not_found(conversation: &ConversationId) -> StorageError {
    StorageError::ConversationNotFound {
        conversation: conversation.clone(),
    }
}
