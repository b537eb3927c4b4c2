use std::fs;
use std::path::Path;

use portal_core::TraceEntry;
use portal_core::skills::{SkillError, catalogue, load_skill, resolve_selection};
use serde_json::json;

use super::*;
use portal_identity::TokenDigest;

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

fn skill_md(name: &str, extra: &str) -> String {
    format!("---\nname: {name}\ndescription: Use for {name}.\n{extra}---\nDo {name} well.\n")
}

fn user(root: &Path, organisation: &str, id: &str) {
    write(
        root,
        &format!("organisations/{organisation}/users/{id}/user.toml"),
        &format!(
            "name = \"{id}\"\ntoken_sha256 = \"{}\"\n",
            TokenDigest::of(id).to_hex()
        ),
    );
}

/// Acme (alice, bob) and Globex (carol), with no skills yet.
fn base() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "organisations/acme/organisation.toml",
        "name = \"Acme\"\n",
    );
    write(
        root,
        "organisations/globex/organisation.toml",
        "name = \"Globex\"\n",
    );
    user(root, "acme", "alice");
    user(root, "acme", "bob");
    user(root, "globex", "carol");
    dir
}

fn load(root: &Path) -> (Identity, SkillLibrary) {
    let identity = Identity::load(root).expect("identity loads");
    let library = SkillLibrary::load(&identity).expect("skills load");
    (identity, library)
}

fn alice() -> Caller {
    Caller {
        organisation: "acme".into(),
        user: "alice".into(),
        admin: false,
    }
}

/// Alice's selection of `/plan` against a directory set up by `setup`.
fn select_plan(setup: impl FnOnce(&Path)) -> Result<Vec<Skill>, SkillError> {
    let dir = base();
    setup(dir.path());
    let (_, library) = load(dir.path());
    let caller = alice();
    resolve_selection(
        &library.directory(&caller),
        &caller.organisation,
        &["plan".to_string()],
    )
}

#[test]
fn s2_s3_unknown_invisible_inactive_and_foreign_slugs_read_the_same() {
    let unknown = select_plan(|_| {}).expect_err("S3: unknown");
    let invisible = select_plan(|root| {
        write(
            root,
            "organisations/acme/users/bob/skills/plan/SKILL.md",
            &skill_md("plan", ""),
        );
    })
    .expect_err("S3: bob's private skill is invisible to alice");
    let inactive = select_plan(|root| {
        write(
            root,
            "organisations/acme/skills/plan/SKILL.md",
            &skill_md("plan", "active: false\n"),
        );
    })
    .expect_err("S3: inactive");
    let foreign = select_plan(|root| {
        write(
            root,
            "organisations/globex/skills/plan/SKILL.md",
            &skill_md("plan", ""),
        );
    })
    .expect_err("S2: another organisation's skill");
    let words = unknown.to_string();
    assert!(words.contains("/plan"), "{words}");
    for other in [&invisible, &inactive, &foreign] {
        assert_eq!(other, &unknown);
        assert_eq!(other.to_string(), words);
    }
}

#[test]
fn s3_visible_active_skills_resolve_for_their_author_and_organisation() {
    let dir = base();
    let root = dir.path();
    write(
        root,
        "organisations/acme/skills/plan/SKILL.md",
        &skill_md("plan", ""),
    );
    write(
        root,
        "organisations/acme/users/alice/skills/drafts/SKILL.md",
        &skill_md("drafts", ""),
    );
    write(
        root,
        "organisations/acme/users/bob/skills/shared/SKILL.md",
        &skill_md("shared", "visibility: organisation\n"),
    );
    let (_, library) = load(root);
    let caller = alice();
    let slugs = ["plan", "drafts", "shared"].map(String::from);
    let skills = resolve_selection(&library.directory(&caller), "acme", &slugs).expect("all seen");
    let ids: Vec<&str> = skills.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["acme/plan", "acme/drafts", "acme/shared"]);
    assert_eq!(skills[0].instructions, "Do plan well.");

    let bob = Caller {
        organisation: "acme".into(),
        user: "bob".into(),
        admin: false,
    };
    let refused = resolve_selection(&library.directory(&bob), "acme", &slugs)
        .expect_err("S3: alice's drafts are private");
    assert_eq!(
        refused,
        SkillError::Unavailable {
            slugs: vec!["drafts".into()]
        }
    );
}

