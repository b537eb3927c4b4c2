//! What a request carries, checked before anything acts on it: turn numbers from the path, the
//! lengths of texts and the attachment list of a message. Each refusal names what was wrong, the
//! limit and its value, and what to do.

use std::collections::HashSet;

use axum::extract::{FromRequestParts, Path};
use axum::http::StatusCode;
use axum::http::request::Parts;

use portal_attachments::is_attachment_id;

use super::ApiError;

/// A conversation id and a turn number from a `…/{id}/turns/{turn}/…` path. The number is a turn
/// when it is a whole number from 1 to 4,294,967,295; anything else is a turn no conversation
/// has (404), so no arithmetic ever sees 0 or a number past `u32`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TurnPath {
    pub id: String,
    pub turn: u32,
}

impl<S: Send + Sync> FromRequestParts<S> for TurnPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path((id, turn)) = Path::<(String, String)>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError(e.status(), e.body_text()))?;
        let turn = turn_number(&turn).ok_or_else(|| {
            ApiError(
                StatusCode::NOT_FOUND,
                format!(
                    "conversation `{id}` has no turn `{turn}`; turns are numbered from 1, as \
                     POST …/messages answered"
                ),
            )
        })?;
        Ok(TurnPath { id, turn })
    }
}

/// `text` as a turn number: 1 to `u32::MAX`, digits only.
fn turn_number(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u32>().ok().filter(|&turn| turn >= 1)
}

/// Refuses `text` (`what`: "message", "answer") when it has more than `limit` characters
/// (Unicode scalar values).
pub(super) fn text_within(
    what: &str,
    text: &str,
    limit: usize,
    advice: &str,
) -> Result<(), ApiError> {
    // Never more characters than bytes: most texts are decided without counting.
    if text.len() <= limit {
        return Ok(());
    }
    let chars = text.chars().count();
    if chars <= limit {
        return Ok(());
    }
    Err(ApiError(
        StatusCode::UNPROCESSABLE_ENTITY,
        format!("the {what} is {chars} characters long, past the limit of {limit}; {advice}"),
    ))
}

/// Refuses a message's attachment list when it names more than `limit` attachments, names one
/// twice (**decision:** refused rather than counted once, so a client that repeats an id hears
/// of it), or holds something that is not an attachment id. Checked before any attachment is
/// looked up.
pub(super) fn attachment_list(ids: &[String], limit: usize) -> Result<(), ApiError> {
    let refuse = |message: String| Err(ApiError(StatusCode::UNPROCESSABLE_ENTITY, message));
    if ids.len() > limit {
        return refuse(format!(
            "the message lists {} attachments, more than the {limit} a message may carry; send \
             them over several messages",
            ids.len()
        ));
    }
    let mut seen = HashSet::with_capacity(ids.len());
    for id in ids {
        if !is_attachment_id(id) {
            let shown: String = id.chars().take(40).collect();
            return refuse(format!(
                "`{shown}` is not an attachment id; list the ids POST /api/attachments answered"
            ));
        }
        if !seen.insert(id.as_str()) {
            return refuse(format!(
                "the message lists attachment `{id}` more than once; list each attachment once"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "att_0123456789abcdef0123456789abcdef";

    #[test]
    fn turn_numbers_are_whole_numbers_from_one_within_u32() {
        assert_eq!(turn_number("1"), Some(1));
        assert_eq!(turn_number("4294967295"), Some(u32::MAX));
        for bad in [
            "0",
            "00",
            "4294967296",
            "99999999999999999999999",
            "-1",
            "+1",
            "1e3",
            "",
        ] {
            assert_eq!(turn_number(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_text_over_its_limit_is_refused_with_the_limit_named() {
        assert!(text_within("answer", "héllo", 5, "shorten it").is_ok());
        let ApiError(status, message) =
            text_within("answer", "héllo!", 5, "shorten it").expect_err("six characters");
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            message,
            "the answer is 6 characters long, past the limit of 5; shorten it"
        );
    }

    #[test]
    fn an_attachment_list_is_refused_when_too_long_repeated_or_not_of_ids() {
        let ids = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(attachment_list(&ids(&[ID]), 1).is_ok());
        let too_many = attachment_list(&ids(&[ID, ID, ID]), 2).expect_err("three");
        assert!(
            too_many.1.contains("3 attachments, more than the 2"),
            "{}",
            too_many.1
        );
        let twice = attachment_list(&ids(&[ID, ID]), 20).expect_err("twice");
        assert!(twice.1.contains("more than once"), "{}", twice.1);
        let odd = attachment_list(&ids(&["../etc"]), 20).expect_err("not an id");
        assert!(odd.1.contains("is not an attachment id"), "{}", odd.1);
    }
}
