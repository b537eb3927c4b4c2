//! Knowledge retrieval (issue 43) on PostgreSQL's own documentation: every HTML page of Debian's
//! `postgresql-doc-15` (`/usr/share/doc/postgresql-doc-15/html`, which `cargo xtask setup`
//! installs) is read and split by `portal_knowledge::ingest` as a web page and added to one
//! collection, on SQLite and on PostgreSQL. It prints pages ingested a second, then runs the
//! questions of `tests/knowledge/postgresql-questions.json` (each with the page that answers it)
//! through `search_knowledge`: recall at 5 (the page among the documents of the best 5 passages)
//! and the mean reciprocal rank of the page's first passage among the best 20. It then adds
//! copies of the corpus, each a collection of its own with documents of new ids, until the
//! organisation holds at least 100,000 passages, and times the questions searching every
//! collection at once (p50 and p99). The target is a p50 of 30 ms or less on SQLite.
//!
//! The copies are the same passages again, so every word's share of the passages is unchanged
//! and each posting list is as many times longer as there are copies; their recall is not
//! measured (the copies tie with the original).
//!
//! PostgreSQL needs `PORTAL_TEST_POSTGRES` (`cargo xtask bench` gives it a throwaway PostgreSQL)
//! and gets a schema of its own there, dropped at the end; without it only SQLite is measured.
//! Writes `target/bench/knowledge.json`.
//!
//! `cargo bench -p portal-server --bench knowledge [-- --passages N --rounds N]`; run by `cargo
//! xtask bench`, never by CI. `PORTAL_BENCH_DOCS` names another folder of HTML pages.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "../tests/it/databases/mod.rs"]
mod databases;

use databases::Database;
use portal_knowledge::ingest::{self, Kind};
use portal_store::{
    CollectionOwner, KnowledgeLimits, NewCollection, NewKnowledgeDocument, NewPassage, Storage,
};
use serde_json::json;

/// Where Debian's `postgresql-doc-15` puts PostgreSQL's HTML documentation.
const DOCS: &str = "/usr/share/doc/postgresql-doc-15/html";

/// The questions, each with the page that answers it, from the workspace's root.
const QUESTIONS: &str = "tests/knowledge/postgresql-questions.json";

/// The organisation every collection of the bench belongs to.
const ORG: &str = "bench";

/// The passages an agent's search answers by default (`search_tool::DEFAULT_PASSAGES`), over
/// which recall is counted.
const RECALL_AT: usize = 5;

/// The passages the reciprocal rank looks through (the tool's most, `search_tool::MOST_PASSAGES`).
const RANKED: usize = 20;

/// Limits no bench reaches.
const LIMITS: KnowledgeLimits = KnowledgeLimits {
    collections: 1_000,
    documents: 1_000_000,
    bytes: u64::MAX,
};