#[test]
fn s2_a_directory_made_for_one_caller_does_not_look_in_another_organisation() {
    let dir = base();
    write(
        dir.path(),
        "organisations/globex/skills/plan/SKILL.md",
        &skill_md("plan", ""),
    );
    let (_, library) = load(dir.path());
    let caller = alice();
    let directory = library.directory(&caller);
    assert_eq!(directory.by_slug("globex", "plan"), None);
    assert_eq!(directory.by_id("globex", "globex/plan"), None);
}

#[test]
fn s5_s7_catalogue_and_load_skill_follow_the_agent_binding_and_the_caller() {
    let dir = base();
    let root = dir.path();
    write(
        root,
        "organisations/acme/agents/researcher.toml",
        "name = \"Researcher\"\nskills = [\"fact-check\", \"drafts\", \"plan\", \"old\"]\n",
    );
    for name in ["plan", "fact-check"] {
        write(
            root,
            &format!("organisations/acme/skills/{name}/SKILL.md"),
            &skill_md(name, ""),
        );
    }
    write(
        root,
        "organisations/acme/skills/old/SKILL.md",
        &skill_md("old", "active: false\n"),
    );
    write(
        root,
        "organisations/acme/users/bob/skills/drafts/SKILL.md",
        &skill_md("drafts", ""),
    );
    let (identity, library) = load(root);
    let caller = alice();
    let agent = identity.agent(&caller, "researcher").expect("agent");
    let bound = library.bound_ids(agent);
    assert_eq!(
        bound,
        ["acme/fact-check", "acme/drafts", "acme/plan", "acme/old"]
    );
    let directory = library.directory(&caller);
    let listed = catalogue(&directory, "acme", &bound, &[]);
    let names: Vec<&str> = listed.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        ["fact-check", "plan"],
        "S5: binding order, seen and active"
    );

    let loaded = load_skill(&directory, "acme", &listed, &json!({"name": "plan"})).expect("S7");
    assert!(loaded.content.contains("Do plan well."));
    let refused = load_skill(&directory, "acme", &listed, &json!({"name": "drafts"}))
        .expect_err("S7: not in alice's catalogue");
    assert_eq!(
        refused.to_string(),
        select_plan(|_| {})
            .expect_err("unknown")
            .to_string()
            .replace("/plan", "/drafts")
    );
}

#[test]
fn selectable_lists_what_the_composer_completes() {
    let dir = base();
    let root = dir.path();
    write(
        root,
        "organisations/acme/skills/plan/SKILL.md",
        &skill_md("plan", ""),
    );
    write(
        root,
        "organisations/acme/skills/old/SKILL.md",
        &skill_md("old", "active: false\n"),
    );
    write(
        root,
        "organisations/acme/users/bob/skills/drafts/SKILL.md",
        &skill_md("drafts", ""),
    );
    write(
        root,
        "organisations/globex/skills/globex-plan/SKILL.md",
        &skill_md("globex-plan", ""),
    );
    let (_, library) = load(root);
    let listed = library.selectable(&alice());
    assert_eq!(
        listed,
        vec![CatalogueEntry {
            name: "plan".into(),
            description: "Use for plan.".into()
        }]
    );
}

/// The error loading the skills of [`base`] with `files` added, as (path, text) pairs.
fn load_error(files: &[(&str, &str)]) -> SkillsError {
    let dir = base();
    for (path, text) in files {
        write(dir.path(), path, text);
    }
    let identity = Identity::load(dir.path()).expect("identity");
    SkillLibrary::load(&identity).expect_err("a configuration mistake")
}

