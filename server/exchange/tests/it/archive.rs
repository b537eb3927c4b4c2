//! All of a person's work as one archive: what it lists, that its `conversations.json` and
//! `projects.json` import back equal, and that no name inside it reaches outside the folder it
//! is extracted into.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io::{Cursor, Read};

use expect_test::expect;
use portal_core::Transcript;
use portal_core::attachment::{Attachment, Picture};
use portal_exchange::archive::{ArchiveSource, Archived, safe_name, write};
use portal_exchange::import::{Exported, ExportedProject, ImportedProject, read, read_file};

/// A person's projects, conversations and files, in memory.
#[derive(Default)]
struct Kept {
    projects: Vec<ExportedProject>,
    conversations: BTreeMap<String, Exported>,
    /// Listed, but deleted before the archive reads it.
    gone: Vec<String>,
    files: BTreeMap<String, (Attachment, Vec<u8>)>,
}

impl ArchiveSource for Kept {
    type Error = Infallible;

    fn projects(&mut self) -> Result<Vec<ExportedProject>, Infallible> {
        Ok(self.projects.clone())
    }

    fn conversation_ids(&mut self) -> Result<Vec<String>, Infallible> {
        let mut ids: Vec<String> = self.conversations.keys().cloned().collect();
        ids.extend(self.gone.iter().cloned());
        Ok(ids)
    }

    fn conversation(&mut self, id: &str) -> Result<Option<Exported>, Infallible> {
        Ok(self.conversations.get(id).cloned())
    }

    fn file(&mut self, id: &str) -> Result<Option<(Attachment, Vec<u8>)>, Infallible> {
        Ok(self.files.get(id).cloned())
    }
}

