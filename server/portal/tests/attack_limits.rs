//! The attacks on limits, races and request numbers (issue 14), each against a real server and
//! SQLite on loopback, with the exact status and outcome it must meet. Memory and CPU time are
//! the test process's own (the server runs in it), read from `/proc/self`; the tests that measure
//! run one at a time and reset the peak first, so each bound is that attack's alone.
//! docs/security.md ("Limits") lists each limit with the test here that proves it.

#[path = "it/attack_support/mod.rs"]
mod attack_support;
#[path = "it/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use attack_support::{
    Bits, attachment, children_cpu_time, cpu_time, pdf_of_pages, peak_growth, upload,
};
use common::{Server, start, start_limited};
use portal_core::attachment::{Attachment, ReadingStatus};
use portal_core::{Block, Role, TurnStatus};
use portal_server::limits::Limits;
use serde_json::{Value, json};

/// Held by every test that measures memory or CPU time, so no other attack runs meanwhile.
static MEASURING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn post(server: &Server, path: impl Into<String>, body: Value) -> (u16, Value) {
    let response = server
        .client
        .post(server.url(&path.into()))
        .json(&body)
        .send()
        .await
        .expect("sent");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json"))
}

fn error(body: &Value) -> &str {
    body["error"].as_str().expect("an error sentence")
}

/// Sends `text` and reads the turn's events until it pauses; returns the turn and the id of the
/// last event it streamed.
async fn paused_turn(server: &Server, id: &str, text: &str) -> (u32, u64) {
    let turn = server.send(id, text).await;
    let events = server.events(id, turn, None).await;
    assert!(
        matches!(
            events.last(),
            Some((
                _,
                portal_core::stream::TurnEvent::TurnEnd {
                    status: TurnStatus::Paused,
                    ..
                }
            ))
        ),
        "the turn paused"
    );
    let last = events.last().map_or(0, |(id, _)| *id);
    (turn, last)
}

/// A valid PNG of `width` × `height` black RGB pixels whose data is written as long runs: the
/// file is about a hundredth of a byte a pixel (1.2 MB for 8000 × 8000), and decoding it takes
/// `width` × `height` × 3 bytes (192 MB). The data is one deflate block with the fixed codes:
/// a literal 0, then copies of 258 bytes from one byte back.
fn png_bomb(width: u32, height: u32) -> Vec<u8> {
    let row = 1 + u64::from(width) * 3;
    let zeros = row * u64::from(height);
    let mut bits = Bits::default();
    bits.put(1, 1); // the last block
    bits.put(1, 2); // fixed codes
    bits.code(0x30, 8); // literal 0
    let rest = zeros - 1;
    for _ in 0..rest / 258 {
        bits.code(0xC5, 8); // length 258
        bits.code(0, 5); // distance 1
    }
    for _ in 0..rest % 258 {
        bits.code(0x30, 8);
    }
    bits.code(0, 7); // end of block
    let mut zlib = vec![0x78, 0x01];
    zlib.extend(bits.finish());
    let adler = ((zeros % 65_521) << 16) | 1;
    zlib.extend_from_slice(&(adler as u32).to_be_bytes());

    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]); // 8-bit RGB, not interlaced
    for (kind, data) in [(b"IHDR", header), (b"IDAT", zlib), (b"IEND", Vec::new())] {
        png.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = png.len();
        png.extend_from_slice(kind);
        png.extend_from_slice(&data);
        let crc = crc32fast::hash(&png[start..]);
        png.extend_from_slice(&crc.to_be_bytes());
    }
    png
}

/// A real PNG of one colour, small on disk whatever its size.
fn solid_png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_pixel(width, height, image::Rgb([30, 120, 200]));
    let mut out = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("png");
    out.into_inner()
}

