//! `GET /api/usage?by=&user=&since=&until=`: the usage report of the caller's organisation, for
//! its administrators only (docs/usage.md, "Reports").

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use portal_identity::Caller;
use portal_store::usage::{Report, parse_grouping, period};
use portal_store::{UsageGrouping, UsageQuery};

use super::{ApiError, AppState};

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/api/usage", get(report))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportQuery {
    #[serde(default)]
    by: Option<String>,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    since: Option<String>,
    #[serde(default)]
    until: Option<String>,
}

async fn report(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<ReportQuery>, QueryRejection>,
) -> Result<Json<Report>, ApiError> {
    if !caller.admin {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            format!(
                "only an administrator of {} can read its usage; ask one to add role = \"admin\" to your user.toml",
                caller.organisation
            ),
        ));
    }
    let Query(query) = query.map_err(|e| {
        ApiError(
            StatusCode::BAD_REQUEST,
            format!(
                "the query is not a usage report's ({}); send `by`, `user`, `since` and `until` or nothing",
                e.body_text()
            ),
        )
    })?;
    let refused =
        |e: portal_store::usage::ReportError| ApiError(StatusCode::BAD_REQUEST, e.to_string());
    let by = match query.by.as_deref() {
        None => UsageGrouping::Day,
        Some(name) => parse_grouping(name).map_err(refused)?,
    };
    let (since_ms, until_ms) =
        period(query.since.as_deref(), query.until.as_deref()).map_err(refused)?;
    let lines = state
        .turns
        .storage()
        .usage_report(UsageQuery {
            org_id: Some(caller.organisation),
            user_id: query.user,
            since_ms,
            until_ms,
            by,
        })
        .await?;
    Ok(Json(Report::new(by, lines)))
}