#[test]
fn skill_file_mistakes_are_errors_naming_where_they_are() {
    let plan = skill_md("plan", "");
    let private = skill_md("plan", "visibility: private\n");
    // A case: its name, the files added, what the message names, and the error's kind.
    type Kind = fn(&SkillsError) -> bool;
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a [&'a str], Kind);
    let any: Kind = |_| true;
    let cases: [Case; 5] = [
        (
            "a bad field names its path and line",
            vec![(
                "organisations/acme/skills/plan/SKILL.md",
                "---\nname: plan\ndescription: x\nactive: maybe\n---\nbody\n",
            )],
            &["organisations/acme/skills/plan/SKILL.md", "line 4"],
            any,
        ),
        (
            "the folder must be named after the skill",
            vec![("organisations/acme/skills/plans/SKILL.md", &plan)],
            &["plans"],
            |e| matches!(e, SkillsError::NameNotFolder { .. }),
        ),
        (
            "an organisation skill cannot be private",
            vec![("organisations/acme/skills/plan/SKILL.md", &private)],
            &["private"],
            |e| matches!(e, SkillsError::PrivateWithoutAuthor { .. }),
        ),
        (
            "names are unique within an organisation",
            vec![
                ("organisations/acme/skills/plan/SKILL.md", &plan),
                ("organisations/acme/users/alice/skills/plan/SKILL.md", &plan),
            ],
            &["plan"],
            |e| matches!(e, SkillsError::Duplicate { name, .. } if name == "plan"),
        ),
        (
            "S2: an agent binding another organisation's skill names the agent file",
            vec![
                ("organisations/globex/skills/plan/SKILL.md", &plan),
                (
                    "organisations/acme/agents/researcher.toml",
                    "name = \"R\"\nskills = [\"plan\"]\n",
                ),
            ],
            &["agents/researcher.toml", "field `skills`"],
            any,
        ),
    ];
    for (name, files, expected, kind) in cases {
        let error = load_error(&files);
        let text = error.to_string();
        for part in expected {
            assert!(text.contains(part), "{name}: {text}");
        }
        assert!(kind(&error), "{name}: {error:?}");
    }
}

#[test]
fn built_in_local_mode_has_no_skills() {
    let identity = Identity::local();
    let library = SkillLibrary::load(&identity).expect("nothing to read");
    let caller = identity.authenticate(None).expect("local");
    assert!(library.selectable(&caller).is_empty());
}

#[test]
fn s4_a_resumed_turn_is_refused_once_its_skill_is_unpublished() {
    use portal_core::skills::{resume_selection, selection_trace};

    let dir = base();
    let path = "organisations/acme/skills/plan/SKILL.md";
    write(dir.path(), path, &skill_md("plan", ""));
    let (_, library) = load(dir.path());
    let caller = alice();
    let skills =
        resolve_selection(&library.directory(&caller), "acme", &["plan".into()]).expect("selected");
    let trace = vec![selection_trace(&skills).expect("a SKILL_SELECT entry")];
    let resumed = resume_selection(&library.directory(&caller), "acme", &trace).expect("S4");
    assert_eq!(resumed, skills);

    write(dir.path(), path, &skill_md("plan", "active: false\n"));
    let (_, library) = load(dir.path());
    let refused = resume_selection(&library.directory(&caller), "acme", &trace)
        .expect_err("S4: unpublished since");
    assert_eq!(
        refused,
        SkillError::ResumeRejected {
            skill_ids: vec!["acme/plan".into()]
        }
    );
}

#[tokio::test]
async fn s7_the_load_skill_tool_uses_the_conversations_owner_and_agent() {
    use std::sync::Arc;

    use crate::{Tool, ToolCall, ToolContext};
    use portal_store::{AsyncStorage, Owner, Storage};
    use portal_store_sqlite::SqliteStorage;

    let dir = base();
    let root = dir.path();
    write(
        root,
        "organisations/acme/agents/researcher.toml",
        "name = \"Researcher\"\nskills = [\"plan\", \"drafts\"]\n",
    );
    write(
        root,
        "organisations/acme/skills/plan/SKILL.md",
        &skill_md("plan", ""),
    );
    write(
        root,
        "organisations/acme/users/bob/skills/drafts/SKILL.md",
        &skill_md("drafts", ""),
    );
    let (identity, library) = load(root);
    let storage = SqliteStorage::in_memory().expect("storage");
    let conversation = storage
        .create_conversation(&Owner::new("acme", "alice"), "researcher")
        .expect("created");
    let context = ToolContext {
        storage: AsyncStorage::new(Arc::new(storage)),
        org_id: "acme".into(),
        conversation,
        transcript: Arc::new(portal_core::Transcript::new()),
        pictures: Arc::new(KeepsNothing),
    };
    let tool = LoadSkill {
        identity: Arc::new(identity),
        library: Arc::new(library),
    };
    let run = |name: &'static str| {
        let arguments = json!({ "name": name });
        let tool = tool.clone();
        let context = context.clone();
        async move {
            let call = ToolCall {
                id: "call_1",
                name: "load_skill",
                arguments: &arguments,
            };
            tool.run(call, &context).await
        }
    };
    let loaded = run("plan").await;
    assert!(!loaded.is_error, "{}", loaded.content);
    assert!(loaded.content.contains("Do plan well."));
    let refused = run("drafts").await;
    assert!(
        refused.is_error,
        "S7: bob's private skill is not alice's to load"
    );
    let unknown = run("nothing").await;
    assert_eq!(
        refused.content.replace("/drafts", "/x"),
        unknown.content.replace("/nothing", "/x"),
        "S3: the same words"
    );
}