#[tokio::test]
async fn an_attachment_listed_2000_times_is_refused_with_422_before_anything_is_read() {
    let _measuring = MEASURING.lock().await;
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let document = "A line of a one-megabyte document.\n".repeat(30_000);
    let (status, stored) = upload(&server, "big.txt", document.into_bytes()).await;
    assert_eq!(status, 201, "{stored}");
    let attachment = stored["id"].as_str().expect("id").to_string();
    let id = server.conversation().await;
    let path = format!("/api/conversations/{id}/messages");
    let copies = vec![attachment.clone(); 2000];

    let ((status, body), growth) = peak_growth(post(
        &server,
        &path,
        json!({ "text": "read these", "attachments": copies }),
    ))
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        error(&body),
        "the message lists 2000 attachments, more than the 20 a message may carry; send them \
         over several messages"
    );
    // Each copy read would have cost a megabyte (2 GB in all).
    eprintln!("2,000 copies of one attachment: the peak rose {growth:.1} MiB");
    assert!(growth < 16.0, "the peak rose {growth:.1} MiB");

    let (status, body) = post(
        &server,
        &path,
        json!({ "text": "read it twice", "attachments": [attachment, attachment] }),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(error(&body).contains("more than once"), "{body}");
    assert!(
        server.transcript(&id).await.turns.is_empty(),
        "nothing was recorded"
    );
    let (status, body) = post(
        &server,
        &path,
        json!({ "text": "read it", "attachments": [attachment] }),
    )
    .await;
    assert_eq!(status, 202, "listed once, it is taken: {body}");
}

// The server's handlers run on several threads, as in `portal serve`, so the requests race.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_pairs_of_simultaneous_approvals_run_each_call_once_and_refuse_one_of_each_pair() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let mut paused = Vec::new();
    for _ in 0..50 {
        let id = server.conversation().await;
        let (turn, streamed) = paused_turn(&server, &id, "Please publish a note on emoji").await;
        let awaited = server.transcript(&id).await.turns[0].awaiting();
        let [call_id] = awaited.approvals.as_slice() else {
            panic!("one approval awaited: {awaited:?}");
        };
        paused.push((id, turn, streamed, call_id.clone()));
    }

    // Both approvals of every pair, all 100 sent at once.
    let decisions = paused.iter().flat_map(|(id, turn, _, call_id)| {
        let path = format!("/api/conversations/{id}/turns/{turn}/decision");
        let body = json!({ "call_id": call_id, "approve": true });
        [
            post(&server, path.clone(), body.clone()),
            post(&server, path, body),
        ]
    });
    let answers = futures_util::future::join_all(decisions).await;

    for (pair, (id, turn, streamed, call_id)) in answers.chunks(2).zip(&paused) {
        let mut statuses: Vec<u16> = pair.iter().map(|(status, _)| *status).collect();
        statuses.sort_unstable();
        assert_eq!(statuses, [202, 409], "{pair:?}");
        let (_, refused) = pair.iter().find(|(status, _)| *status == 409).expect("409");
        // The second of a pair may come after the first's resumed run ended the turn.
        assert!(
            error(refused).contains("already decided")
                || error(refused).contains("already answered or decided")
                || error(refused).contains("has ended (completed) and takes no answer or decision"),
            "{refused}"
        );
        let rest = server.events(id, *turn, Some(*streamed)).await;
        assert!(
            matches!(
                rest.last(),
                Some((
                    _,
                    portal_core::stream::TurnEvent::TurnEnd {
                        status: TurnStatus::Completed,
                        ..
                    }
                ))
            ),
            "{rest:?}"
        );
        let transcript = server.transcript(id).await;
        let results: Vec<&str> = transcript.turns[0]
            .messages
            .iter()
            .flat_map(|m| &m.blocks)
            .filter_map(|b| match b {
                Block::ToolResult {
                    call_id: answered,
                    content,
                    ..
                } if answered == call_id => Some(content.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(results.len(), 1, "publish_note ran once: {results:?}");
        assert!(results[0].starts_with("Published"), "{results:?}");
    }
}

// The server's handlers run on several threads, as in `portal serve`, so the requests race.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_two_answers_to_one_question_sent_at_once_exactly_one_is_recorded_50_times() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    for round in 0..50 {
        let id = server.conversation().await;
        let (turn, streamed) = paused_turn(&server, &id, "Could you clarify scripts for me").await;
        let path = format!("/api/conversations/{id}/turns/{turn}/answer");
        let (first, second) = tokio::join!(
            post(&server, &path, json!({ "text": "The emoji, please" })),
            post(&server, &path, json!({ "text": "The scripts, please" })),
        );
        let mut statuses = [first.0, second.0];
        statuses.sort_unstable();
        assert_eq!(statuses, [202, 409], "round {round}: {first:?} {second:?}");
        let refused = if first.0 == 409 { &first.1 } else { &second.1 };
        assert!(
            error(refused).contains("already answered or decided"),
            "{refused}"
        );
        server.events(&id, turn, Some(streamed)).await;
        let transcript = server.transcript(&id).await;
        let answers = transcript.turns[0]
            .messages
            .iter()
            .skip(1)
            .filter(|m| m.role == Role::User)
            .count();
        assert_eq!(answers, 1, "round {round}: one answer recorded");
        assert_eq!(transcript.turns[0].status, TurnStatus::Completed);
    }
}

