//! Pictures reach a model that can see (rules A4, A8): a real JPEG from a phone, stored with an
//! EXIF rotation, is sent through the turn loop to a fake upstream, OpenAI-compatible and
//! Anthropic, upright and reduced to the model's largest picture, in each wire format.

use crate::common;

use std::io::Cursor;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::response::Response;
use base64::Engine;
use image::{GenericImageView, ImageFormat, Rgb, RgbImage};
use serde_json::{Value, json};

/// An 800 × 400 JPEG whose left half is red and right half blue, with an EXIF orientation of 6
/// (turn 90° clockwise to view): upright it is 400 × 800, red above blue.
fn phone_photo() -> Vec<u8> {
    let image = RgbImage::from_fn(800, 400, |x, _| {
        if x < 400 {
            Rgb([220, 20, 20])
        } else {
            Rgb([20, 20, 220])
        }
    });
    let mut jpeg = Cursor::new(Vec::new());
    image.write_to(&mut jpeg, ImageFormat::Jpeg).expect("jpeg");
    let jpeg = jpeg.into_inner();
    // APP1 "Exif": a big-endian TIFF header and one IFD entry, Orientation (0x0112) = 6.
    let mut exif = b"Exif\0\0MM\0\x2a\0\0\0\x08\0\x01".to_vec();
    exif.extend_from_slice(&[0x01, 0x12, 0x00, 0x03, 0, 0, 0, 1, 0x00, 0x06, 0, 0]);
    exif.extend_from_slice(&[0, 0, 0, 0]);
    let length = u16::try_from(exif.len() + 2).expect("short");
    let mut photo = jpeg[..2].to_vec();
    photo.extend_from_slice(&[0xFF, 0xE1]);
    photo.extend_from_slice(&length.to_be_bytes());
    photo.extend_from_slice(&exif);
    photo.extend_from_slice(&jpeg[2..]);
    photo
}

/// A fake upstream that answers every call at `path` with the short text reply in `fixture`
/// (under tests/fixtures/) and keeps the request bodies; its base URL and the bodies.
async fn upstream(path: &'static str, fixture: &str) -> (String, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let reply = std::fs::read(format!(
        "{}/../../tests/fixtures/{fixture}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture");
    let app = axum::Router::new().route(
        path,
        axum::routing::post(move |body: axum::Json<Value>| {
            let kept = Arc::clone(&kept);
            let reply = reply.clone();
            async move {
                kept.lock().expect("lock").push(body.0);
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(Body::from(reply))
                    .expect("response")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("port");
    let base = format!("http://{}/v1", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, seen)
}

/// The models file of one model of `kind` at `base` that sees pictures up to 400 pixels on the
/// long edge.
fn seeing_model(kind: &str, base: &str) -> portal_model::ModelRegistry {
    let models = format!(
        r#"
[[models]]
name = "seer"
kind = "{kind}"
base_url = "{base}"
api_key = {{ env = "SEER_API_KEY" }}
model = "seer-1"
[models.capabilities]
context_window = 128000
max_output_tokens = 4096
can_reason = false
can_see = true
largest_picture = {{ long_edge = 400 }}
"#
    );
    portal_model::ModelRegistry::from_toml(&models, 0.0, |var| {
        (var == "SEER_API_KEY").then(|| "sk-test".to_string())
    })
    .expect("models")
}

/// Uploads the phone photo, sends it with a message to `registry`'s model and waits for the
/// turn's end; the first request the upstream got.
async fn send_phone_photo(
    registry: portal_model::ModelRegistry,
    seen: &Mutex<Vec<Value>>,
) -> Value {
    let data = tempfile::tempdir().expect("tempdir");
    let server = common::start_with(data.path(), 0.0, Some(registry)).await;
    let uploaded: Value = server
        .client
        .post(server.url("/api/attachments?filename=IMG_0001.jpg"))
        .body(phone_photo())
        .send()
        .await
        .expect("answer")
        .json()
        .await
        .expect("json");
    assert_eq!(
        (uploaded["width"].as_u64(), uploaded["height"].as_u64()),
        (Some(400), Some(800)),
        "A4: stored upright: {uploaded}"
    );
    let id = server.conversation().await;
    let sent = server
        .client
        .post(server.url(&format!("/api/conversations/{id}/messages")))
        .json(&json!({ "text": "What colours are these?", "attachments": [uploaded["id"]] }))
        .send()
        .await
        .expect("answer");
    assert_eq!(sent.status().as_u16(), 202);
    server.events(&id, 1, None).await;
    let requests = seen.lock().expect("lock").clone();
    requests.first().expect("the model was called").clone()
}

/// Checks the picture a request carried, as base64 JPEG: reduced to a long edge of 400 and
/// upright (red above blue), with the message naming the size sent.
fn check_reduced_and_upright(request: &Value, base64: &str) {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64)
        .expect("base64");
    let sent = image::load_from_memory(&bytes).expect("decodes");
    assert_eq!(
        sent.dimensions(),
        (200, 400),
        "A4: reduced to a long edge of 400, upright"
    );
    let [r, _, b, _] = sent.get_pixel(100, 50).0;
    assert!(r > 150 && b < 100, "red on top: {r} {b}");
    let [r, _, b, _] = sent.get_pixel(100, 350).0;
    assert!(b > 150 && r < 100, "blue below: {r} {b}");
    assert!(
        request.to_string().contains("200×400"),
        "A4: the message names the size sent"
    );
}

/// Every part of every message's content in a request.
fn content_parts(request: &Value) -> impl Iterator<Item = &Value> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
}

#[tokio::test]
async fn a4_a8_a_rotated_phone_photo_reaches_the_model_upright_and_reduced() {
    let (base, seen) = upstream("/v1/chat/completions", "openai/openai-text.sse").await;
    let request = send_phone_photo(seeing_model("openai", &base), &seen).await;
    let url = content_parts(&request)
        .find_map(|part| part["image_url"]["url"].as_str())
        .expect("A4: the picture is in the request, not a could-not-be-loaded line");
    let base64 = url
        .strip_prefix("data:image/jpeg;base64,")
        .expect("A4: a JPEG stays JPEG");
    check_reduced_and_upright(&request, base64);
}

#[tokio::test]
async fn a4_a8_a_rotated_phone_photo_reaches_an_anthropic_model_upright_and_reduced() {
    let (base, seen) = upstream("/v1/messages", "anthropic/text.sse").await;
    let request = send_phone_photo(seeing_model("anthropic", &base), &seen).await;
    let source = content_parts(&request)
        .find(|part| part["type"] == "image")
        .map(|part| &part["source"])
        .expect("A4: the picture is in the request, not a could-not-be-loaded line");
    assert_eq!(source["type"], "base64");
    assert_eq!(source["media_type"], "image/jpeg", "A4: a JPEG stays JPEG");
    check_reduced_and_upright(&request, source["data"].as_str().expect("data"));
}