fn option(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One page of the corpus, as read from disk.
struct Page {
    name: String,
    bytes: Vec<u8>,
}

/// One question and the page that answers it.
struct Question {
    question: String,
    page: String,
}

/// What one database measured.
struct Measured {
    database: &'static str,
    pages: usize,
    passages: usize,
    split: Duration,
    stored: Duration,
    recall: f64,
    mrr: f64,
    missed: Vec<String>,
    scaled_passages: usize,
    scaling: Duration,
    p50: Duration,
    p99: Duration,
    single_p50: Duration,
}

fn main() {
    let target = option("--passages", 100_000);
    let rounds = option("--rounds", 3).max(1);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let docs = std::env::var_os("PORTAL_BENCH_DOCS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DOCS));
    let pages = read_pages(&docs);
    let questions = read_questions(&root.join(QUESTIONS), &pages);
    eprintln!(
        "{} pages ({:.1} MB) from {}, {} questions",
        pages.len(),
        pages.iter().map(|p| p.bytes.len()).sum::<usize>() as f64 / 1e6,
        docs.display(),
        questions.len()
    );
    let mut measured = vec![measure(
        &Database::sqlite(),
        &pages,
        &questions,
        target,
        rounds,
    )];
    match Database::postgres() {
        Some(db) => measured.push(measure(&db, &pages, &questions, target, rounds)),
        None => println!("PostgreSQL: skipped (PORTAL_TEST_POSTGRES is not set)"),
    }
    print_table(&measured, questions.len());
    write_json(
        &root.join("target/bench/knowledge.json"),
        &measured,
        &questions,
    );
}

fn read_pages(docs: &Path) -> Vec<Page> {
    let entries = std::fs::read_dir(docs).unwrap_or_else(|e| {
        panic!(
            "{} cannot be read ({e}); `cargo xtask setup` installs postgresql-doc-15",
            docs.display()
        )
    });
    let mut pages: Vec<Page> = entries
        .map(|entry| entry.expect("a folder entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "html"))
        .map(|path| Page {
            name: path
                .file_name()
                .and_then(|n| n.to_str())
                .expect("a UTF-8 name")
                .to_string(),
            bytes: std::fs::read(&path).expect("the page is read"),
        })
        .collect();
    pages.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(!pages.is_empty(), "{} holds no HTML page", docs.display());
    pages
}

/// The questions, each checked to name a page of the corpus.
fn read_questions(file: &Path, pages: &[Page]) -> Vec<Question> {
    let text = std::fs::read_to_string(file).expect("the questions are read");
    let list: Vec<serde_json::Value> = serde_json::from_str(&text).expect("the questions' JSON");
    list.iter()
        .map(|q| {
            let question = Question {
                question: q["question"].as_str().expect("a question").to_string(),
                page: q["page"].as_str().expect("a page").to_string(),
            };
            assert!(
                pages.iter().any(|p| p.name == question.page),
                "“{}” names {}, which the corpus does not hold",
                question.question,
                question.page
            );
            question
        })
        .collect()
}

fn measure(
    db: &Database,
    pages: &[Page],
    questions: &[Question],
    target: usize,
    rounds: usize,
) -> Measured {
    let storage = db.open();
    let name = db.name();

    // Ingest: every page read and split as the API does, then added, timed apart.
    let original = collection(&*storage, "postgresql-docs");
    let (mut split, mut stored) = (Duration::ZERO, Duration::ZERO);
    let mut documents: Vec<(String, u64, Vec<NewPassage>)> = Vec::with_capacity(pages.len());
    for page in pages {
        let started = Instant::now();
        let kind = ingest::kind(&page.name, None, &page.bytes).expect("a web page");
        assert_eq!(kind, Kind::Html, "{}", page.name);
        let passages = ingest::text(&page.name, kind, &page.bytes).expect("the page's passages");
        split += started.elapsed();
        let started = Instant::now();
        add(
            &*storage,
            &original,
            "",
            &page.name,
            page.bytes.len() as u64,
            &passages,
        );
        stored += started.elapsed();
        documents.push((page.name.clone(), page.bytes.len() as u64, passages));
    }
    let passages: usize = documents.iter().map(|(_, _, p)| p.len()).sum();
    analyze(db);
    eprintln!(
        "{name}: {} pages, {passages} passages: split in {:.1} s, stored in {:.1} s",
        pages.len(),
        split.as_secs_f64(),
        stored.as_secs_f64()
    );

    // Quality: the answering page's rank among the best passages' documents.
    let mut found_in_5 = 0;
    let mut reciprocal = 0.0;
    let mut missed = Vec::new();
    for q in questions {
        let best = storage
            .search_knowledge(ORG, std::slice::from_ref(&original), &q.question, RANKED)
            .expect("the search");
        match best.iter().position(|p| p.document_name == q.page) {
            Some(rank) => {
                if rank < RECALL_AT {
                    found_in_5 += 1;
                } else {
                    missed.push(q.question.clone());
                }
                reciprocal += 1.0 / (rank + 1) as f64;
            }
            None => missed.push(q.question.clone()),
        }
    }
    let recall = found_in_5 as f64 / questions.len() as f64;
    let mrr = reciprocal / questions.len() as f64;

    // Scale: copies of the corpus, each a collection, until the organisation holds `target`.
    let started = Instant::now();
    let mut collections = vec![original.clone()];
    let mut scaled_passages = passages;
    while scaled_passages < target {
        let copy = collection(&*storage, &format!("copy-{}", collections.len()));
        for (page, bytes, passages) in &documents {
            add(&*storage, &copy, &copy, page, *bytes, passages);
        }
        scaled_passages += passages;
        collections.push(copy);
    }
    analyze(db);
    let scaling = started.elapsed();
    eprintln!(
        "{name}: {scaled_passages} passages in {} collections ({:.1} s to add the copies)",
        collections.len(),
        scaling.as_secs_f64()
    );

    // Latency at scale: every question searching every collection (all passages are
    // candidates), and the original collection alone among them; the first round warms up.
    let time = |ids: &[String]| {
        let mut times = Vec::with_capacity(questions.len() * rounds);
        for round in 0..=rounds {
            for q in questions {
                let started = Instant::now();
                let found = storage
                    .search_knowledge(ORG, ids, &q.question, RECALL_AT)
                    .expect("the search");
                if round > 0 {
                    times.push(started.elapsed());
                }
                std::hint::black_box(found);
            }
        }
        times.sort();
        times
    };
    let all = time(&collections);
    let single = time(std::slice::from_ref(&original));
    Measured {
        database: name,
        pages: pages.len(),
        passages,
        split,
        stored,
        recall,
        mrr,
        missed,
        scaled_passages,
        scaling,
        p50: percentile(&all, 50),
        p99: percentile(&all, 99),
        single_p50: percentile(&single, 50),
    }
}

/// Makes a collection of the organisation's; its id.
fn collection(storage: &dyn Storage, name: &str) -> String {
    let id = format!("col_{name}");
    storage
        .create_collection(
            &NewCollection {
                id: id.clone(),
                owner: CollectionOwner::Organisation { org_id: ORG.into() },
                name: name.to_string(),
                description: "PostgreSQL 15's documentation".into(),
            },
            &LIMITS,
        )
        .expect("the collection is made");
    id
}

/// Adds one page's passages to `collection`, its document's id made of the collection's
/// (`prefix`) and the page's name.
fn add(
    storage: &dyn Storage,
    collection: &str,
    prefix: &str,
    page: &str,
    bytes: u64,
    passages: &[NewPassage],
) {
    storage
        .add_knowledge_document(
            ORG,
            &NewKnowledgeDocument {
                id: format!("kdoc_{prefix}{page}"),
                collection_id: collection.to_string(),
                name: page.to_string(),
                media_type: Kind::Html.media_type().to_string(),
                bytes,
                pages: 0,
                passages: passages.to_vec(),
                source: None,
            },
            &LIMITS,
        )
        .expect("the document is added");
}

/// Brings PostgreSQL's statistics up to date after a bulk load, as autovacuum would shortly.
fn analyze(db: &Database) {
    if let Database::Postgres { .. } = db {
        db.execute("ANALYZE");
    }
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    let index = (sorted.len() * p).div_ceil(100).saturating_sub(1);
    sorted[index.min(sorted.len() - 1)]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn print_table(measured: &[Measured], questions: usize) {
    println!(
        "{:<11} {:>6} {:>9} {:>11} {:>9} {:>6} {:>10} {:>8} {:>8} {:>10}",
        "database",
        "pages",
        "passages",
        "ingest p/s",
        "recall@5",
        "MRR",
        "scaled to",
        "p50 ms",
        "p99 ms",
        "1 coll p50"
    );
    for m in measured {
        println!(
            "{:<11} {:>6} {:>9} {:>11.1} {:>9.3} {:>6.3} {:>10} {:>8.1} {:>8.1} {:>10.1}",
            m.database,
            m.pages,
            m.passages,
            m.pages as f64 / (m.split + m.stored).as_secs_f64(),
            m.recall,
            m.mrr,
            m.scaled_passages,
            ms(m.p50),
            ms(m.p99),
            ms(m.single_p50),
        );
    }
    println!(
        "recall@5: the answering page among the best {RECALL_AT} passages' documents, over {questions} questions; MRR over the best {RANKED}; p50/p99: every question searching every collection at the scaled size; 1 coll: the original collection alone at that size"
    );
    for m in measured {
        println!(
            "{}: {} of {questions} questions missed at 5",
            m.database,
            m.missed.len()
        );
    }
}

fn write_json(file: &Path, measured: &[Measured], questions: &[Question]) {
    let databases: Vec<serde_json::Value> = measured
        .iter()
        .map(|m| {
            json!({
                "database": m.database,
                "pages": m.pages,
                "passages": m.passages,
                "split_seconds": m.split.as_secs_f64(),
                "stored_seconds": m.stored.as_secs_f64(),
                "ingest_pages_per_second": m.pages as f64 / (m.split + m.stored).as_secs_f64(),
                "recall_at_5": m.recall,
                "mrr_at_20": m.mrr,
                "missed_at_5": m.missed,
                "scaled_passages": m.scaled_passages,
                "scaling_seconds": m.scaling.as_secs_f64(),
                "query_p50_ms": ms(m.p50),
                "query_p99_ms": ms(m.p99),
                "one_collection_query_p50_ms": ms(m.single_p50),
            })
        })
        .collect();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let report = json!({
        "questions": questions.len(),
        "load_average": load.split_whitespace().take(3).collect::<Vec<_>>(),
        "databases": databases,
    });
    std::fs::create_dir_all(file.parent().expect("a folder")).expect("target/bench is made");
    std::fs::write(
        file,
        serde_json::to_string_pretty(&report).expect("JSON") + "\n",
    )
    .expect("knowledge.json is written");
    println!("wrote {}", file.display());
}