// The server's handlers run on several threads, as in `portal serve`, so the requests race.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_and_an_approval_sent_at_once_to_a_paused_turn_end_it_once_30_times() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    // Rounds where the cancel claimed the paused turn, where the approval did, and where the
    // approval did and the cancel then stopped the run it started.
    let (mut cancel_won, mut approval_won, mut approved_then_cancelled) = (0, 0, 0);
    for round in 0..30 {
        let id = server.conversation().await;
        let (turn, streamed) = paused_turn(&server, &id, "Please publish a note on emoji").await;
        let awaited = server.transcript(&id).await.turns[0].awaiting();
        let [call_id] = awaited.approvals.as_slice() else {
            panic!("one approval awaited: {awaited:?}");
        };
        let turn_path = format!("/api/conversations/{id}/turns/{turn}");
        let (cancel, decision) = tokio::join!(
            post(&server, format!("{turn_path}/cancel"), json!({})),
            post(
                &server,
                format!("{turn_path}/decision"),
                json!({ "call_id": call_id, "approve": true }),
            ),
        );
        // Read the turn to its end, then once more when whatever else was to run has run.
        server.events(&id, turn, Some(streamed)).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let rest = server.events(&id, turn, Some(streamed)).await;
        let stored = server.transcript(&id).await.turns[0].status;
        let expected = match (cancel.0, decision.0) {
            (202, 409) => {
                cancel_won += 1;
                TurnStatus::CutOff
            }
            (409, 202) => {
                approval_won += 1;
                TurnStatus::Completed
            }
            // Both taken one after the other: the approval resumed the turn, then the cancel
            // found it running and stopped it.
            (202, 202) => {
                approved_then_cancelled += 1;
                TurnStatus::CutOff
            }
            _ => panic!("round {round}: {cancel:?} {decision:?}"),
        };
        for (status, body) in [&cancel, &decision] {
            assert!(
                *status == 202
                    || ["already answered or decided", "cut off", "has ended"]
                        .iter()
                        .any(|why| error(body).contains(why)),
                "round {round}: {body}"
            );
        }
        assert_eq!(stored, expected, "round {round}: {cancel:?} {decision:?}");
        let ends: Vec<&TurnStatus> = rest
            .iter()
            .filter_map(|(_, e)| match e {
                portal_core::stream::TurnEvent::TurnEnd { status, .. } => Some(status),
                _ => None,
            })
            .collect();
        assert_eq!(ends, [&expected], "round {round}: one end: {rest:?}");
    }
    eprintln!(
        "30 rounds of a cancel and an approval at once: the cancel won {cancel_won}, the \
         approval {approval_won}, the approval then the cancel {approved_then_cancelled}"
    );
}

#[tokio::test]
async fn pictures_declaring_8000_by_8000_pixels_are_refused_before_decoding_16_at_once() {
    let _measuring = MEASURING.lock().await;
    let data = tempfile::tempdir().expect("tempdir");
    let mut limits = Limits::DEFAULT;
    limits.uploads_in_flight = 16;
    let server = start_limited(data.path(), 0.0, None, limits).await;
    let small = image::load_from_memory(&png_bomb(300, 200)).expect("the bombs are real PNGs");
    assert_eq!((small.width(), small.height()), (300, 200));
    let bomb = png_bomb(8000, 8000);
    eprintln!("an 8000 × 8000 PNG of {} bytes", bomb.len());
    let uploads = (0..16).map(|n| upload(&server, format!("bomb{n}.png"), bomb.clone()));

    let (answers, growth) = peak_growth(futures_util::future::join_all(uploads)).await;
    for (status, body) in &answers {
        assert_eq!(*status, 422, "{body}");
        assert!(
            error(body).contains(
                "the picture is 8000 × 8000 pixels (64000000 in all), past the limit of \
                 40000000 pixels"
            ),
            "{body}"
        );
    }
    // The 16 bodies are 19 MB; decoded, each picture would take 192 MB, 384 MB for the two
    // decodes that may run at once.
    eprintln!("16 pictures of 8000 × 8000: the peak rose {growth:.1} MiB");
    assert!(growth < 64.0, "the peak rose {growth:.1} MiB");
}