#[test]
fn s1_s6_a_message_selects_its_skills_and_the_catalogue_leaves_them_out() {
    let dir = base();
    let root = dir.path();
    write(
        root,
        "organisations/acme/agents/researcher.toml",
        "name = \"Researcher\"\nskills = [\"plan\", \"fact-check\"]\n",
    );
    for name in ["plan", "fact-check"] {
        write(
            root,
            &format!("organisations/acme/skills/{name}/SKILL.md"),
            &skill_md(name, ""),
        );
    }
    let (identity, library) = load(root);
    let caller = alice();
    let agent = identity.agent(&caller, "researcher").expect("agent");
    let turn = library
        .for_message(&caller, agent, "/plan /plan compare these")
        .expect("selected");
    assert_eq!(turn.selected.len(), 1, "S1: repeated slugs count once");
    assert_eq!(turn.selected[0].id, "acme/plan");
    let names: Vec<&str> = turn.catalogue.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["fact-check"], "S6");
    assert_eq!(
        turn.trace,
        Some(TraceEntry::SkillSelect {
            skill_ids: vec!["acme/plan".into()]
        }),
        "S4"
    );
    let resumed = library
        .for_resumed_turn(&caller, agent, &[turn.trace.clone().expect("trace")])
        .expect("S4: resumes");
    assert_eq!(resumed.selected, turn.selected);
    assert_eq!(resumed.catalogue, turn.catalogue, "S5: the same list");

    let refused = library
        .for_message(&caller, agent, "/plan /nope go")
        .expect_err("S3: one rejected slug rejects all");
    assert_eq!(
        refused,
        SkillError::Unavailable {
            slugs: vec!["nope".into()]
        }
    );
    let plain = library
        .for_message(&caller, agent, "no skills here /plan")
        .expect("S1: slugs only lead");
    assert!(plain.selected.is_empty() && plain.trace.is_none());
    assert_eq!(plain.catalogue.len(), 2);
}

/// A keeper for tools that answer with no picture, which these tests run.
#[derive(Debug)]
struct KeepsNothing;

impl crate::PictureKeeper for KeepsNothing {
    fn keep(&self, _: String, _: Vec<u8>) -> crate::KeepFuture<'_> {
        Box::pin(async { Err("these tests keep no picture".to_string()) })
    }
}