fn tour() -> Transcript {
    let json = std::fs::read_to_string(format!(
        "{}/tests/data/markdown-tour.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the fixture is there");
    portal_core::parse_transcript(&json).expect("the fixture is a valid transcript")
}

fn picture(id: &str, filename: &str) -> Attachment {
    Attachment::Picture(Picture {
        id: id.into(),
        filename: filename.into(),
        media_type: "image/png".into(),
        width: 640,
        height: 480,
    })
}

/// A project, the tour twice (one of them in the project and pinned, the other titled to
/// escape), a conversation deleted meanwhile, two of the three files the tour uses (one named to
/// climb out of the folder), and one file no conversation uses.
fn kept() -> Kept {
    let mut kept = Kept::default();
    kept.projects.push(ExportedProject {
        name: "Quarterly report".into(),
        instructions: "Figures in euros.".into(),
        agent: Some("analyst".into()),
        created: 1_700_000_000_000,
    });
    kept.conversations.insert(
        "c1".into(),
        Exported::new("Q3 numbers", "analyst", tour())
            .placed(Some("Quarterly report".into()), true),
    );
    kept.conversations.insert(
        "c2".into(),
        Exported::new("../../etc/cron.d/x", "analyst", tour()),
    );
    kept.gone.push("c3".into());
    kept.files.insert(
        "doc1".into(),
        (picture("doc1", "../../.bashrc"), b"not a pdf".to_vec()),
    );
    kept.files.insert(
        "pic1".into(),
        (picture("pic1", "chart.png"), b"png".to_vec()),
    );
    kept.files
        .insert("unused".into(), (picture("unused", "x.png"), b"x".to_vec()));
    kept
}

fn entries(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("a ZIP archive");
    (0..zip.len())
        .map(|i| {
            let mut entry = zip.by_index(i).expect("an entry");
            let mut content = Vec::new();
            entry.read_to_end(&mut content).expect("readable");
            (entry.name().expect("a UTF-8 name").to_string(), content)
        })
        .collect()
}

#[test]
fn an_archive_holds_every_conversation_twice_over_and_the_files_they_used() {
    let (out, archived) = write(Cursor::new(Vec::new()), &mut kept()).expect("written");
    assert_eq!(
        archived,
        Archived {
            projects: 1,
            conversations: 2,
            files: 2
        }
    );
    let entries = entries(&out.into_inner());
    let names: Vec<&str> = entries.keys().map(String::as_str).collect();
    expect![[r#"
        [
            "README.md",
            "conversations.json",
            "files/doc1/bashrc",
            "files/pic1/chart.png",
            "markdown/0001-Q3-numbers.md",
            "markdown/0002-etc-cron.d-x.md",
            "projects.json",
        ]
    "#]]
    .assert_debug_eq(&names);
    assert_eq!(entries["files/pic1/chart.png"], b"png");
    let markdown = String::from_utf8(entries["markdown/0001-Q3-numbers.md"].clone()).unwrap();
    assert!(markdown.starts_with("# Q3 numbers\n"), "{markdown}");
}

#[test]
fn an_archives_conversations_import_back_equal() {
    let (out, _) = write(Cursor::new(Vec::new()), &mut kept()).expect("written");
    let entries = entries(&out.into_inner());
    let json = String::from_utf8(entries["conversations.json"].clone()).unwrap();
    let import = read(&json).expect("the archive's list is an export Portal reads");
    let titles: Vec<&str> = import
        .conversations
        .iter()
        .map(|c| c.title.as_str())
        .collect();
    assert_eq!(titles, ["Q3 numbers", "../../etc/cron.d/x"]);
    for conversation in &import.conversations {
        assert_eq!(conversation.transcript, tour());
        assert_eq!(conversation.agent.as_deref(), Some("analyst"));
    }
    let placed: Vec<(Option<&str>, bool)> = import
        .conversations
        .iter()
        .map(|c| (c.project.as_deref(), c.pinned))
        .collect();
    assert_eq!(placed, [(Some("Quarterly report"), true), (None, false)]);
    assert!(
        import.projects.is_empty(),
        "conversations.json alone holds no project's instructions"
    );
}

#[test]
fn an_archives_projects_import_back_with_it() {
    let (out, _) = write(Cursor::new(Vec::new()), &mut kept()).expect("written");
    let bytes = out.into_inner();
    let projects = String::from_utf8(entries(&bytes)["projects.json"].clone()).unwrap();
    expect![[r#"
        [{"name":"Quarterly report","instructions":"Figures in euros.","agent":"analyst","created":1700000000000}]
    "#]]
    .assert_eq(&projects);
    let import = read_file(&bytes, MIB).expect("Portal's archive imports");
    assert_eq!(
        import.projects,
        [ImportedProject {
            name: "Quarterly report".into(),
            instructions: "Figures in euros.".into(),
            agent: Some("analyst".into()),
        }]
    );
    assert_eq!(
        import.conversations[0].project.as_deref(),
        Some("Quarterly report")
    );
}

#[test]
fn a_hostile_archives_project_names_are_cleaned_and_a_broken_projects_json_refused() {
    let conversation = Exported::new("t", "a", tour()).placed(
        Some("\u{202e}Heron\u{0007}\n\n  survey\u{200f}".into()),
        false,
    );
    let conversations = serde_json::to_vec(&[conversation]).unwrap();
    let projects = br#"[{"name": "\u202eHeron\u0007 \t survey", "instructions": "Count\u0000 herons.", "agent": null}]"#;
    let import = read_file(
        &zipped(&[
            ("conversations.json", &conversations),
            ("projects.json", projects),
        ]),
        MIB,
    )
    .expect("read");
    assert_eq!(
        import.conversations[0].project.as_deref(),
        Some("Heron survey")
    );
    assert_eq!(
        import.projects,
        [ImportedProject {
            name: "Heron survey".into(),
            instructions: "Count herons.".into(),
            agent: None,
        }]
    );

    for (projects, said) in [
        (&b"{}"[..], "invalid type: map"),
        (
            br#"[{"name": "x", "owner": "eve"}]"#,
            "unknown field `owner`",
        ),
        (br#"[{"instructions": "x"}]"#, "missing field `name`"),
        (b"\xff", "it is not UTF-8 text"),
    ] {
        let refused = read_file(
            &zipped(&[
                ("conversations.json", &conversations),
                ("projects.json", projects),
            ]),
            MIB,
        )
        .expect_err("refused")
        .to_string();
        assert!(
            refused.starts_with("the archive's projects.json cannot be read: ")
                && refused.contains(said)
                && refused.ends_with("nothing was imported"),
            "{refused}"
        );
    }
}

#[test]
fn only_a_portal_archive_has_its_projects_read() {
    let chatgpt = std::fs::read(format!(
        "{}/tests/data/chatgpt.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the fixture is there");
    let import = read_file(
        &zipped(&[
            ("conversations.json", &chatgpt),
            ("projects.json", b"not Portal's"),
        ]),
        MIB,
    )
    .expect("ChatGPT's download imports");
    assert!(import.projects.is_empty());
}

#[test]
fn an_archive_of_nothing_says_what_it_would_hold() {
    let (out, archived) = write(Cursor::new(Vec::new()), &mut Kept::default()).expect("written");
    assert_eq!(archived, Archived::default());
    let entries = entries(&out.into_inner());
    assert_eq!(entries["conversations.json"], b"[]\n");
    assert_eq!(entries["projects.json"], b"[]\n");
    assert!(
        read("[]").is_err(),
        "an empty list is refused as an import, in words"
    );
    assert_eq!(entries.len(), 3);
}

#[test]
fn names_inside_an_archive_stay_inside_it() {
    for (name, expected) in [
        ("report.pdf", "report.pdf"),
        ("../../etc/passwd", "etc-passwd"),
        ("..", "file"),
        ("..\\..\\windows\\system.ini", "windows-system.ini"),
        ("/absolute", "absolute"),
        (".hidden", "hidden"),
        ("C:evil", "C-evil"),
        ("Café – notes (final).txt", "Caf-notes-final-.txt"),
        ("\u{202e}gnp.exe", "gnp.exe"),
        ("", "file"),
    ] {
        let safe = safe_name(name, "file");
        assert_eq!(safe, expected, "{name:?}");
        assert!(!safe.contains('/') && !safe.contains('\\') && !safe.starts_with('.'));
    }
    assert_eq!(safe_name(&"a".repeat(300), "file").len(), 100);
}

/// A ZIP archive of `entries`, as another program would make it.
fn zipped(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, content) in entries {
        zip.start_file(*name, zip::write::SimpleFileOptions::default())
            .expect("an entry");
        std::io::Write::write_all(&mut zip, content).expect("written");
    }
    zip.finish().expect("finished").into_inner()
}

const MIB: u64 = 1024 * 1024;

#[test]
fn an_archive_is_imported_as_its_conversations_json() {
    let (out, _) = write(Cursor::new(Vec::new()), &mut kept()).expect("written");
    let import = read_file(&out.into_inner(), MIB).expect("Portal's archive imports");
    assert_eq!(import.conversations.len(), 2);

    // ChatGPT's data export as it downloads: a ZIP with conversations.json among other files.
    let chatgpt = std::fs::read(format!(
        "{}/tests/data/chatgpt.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the fixture is there");
    let download = zipped(&[
        ("user.json", b"{}"),
        ("conversations.json", &chatgpt),
        ("file-abc.png", b"\x89PNG"),
    ]);
    let import = read_file(&download, MIB).expect("ChatGPT's download imports");
    assert_eq!(import.source.name(), "ChatGPT");
    assert_eq!(
        read_file(&chatgpt, MIB).expect("and its JSON alone"),
        import
    );
}

#[test]
fn a_hostile_archive_is_refused_in_words() {
    // A few KB that unpack to 2 MiB: refused once past the bound, not read to its end.
    let bomb = zipped(&[("conversations.json", &vec![b' '; 2 * MIB as usize])]);
    assert!(bomb.len() < 64 * 1024, "{} bytes", bomb.len());
    for (file, expected) in [
        (
            bomb,
            "the archive's conversations.json unpacks to more than the 1 MiB one import reads",
        ),
        (
            zipped(&[("notes/conversations.json", b"[]")]),
            "the ZIP archive has no conversations.json at its top",
        ),
        (
            b"PK\x03\x04 and then nothing".to_vec(),
            "the file looks like a ZIP archive but cannot be opened",
        ),
        (
            vec![0xff, 0xfe, b'[', b']'],
            "the file is neither a ZIP archive nor JSON text",
        ),
    ] {
        let refused = read_file(&file, MIB).expect_err("refused").to_string();
        assert!(refused.starts_with(expected), "{refused}");
    }
}