#[tokio::test]
async fn sixteen_large_pictures_at_once_are_decoded_two_at_a_time() {
    let _measuring = MEASURING.lock().await;
    let data = tempfile::tempdir().expect("tempdir");
    let mut limits = Limits::DEFAULT;
    limits.uploads_in_flight = 16;
    let server = start_limited(data.path(), 0.0, None, limits).await;
    // 12 million pixels, within the budget: 36 MB decoded, each buffer its own mapping (past
    // the allocator's 32 MiB threshold), so resident memory follows the decodes running.
    let picture = solid_png(4000, 3000);
    let uploads = (0..16).map(|n| upload(&server, format!("photo{n}.png"), picture.clone()));

    let (answers, growth) = peak_growth(futures_util::future::join_all(uploads)).await;
    for (status, body) in &answers {
        assert_eq!(*status, 201, "{body}");
        assert_eq!(
            (body["width"].as_u64(), body["height"].as_u64()),
            (Some(4000), Some(3000))
        );
    }
    // Two decodes at once take 72 MB; all 16 at once would take 576 MB.
    eprintln!("16 pictures of 4000 × 3000 at once: the peak rose {growth:.1} MiB");
    assert!(growth < 160.0, "the peak rose {growth:.1} MiB");
}

#[tokio::test]
async fn a_pdf_of_100000_pages_is_read_to_its_page_limit_and_says_so() {
    let _measuring = MEASURING.lock().await;
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let pdf = pdf_of_pages(100_000);
    let started = Instant::now();
    let cpu = cpu_time() + children_cpu_time();
    let (status, body) = upload(&server, "huge.pdf", pdf).await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_str().expect("id");
    let document = loop {
        match attachment(&server, id).await {
            Attachment::Document(d) if d.status != ReadingStatus::Reading => break d,
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
        assert!(started.elapsed() < Duration::from_secs(120), "reading ends");
    };
    let (cpu, wall) = (cpu_time() + children_cpu_time() - cpu, started.elapsed());
    assert_eq!(document.status, ReadingStatus::Finished);
    assert_eq!(
        (document.pages_read, document.pages_total),
        (Limits::DEFAULT.uploads.pdf_pages, 100_000)
    );
    assert_eq!(
        Attachment::Document(document.clone()).progress_note(),
        "Ready; stopped at the page limit, 2000 of 100000 pages read"
    );
    let text = document.text.expect("the pages read have text");
    assert_eq!(text.matches("A page of a very long document").count(), 2000);
    // Bounded by parsing (the upload's size) and 2,000 pages; measured 1.7–1.9 s in a debug
    // build, against hours at 6 pages a second before.
    eprintln!("100,000-page PDF: {cpu:?} of CPU, {wall:?} in all");
    assert!(cpu < Duration::from_secs(30), "CPU time {cpu:?}");
}

#[tokio::test]
async fn a_pdf_read_past_its_time_limit_stops_there_and_says_so() {
    let _measuring = MEASURING.lock().await;
    let data = tempfile::tempdir().expect("tempdir");
    let mut limits = Limits::DEFAULT;
    limits.uploads.pdf_pages = u32::MAX;
    // 3 s, so that the reader's own allowance (twice the limit and 5 s) holds the parse on a
    // machine busy with the other tests (at 1 s, a parse slowed to 7 s read no page).
    limits.uploads.pdf_seconds = 3;
    let server = start_limited(data.path(), 0.0, None, limits).await;
    let pdf = pdf_of_pages(100_000);
    let started = Instant::now();
    let cpu = cpu_time() + children_cpu_time();
    let (status, body) = upload(&server, "huge.pdf", pdf).await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_str().expect("id");
    let document = loop {
        match attachment(&server, id).await {
            Attachment::Document(d) if d.status != ReadingStatus::Reading => break d,
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
        assert!(started.elapsed() < Duration::from_secs(120), "reading ends");
    };
    let cpu = cpu_time() + children_cpu_time() - cpu;
    assert_eq!(document.status, ReadingStatus::Finished);
    assert!(
        document.pages_read > 0 && document.pages_read < 100_000,
        "{} pages read",
        document.pages_read
    );
    let note = Attachment::Document(document.clone()).progress_note();
    assert!(
        note.starts_with("Ready; stopped at the time limit,"),
        "{note}"
    );
    // Parsing (about 1 s in a debug build) and the 3 s of reading: about 4 s.
    eprintln!(
        "3 s limit: {} of 100,000 pages read, {cpu:?} of CPU",
        document.pages_read
    );
    assert!(cpu < Duration::from_secs(15), "CPU time {cpu:?}");
}

#[tokio::test]
async fn an_upload_past_the_users_quota_is_refused_with_413() {
    let data = tempfile::tempdir().expect("tempdir");
    let mut limits = Limits::DEFAULT;
    limits.upload_quota_bytes = 1_000_000;
    let server = start_limited(data.path(), 0.0, None, limits).await;
    let text = |bytes: usize| "q".repeat(bytes).into_bytes();
    let (status, body) = upload(&server, "first.txt", text(600_000)).await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = upload(&server, "second.txt", text(600_000)).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(
        error(&body),
        "“second.txt” is 585.9 KB, and storing it would bring the uploads you keep past your \
         quota of 976.6 KB (585.9 KB are stored already); send a smaller file, or ask an \
         administrator to raise the quota"
    );
    let (status, body) = upload(&server, "third.txt", text(400_000)).await;
    assert_eq!(status, 201, "what fits is taken: {body}");
}

#[tokio::test]
async fn a_users_fifth_upload_in_flight_is_refused_with_429_before_its_body_is_read() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let limit = Limits::DEFAULT.uploads_in_flight;
    // One more upload than the limit, none of whose bodies finish arriving: whichever arrives
    // last is refused, and the others hold their places until their bodies end.
    let mut senders = Vec::new();
    let mut pending = Vec::new();
    for n in 0..=limit {
        let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(1);
        sender
            .send(Ok(b"a slow".to_vec()))
            .await
            .expect("first bytes");
        let body =
            reqwest::Body::wrap_stream(tokio_stream::wrappers::ReceiverStream::new(receiver));
        let request = server
            .client
            .post(server.url("/api/attachments"))
            .query(&[("filename", format!("slow{n}.txt"))])
            .body(body)
            .send();
        pending.push(tokio::spawn(request));
        senders.push(sender);
    }
    let (refused, _, waiting) = tokio::time::timeout(
        Duration::from_secs(60),
        futures_util::future::select_all(pending),
    )
    .await
    .expect("one upload is answered while its body is still arriving");
    let refused = refused.expect("task").expect("answered");
    assert_eq!(refused.status(), 429);
    let filename = refused
        .url()
        .query_pairs()
        .find(|(key, _)| key == "filename")
        .expect("filename")
        .1
        .into_owned();
    let body: Value = refused.json().await.expect("json");
    assert_eq!(
        error(&body),
        format!(
            "you have {limit} uploads in flight, the most one user may have at once; wait for \
             one to finish, then send “{filename}” again"
        )
    );
    // Their bodies end: the others are stored and give their places back.
    for sender in &senders {
        let _ = sender.send(Ok(b" upload".to_vec())).await;
    }
    drop(senders);
    for request in waiting {
        let response = request.await.expect("task").expect("answered");
        assert_eq!(response.status(), 201);
    }
    let (status, body) = upload(&server, "sixth.txt", b"quick".to_vec()).await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn a_users_fifth_open_event_stream_is_refused_with_429() {
    let data = tempfile::tempdir().expect("tempdir");
    let mut limits = Limits::DEFAULT;
    limits.streams_per_user = 4;
    let server = start_limited(data.path(), 1.0, None, limits).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Tell me about scripts").await;
    let mut open = Vec::new();
    for _ in 0..4 {
        open.push(server.stream(&id, turn, None).await);
    }
    let events = server.url(&format!("/api/conversations/{id}/turns/{turn}/events"));
    let response = server.client.get(&events).send().await.expect("answered");
    assert_eq!(response.status(), 429);
    let body: Value = response.json().await.expect("json");
    assert_eq!(
        error(&body),
        "you have 4 event streams open, the most one user may have at once; close one (another \
         tab or window) or wait for a turn to end, then reconnect"
    );
    // Read to the turn's end, the streams close and give their places back.
    for mut stream in open {
        while stream.next().await.is_some() {}
    }
    let started = Instant::now();
    loop {
        let response = server.client.get(&events).send().await.expect("answered");
        if response.status() == 200 {
            break;
        }
        assert_eq!(response.status(), 429);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "places given back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn texts_past_their_limits_are_refused_with_422_naming_the_limit() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let id = server.conversation().await;
    let long = "é".repeat(Limits::DEFAULT.message_chars + 1);
    let (status, body) = server.post_message(&id, &long).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        error(&body),
        "the message is 100001 characters long, past the limit of 100000; shorten it, or attach \
         the text as a file"
    );
    let (turn, _) = paused_turn(&server, &id, "Could you clarify scripts for me").await;
    let answer = "a".repeat(Limits::DEFAULT.answer_chars + 1);
    let (status, body) = post(
        &server,
        &format!("/api/conversations/{id}/turns/{turn}/answer"),
        json!({ "text": answer }),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        error(&body).starts_with("the answer is 20001 characters long, past the limit of 20000"),
        "{body}"
    );
    let name = "n".repeat(Limits::DEFAULT.uploads.filename_bytes + 1);
    let (status, body) = upload(&server, &name, b"text".to_vec()).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        error(&body),
        "the file name is 1025 bytes long, past the limit of 1024; rename the file and send it \
         again"
    );
    let (status, body) = post(
        &server,
        &format!("/api/conversations/{id}/messages"),
        json!({ "text": "hi", "attachments": ["../../etc/passwd"] }),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(error(&body).contains("is not an attachment id"), "{body}");
}

#[tokio::test]
async fn turn_numbers_that_are_not_turns_are_404_for_every_action_and_nothing_panics() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let id = server.conversation().await;
    let (turn, _) = paused_turn(&server, &id, "Please publish a note on emoji").await;
    for number in ["0", "4294967296", "18446744073709551616", "-1", "1e3"] {
        for (action, body) in [
            ("cancel", json!({})),
            ("decision", json!({ "call_id": "call_1", "approve": true })),
            ("answer", json!({ "text": "yes" })),
        ] {
            let (status, answer) = post(
                &server,
                &format!("/api/conversations/{id}/turns/{number}/{action}"),
                body,
            )
            .await;
            assert_eq!(status, 404, "{action} on turn {number}: {answer}");
            assert!(
                error(&answer).contains("turns are numbered from 1"),
                "{answer}"
            );
        }
        let response = server
            .client
            .get(server.url(&format!("/api/conversations/{id}/turns/{number}/events")))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 404, "events of turn {number}");
    }
    assert_eq!(
        server.transcript(&id).await.turns[turn as usize - 1].status,
        TurnStatus::Paused,
        "the paused turn was not touched"
    );
}

