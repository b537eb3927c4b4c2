//! Projects over HTTP (issue 45, docs/projects.md): a person's conversations kept together under
//! instructions of their own, which every turn in them reads as the prompt's layer 3; opened in
//! a project with its default agent, moved in and out, pinned, listed by project; and what a
//! hostile caller tries: another person's project, moving a conversation into someone else's,
//! malformed and huge names and instructions, deleting a project while one of its
//! conversations answers.

use std::time::{Duration, Instant};

use portal_core::TurnStatus;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common;
use crate::identity::{ALICE, BOB, CAROL, Server, start};

/// A project of `token`'s made from `body`; its id.
async fn project(server: &Server, token: &str, body: Value) -> String {
    let (status, made) = server.post("/api/projects", token, body).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made["id"].as_str().expect("id").to_string()
}

/// A conversation of `token`'s opened with `body`; its id.
async fn opened(server: &Server, token: &str, body: Value) -> String {
    let (status, created) = server.post("/api/conversations", token, body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    created["id"].as_str().expect("id").to_string()
}

/// What a local portal (no sign-in) made when `body` was posted to `path`; its id.
async fn made_locally(server: &common::Server, path: &str, body: Value) -> String {
    let (status, made) = server.call(Method::POST, path, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    made["id"].as_str().expect("id").to_string()
}

/// Sends `text` in `token`'s conversation `id` and waits for the turn to end; its number.
async fn answered(server: &Server, token: &str, id: &str, text: &str) -> u32 {
    let (status, sent) = server
        .post(
            &format!("/api/conversations/{id}/messages"),
            token,
            json!({ "text": text }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    let started = Instant::now();
    while server
        .transcript(token, id)
        .await
        .turns
        .iter()
        .any(|t| t.status == TurnStatus::Running)
    {
        assert!(started.elapsed() < Duration::from_secs(60), "the turn ends");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sent["turn"].as_u64().expect("turn") as u32
}

/// The system layers of the first model call of a turn, as the prompt inspector shows them:
/// (number, label, text).
async fn layers(server: &Server, token: &str, id: &str, turn: u32) -> Vec<(u64, String, String)> {
    let (status, call) = server
        .get(
            &format!("/api/conversations/{id}/turns/{turn}/calls/1"),
            token,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{call}");
    call["inspection"]["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|l| {
            (
                l["number"].as_u64().expect("number"),
                l["label"].as_str().expect("label").to_string(),
                l["text"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The ids of `token`'s conversations the list shows with `query`.
async fn listed(server: &Server, token: &str, query: &str) -> Vec<String> {
    let (status, page) = server
        .get(&format!("/api/conversations{query}"), token)
        .await;
    assert_eq!(status, StatusCode::OK, "{query}: {page}");
    page["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .map(|c| c["id"].as_str().expect("id").to_string())
        .collect()
}

// Rule L1 (issue 45): a turn in a conversation of a project reads the project's instructions as
// layer 3, "Project instructions", after the author's; changed instructions reach the next turn,
// and a conversation moved out of the project reads none.
#[tokio::test]
async fn l1_a_turn_in_a_project_reads_its_instructions_as_layer_three() {
    let server = start().await;
    let herons = project(
        &server,
        ALICE,
        json!({
            "name": "Heron survey",
            "instructions": "Give every count per hectare.",
            "agent": "looker",
        }),
    )
    .await;
    // Opened in the project without an agent: the project's default agent.
    let id = opened(&server, ALICE, json!({ "project": herons })).await;
    let (_, agent) = server
        .get(&format!("/api/conversations/{id}/agent"), ALICE)
        .await;
    assert_eq!(agent["agent"], "looker");
    let asked = opened(
        &server,
        ALICE,
        json!({ "project": herons, "agent": "researcher" }),
    )
    .await;
    let (_, agent) = server
        .get(&format!("/api/conversations/{asked}/agent"), ALICE)
        .await;
    assert_eq!(agent["agent"], "researcher", "an agent asked for wins");

    let turn = answered(&server, ALICE, &id, "How many herons nest here?").await;
    let found = layers(&server, ALICE, &id, turn).await;
    assert!(
        found.contains(&(
            3,
            "Project instructions".into(),
            "Give every count per hectare.".into()
        )),
        "{found:?}"
    );
    assert_eq!(found[0].1, "Portal floor");

    let (status, changed) = server
        .call(
            Method::PATCH,
            &format!("/api/projects/{herons}"),
            ALICE,
            Some(json!({ "instructions": "Give every count per square kilometre." })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    let turn = answered(&server, ALICE, &id, "And the egrets?").await;
    let texts: Vec<String> = layers(&server, ALICE, &id, turn)
        .await
        .into_iter()
        .filter(|(number, _, _)| *number == 3)
        .map(|(_, _, text)| text)
        .collect();
    assert_eq!(texts, ["Give every count per square kilometre."]);

    let (status, moved) = server
        .call(
            Method::PATCH,
            &format!("/api/conversations/{id}"),
            ALICE,
            Some(json!({ "project": null })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(moved["project"], Value::Null);
    let turn = answered(&server, ALICE, &id, "And the storks?").await;
    let numbers: Vec<u64> = layers(&server, ALICE, &id, turn)
        .await
        .into_iter()
        .map(|(number, _, _)| number)
        .collect();
    assert!(!numbers.contains(&3), "out of the project: {numbers:?}");
}

// Issue 45: the list keeps to a project (or to none), runs pinned conversations first, and
// searches within a project.
#[tokio::test]
async fn a_project_lists_its_conversations_pinned_first_and_searched_within() {
    let server = start().await;
    let herons = project(&server, ALICE, json!({ "name": "Herons" })).await;
    let first = opened(&server, ALICE, json!({ "project": herons })).await;
    answered(&server, ALICE, &first, "Herons at dawn").await;
    let second = opened(&server, ALICE, json!({ "project": herons })).await;
    answered(&server, ALICE, &second, "Egrets at dusk").await;
    let loose = opened(&server, ALICE, json!({})).await;
    answered(&server, ALICE, &loose, "Herons in town").await;

    assert_eq!(
        listed(&server, ALICE, &format!("?project={herons}")).await,
        [second.clone(), first.clone()]
    );
    assert_eq!(
        listed(&server, ALICE, "?project=none").await,
        std::slice::from_ref(&loose)
    );
    assert_eq!(
        listed(&server, ALICE, &format!("?project={herons}&q=herons")).await,
        std::slice::from_ref(&first),
        "search keeps to the project"
    );

    let (status, pinned) = server
        .call(
            Method::PATCH,
            &format!("/api/conversations/{first}"),
            ALICE,
            Some(json!({ "pinned": true })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{pinned}");
    assert_eq!(
        (pinned["pinned"].clone(), pinned["project"].clone()),
        (json!(true), json!(herons))
    );
    assert_eq!(
        listed(&server, ALICE, "").await,
        [first.clone(), loose.clone(), second.clone()]
    );
    // A page's cursor holds its place across the pinned and the rest.
    let (_, page) = server.get("/api/conversations?limit=1", ALICE).await;
    let next = page["next"].as_str().expect("a next page");
    assert!(next.starts_with('p'), "{next}");
    assert_eq!(
        listed(&server, ALICE, &format!("?limit=2&cursor={next}")).await,
        [loose.clone(), second.clone()]
    );

    // Moved into the project, and renamed and unpinned in the same change.
    let (status, changed) = server
        .call(
            Method::PATCH,
            &format!("/api/conversations/{loose}"),
            ALICE,
            Some(json!({ "project": herons, "title": "Town herons", "pinned": false })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["title"], "Town herons");
    assert_eq!(
        listed(&server, ALICE, &format!("?project={herons}")).await,
        [first, loose, second]
    );
}

// Issue 45: another person's project does not exist for anyone but its owner: reading,
// changing, deleting, listing by it, opening a conversation in it and moving a conversation into
// it are all 404, and nothing changes; nor can anyone move a conversation that is not theirs.
#[tokio::test]
async fn another_persons_project_is_not_found_and_nothing_moves_into_it() {
    let server = start().await;
    let alices = project(
        &server,
        ALICE,
        json!({ "name": "Alice's", "instructions": "Secret plans." }),
    )
    .await;
    let in_alices = opened(&server, ALICE, json!({ "project": alices })).await;
    let bobs = project(&server, BOB, json!({ "name": "Bob's" })).await;
    let bobs_conversation = opened(&server, BOB, json!({})).await;

    for token in [BOB, CAROL] {
        let path = format!("/api/projects/{alices}");
        for (method, body) in [
            (Method::GET, None),
            (Method::PATCH, Some(json!({ "name": "Mine now" }))),
            (Method::DELETE, None),
        ] {
            let path = if method == Method::DELETE {
                format!("{path}?conversations=delete")
            } else {
                path.clone()
            };
            let (status, body) = server.call(method.clone(), &path, token, body).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {body}");
            assert!(
                !body.to_string().contains("Secret plans"),
                "nothing of it is told: {body}"
            );
        }
        let (status, body) = server
            .get(&format!("/api/conversations?project={alices}"), token)
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let (status, body) = server
            .post("/api/conversations", token, json!({ "project": alices }))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let (_, projects) = server.get("/api/projects", token).await;
        assert!(
            !projects.to_string().contains(&alices),
            "{token}: {projects}"
        );
    }
    // Bob moves his conversation into Alice's project: not found, and it stays where it was.
    let (status, body) = server
        .call(
            Method::PATCH,
            &format!("/api/conversations/{bobs_conversation}"),
            BOB,
            Some(json!({ "project": alices, "title": "Moved" })),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (_, page) = server.get("/api/conversations", BOB).await;
    assert_eq!(page["conversations"][0]["project"], Value::Null);
    assert_eq!(
        page["conversations"][0]["title"], "",
        "nothing of the change"
    );
    // Bob moves Alice's conversation into his own project: not found either.
    let (status, body) = server
        .call(
            Method::PATCH,
            &format!("/api/conversations/{in_alices}"),
            BOB,
            Some(json!({ "project": bobs })),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(
        listed(&server, ALICE, &format!("?project={alices}")).await,
        std::slice::from_ref(&in_alices)
    );
    let (status, body) = server.get(&format!("/api/projects/{alices}"), ALICE).await;
    assert_eq!(
        (status, body["name"].as_str()),
        (StatusCode::OK, Some("Alice's"))
    );
    assert_eq!(
        listed(&server, BOB, &format!("?project={bobs}")).await,
        Vec::<String>::new()
    );
}

// Issue 45: names and instructions are checked before anything is kept, each refusal naming the
// limit and what to do; unknown fields, agents and empty changes are refused in words; a person
// has at most 100 projects.
#[tokio::test]
async fn malformed_and_huge_projects_are_refused_in_words() {
    let server = start().await;
    let refused = |body: &Value| body["error"].as_str().expect("an error").to_string();
    for (name, why) in [
        (json!(""), "1 to 80 characters"),
        (json!("   \n\t "), "1 to 80 characters"),
        (json!("\u{202e}\u{7}\u{200f}"), "1 to 80 characters"),
        (json!("h".repeat(81)), "this one has 81"),
        (json!(7), "not a new project"),
        (json!(null), "not a new project"),
    ] {
        let (status, body) = server
            .post("/api/projects", ALICE, json!({ "name": name }))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{name}: {body}");
        assert!(refused(&body).contains(why), "{name}: {body}");
    }
    let (status, body) = server
        .post(
            "/api/projects",
            ALICE,
            json!({ "name": "Herons", "instructions": "é".repeat(20_001) }),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(refused(&body).contains("20001 characters long, past the limit of 20000"));
    for (body, status) in [
        (
            json!({ "name": "Herons", "agent": "nobody" }),
            StatusCode::NOT_FOUND,
        ),
        (
            json!({ "name": "Herons", "agent": "x".repeat(100_000) }),
            StatusCode::NOT_FOUND,
        ),
        (
            json!({ "name": "Herons", "owner": "bob" }),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (json!([1, 2]), StatusCode::UNPROCESSABLE_ENTITY),
    ] {
        let (found, answer) = server.post("/api/projects", ALICE, body.clone()).await;
        assert_eq!(found, status, "{answer}");
        assert!(answer.to_string().len() < 1_000, "no echo of what was sent");
    }
    // Carol's organisation has no `researcher`: the agent is another organisation's.
    let (status, _) = server
        .post(
            "/api/projects",
            CAROL,
            json!({ "name": "Herons", "agent": "researcher" }),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let huge = server
        .request(Method::POST, "/api/projects", ALICE)
        .header("content-type", "application/json")
        .body(format!(
            "{{\"name\": \"Herons\", \"instructions\": \"{}\"}}",
            "a".repeat(3 * 1024 * 1024)
        ))
        .send()
        .await
        .expect("answered");
    assert_eq!(huge.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let (_, projects) = server.get("/api/projects", ALICE).await;
    assert_eq!(projects["projects"], json!([]), "nothing refused was kept");

    let id = project(
        &server,
        ALICE,
        json!({ "name": "  Heron\u{202e}\n survey ", "instructions": "a".repeat(20_000), "agent": "researcher" }),
    )
    .await;
    let path = format!("/api/projects/{id}");
    let (_, kept) = server.get(&path, ALICE).await;
    assert_eq!(kept["name"], "Heron survey", "cleaned as shown names are");
    assert_eq!(kept["agent"], "researcher");
    for body in [
        json!({}),
        json!({ "name": "" }),
        json!({ "instructions": "b".repeat(20_001) }),
        json!({ "agent": "nobody" }),
        json!({ "colour": "red" }),
    ] {
        let (status, answer) = server
            .call(Method::PATCH, &path, ALICE, Some(body.clone()))
            .await;
        assert!(status.is_client_error(), "{body}: {status} {answer}");
        assert!(answer["error"].is_string(), "{body}: {answer}");
    }
    let (status, cleared) = server
        .call(Method::PATCH, &path, ALICE, Some(json!({ "agent": null })))
        .await;
    assert_eq!(status, StatusCode::OK, "{cleared}");
    assert_eq!(
        (cleared["agent"].clone(), cleared["name"].clone()),
        (Value::Null, json!("Heron survey")),
        "only the agent changed"
    );
    for query in ["", "?conversations=maybe", "?conversations="] {
        let (status, body) = server
            .call(Method::DELETE, &format!("{path}{query}"), ALICE, None)
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert!(refused(&body).contains("?conversations=keep"), "{body}");
    }

    for n in 1..100 {
        project(&server, ALICE, json!({ "name": format!("Project {n}") })).await;
    }
    let (status, body) = server
        .post("/api/projects", ALICE, json!({ "name": "One too many" }))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(refused(&body).contains("100 projects"), "{body}");
    project(&server, BOB, json!({ "name": "Bob has his own" })).await;
}

// Issue 45: deleting a project says what becomes of its conversations; deleting them is refused
// in words while one of them answers, with nothing deleted, and keeping them moves them out of
// the project.
#[tokio::test]
async fn deleting_a_project_keeps_or_deletes_its_conversations_but_not_while_one_answers() {
    let data = tempfile::tempdir().expect("tempdir");
    // A slow demo model, so that a turn is still running when the project is deleted.
    let server = common::start(data.path(), 1.0).await;
    let herons = made_locally(&server, "/api/projects", json!({ "name": "Herons" })).await;
    let running = made_locally(&server, "/api/conversations", json!({ "project": herons })).await;
    let quiet = made_locally(&server, "/api/conversations", json!({ "project": herons })).await;
    let (status, _) = server.post_message(&running, "Count the herons").await;
    assert_eq!(status, 202);

    let deleting = |query: &str| format!("/api/projects/{herons}?conversations={query}");
    let (status, body) = server.call(Method::DELETE, &deleting("delete"), None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"]
            .as_str()
            .expect("error")
            .contains("still answering, and nothing was deleted"),
        "{body}"
    );
    let page = server.conversation_page().await;
    let listed: Vec<(&str, &Value)> = page["conversations"]
        .as_array()
        .expect("listed")
        .iter()
        .map(|c| (c["id"].as_str().expect("id"), &c["project"]))
        .collect();
    assert_eq!(listed.len(), 2, "{page}");
    assert!(listed.iter().all(|(_, project)| **project == json!(herons)));

    let (status, body) = server.call(Method::DELETE, &deleting("keep"), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let page = server.conversation_page().await;
    for c in page["conversations"].as_array().expect("listed") {
        assert_eq!(c["project"], Value::Null, "kept, out of any project: {c}");
    }
    let (status, _) = server
        .call(Method::GET, &format!("/api/projects/{herons}"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A second project, deleted with its conversation.
    let egrets = made_locally(&server, "/api/projects", json!({ "name": "Egrets" })).await;
    let (status, moved) = server
        .call(
            Method::PATCH,
            &format!("/api/conversations/{quiet}"),
            Some(json!({ "project": egrets })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    let (status, _) = server
        .call(
            Method::DELETE,
            &format!("/api/projects/{egrets}?conversations=delete"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(
        server.conversation_ids().await,
        std::slice::from_ref(&running)
    );
    let (status, _) = server
        .call(Method::GET, &format!("/api/conversations/{quiet}"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