#[tokio::test]
async fn a_file_name_with_a_right_to_left_override_is_stored_without_it() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    // Shown with U+202E, "invoice_\u{202E}fdp.txt" reads "invoice_txt.pdf".
    let (status, body) = upload(&server, "invoice_\u{202E}fdp.txt", b"total: 3".to_vec()).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["filename"], "invoice_fdp.txt");
    let id = body["id"].as_str().expect("id");
    assert_eq!(attachment(&server, id).await.filename(), "invoice_fdp.txt");
}

#[tokio::test]
async fn titles_are_cleaned_like_file_names_and_one_with_nothing_visible_is_no_title() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let title_of = |id: String| {
        let server = &server;
        async move {
            let page = server.conversation_page().await;
            page["conversations"]
                .as_array()
                .expect("conversations")
                .iter()
                .find(|c| c["id"] == id.as_str())
                .map(|c| c["title"].as_str().expect("a title").to_string())
                .expect("listed")
        }
    };
    // A first message of only invisible characters gives no title; the next one titles it,
    // without the controls.
    let id = server.conversation().await;
    let turn = server.send(&id, "\u{200B}\u{202E}\u{FEFF}").await;
    server.events(&id, turn, None).await;
    assert_eq!(title_of(id.clone()).await, "");
    server
        .send(&id, "Pay the \u{202E}fdp.exe\u{0} invoice")
        .await;
    assert_eq!(title_of(id.clone()).await, "Pay the fdp.exe invoice");

    let rename = |title: &'static str| {
        let server = &server;
        let path = format!("/api/conversations/{id}");
        async move {
            let response = server
                .client
                .patch(server.url(&path))
                .json(&json!({ "title": title }))
                .send()
                .await
                .expect("renamed");
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.expect("json"))
        }
    };
    let (status, body) = rename("invoice_\u{202E}fdp.exe\u{0}").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["title"], "invoice_fdp.exe");
    for nothing in [
        "\u{200B}\u{200C}\u{200D}",
        "\u{202E}\u{0}",
        "\u{FEFF} \u{2060}",
    ] {
        let (status, body) = rename(nothing).await;
        assert_eq!(status, 422, "{nothing:?}: {body}");
        assert!(error(&body).contains("this one has 0"), "{body}");
    }
    assert_eq!(title_of(id.clone()).await, "invoice_fdp.exe", "kept");
}
