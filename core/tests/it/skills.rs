//! Skills, rule by rule (S1–S7), and the `SKILL.md` reader.

use std::cell::RefCell;

use portal_core::TraceEntry;
use portal_core::skills::{
    CatalogueEntry, Composed, Skill, SkillDirectory, SkillError, SkillFileError, Visibility,
    catalogue, load_skill, parse_command, parse_selection, parse_skill_file, resolve_selection,
    resume_selection, selection_trace,
};
use serde_json::json;

/// A directory over a list of skills that records the organisations it was asked about.
#[derive(Default)]
struct Directory {
    skills: Vec<Skill>,
    asked: RefCell<Vec<String>>,
}

impl SkillDirectory for Directory {
    fn by_slug(&self, organisation: &str, slug: &str) -> Option<Skill> {
        self.asked.borrow_mut().push(organisation.to_string());
        self.skills.iter().find(|s| s.name == slug).cloned()
    }

    fn by_id(&self, organisation: &str, id: &str) -> Option<Skill> {
        self.asked.borrow_mut().push(organisation.to_string());
        self.skills.iter().find(|s| s.id == id).cloned()
    }
}

fn skill(name: &str) -> Skill {
    Skill {
        id: format!("id-{name}"),
        organisation: "acme".into(),
        name: name.into(),
        description: format!("Use when {name} helps."),
        instructions: format!("# {name}\nDo it well."),
        visible: true,
        active: true,
    }
}

fn directory(skills: Vec<Skill>) -> Directory {
    Directory {
        skills,
        ..Directory::default()
    }
}

fn slugs(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// The driver for S1: the slugs and the text a message parses into.
fn check(input: &str, expected_slugs: &[&str], expected_text: &str) {
    let selection = parse_selection(input);
    assert_eq!(selection.slugs, expected_slugs, "{input:?}");
    assert_eq!(selection.text, expected_text, "{input:?}");
}

#[test]
fn s1_leading_slugs_select_skills() {
    check(
        "/market-research /fact-check compare these",
        &["market-research", "fact-check"],
        "compare these",
    );
    check("/fact-check /fact-check twice", &["fact-check"], "twice");
    check("/a1 /Bad rest", &["a1"], "/Bad rest");
    check("/-no /ok", &[], "/-no /ok");
    check(
        "compare /fact-check later",
        &[],
        "compare /fact-check later",
    );
    check("/fact-check", &["fact-check"], "");
    check("  /x\n/y  text\nmore", &["x", "y"], "text\nmore");
    check("/x, then", &[], "/x, then");
    check("/9-lives go", &["9-lives"], "go");
    check("/", &[], "/");
}

#[test]
fn s1_compact_is_a_command_not_a_skill() {
    assert!(
        matches!(parse_command("/compact keep the budget"), Composed::Compact(c) if c.instructions.as_deref() == Some("keep the budget"))
    );
    let Composed::Message(selection) = parse_command("/fact-check /compact now") else {
        panic!("a message");
    };
    assert_eq!(selection.slugs, ["fact-check"]);
    assert_eq!(selection.text, "/compact now");
    check("/compactly go", &["compactly"], "go");
}

#[test]
fn s2_slugs_resolve_within_the_callers_organisation_only() {
    let mut foreign = skill("fact-check");
    foreign.organisation = "other".into();
    let dir = directory(vec![foreign]);
    let err = resolve_selection(&dir, "acme", &slugs(&["fact-check"])).unwrap_err();
    assert_eq!(
        err,
        SkillError::Unavailable {
            slugs: slugs(&["fact-check"])
        }
    );
    assert_eq!(*dir.asked.borrow(), ["acme"]);
}

#[test]
fn s3_one_rejected_skill_rejects_the_request_and_unknown_reads_as_invisible() {
    let mut hidden = skill("secret");
    hidden.visible = false;
    let mut draft = skill("draft");
    draft.active = false;
    let dir = directory(vec![skill("fact-check"), hidden, draft]);
    let err = resolve_selection(&dir, "acme", &slugs(&["fact-check", "secret"])).unwrap_err();
    assert_eq!(
        err,
        SkillError::Unavailable {
            slugs: slugs(&["secret"])
        }
    );
    assert_eq!(
        err.to_string(),
        "the skill /secret is not available: no published skill by that name is visible to you in your organisation; check the name or ask the agent's author"
    );
    // Unknown, invisible, inactive and foreign read the same.
    let unknown = resolve_selection(&directory(vec![]), "acme", &slugs(&["secret"])).unwrap_err();
    assert_eq!(unknown.to_string(), err.to_string());
    let mut draft_secret = skill("secret");
    draft_secret.active = false;
    let inactive = resolve_selection(&directory(vec![draft_secret]), "acme", &slugs(&["secret"]));
    assert_eq!(inactive.unwrap_err().to_string(), err.to_string());
    let several = resolve_selection(&dir, "acme", &slugs(&["draft", "nope", "fact-check"]));
    assert_eq!(
        several.unwrap_err(),
        SkillError::Unavailable {
            slugs: slugs(&["draft", "nope"])
        }
    );
    let ok = resolve_selection(&dir, "acme", &slugs(&["fact-check"])).unwrap();
    assert_eq!(ok, [skill("fact-check")]);
}

#[test]
fn s4_selection_records_a_skill_select_entry_and_resume_checks_again() {
    let selected = vec![skill("fact-check"), skill("market-research")];
    let trace = vec![selection_trace(&selected).unwrap()];
    assert_eq!(
        trace[0],
        TraceEntry::SkillSelect {
            skill_ids: slugs(&["id-fact-check", "id-market-research"])
        }
    );
    assert_eq!(selection_trace(&[]), None);
    let dir = directory(selected.clone());
    assert_eq!(resume_selection(&dir, "acme", &trace).unwrap(), selected);
    // A skill made invisible since then rejects the resume.
    let mut hidden = skill("market-research");
    hidden.visible = false;
    let dir = directory(vec![skill("fact-check"), hidden]);
    let err = resume_selection(&dir, "acme", &trace).unwrap_err();
    assert_eq!(
        err,
        SkillError::ResumeRejected {
            skill_ids: slugs(&["id-market-research"])
        }
    );
    assert!(!err.to_string().contains("market-research"));
    assert_eq!(resume_selection(&dir, "acme", &[]).unwrap(), []);
}

#[test]
fn s5_catalogue_is_the_bound_skills_the_caller_sees_and_that_are_published() {
    let mut hidden = skill("hidden");
    hidden.visible = false;
    let mut draft = skill("draft");
    draft.active = false;
    let dir = directory(vec![
        skill("market-research"),
        hidden,
        draft,
        skill("unbound"),
        skill("fact-check"),
    ]);
    let bound = slugs(&[
        "id-fact-check",
        "id-hidden",
        "id-draft",
        "id-market-research",
        "id-gone",
        "id-fact-check",
    ]);
    let list = catalogue(&dir, "acme", &bound, &[]);
    assert_eq!(
        list,
        [
            CatalogueEntry {
                name: "fact-check".into(),
                description: "Use when fact-check helps.".into()
            },
            CatalogueEntry {
                name: "market-research".into(),
                description: "Use when market-research helps.".into()
            },
        ]
    );
    // A resumed turn, its selection read back from the trace, gets the same list.
    let selected = vec![skill("market-research")];
    let first = catalogue(&dir, "acme", &bound, &selected);
    let trace = vec![selection_trace(&selected).unwrap()];
    let resumed = resume_selection(&dir, "acme", &trace).unwrap();
    assert_eq!(catalogue(&dir, "acme", &bound, &resumed), first);
}

#[test]
fn s6_selected_skills_are_left_out_of_the_catalogue() {
    let dir = directory(vec![skill("market-research"), skill("fact-check")]);
    let bound = slugs(&["id-market-research", "id-fact-check"]);
    let list = catalogue(&dir, "acme", &bound, &[skill("fact-check")]);
    let names: Vec<&str> = list.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["market-research"]);
}

#[test]
fn s7_the_model_loads_a_catalogue_skill_subject_to_the_same_checks() {
    let dir = directory(vec![skill("market-research"), skill("unbound")]);
    let list = catalogue(&dir, "acme", &slugs(&["id-market-research"]), &[]);
    let loaded = load_skill(&dir, "acme", &list, &json!({"name": "market-research"})).unwrap();
    assert_eq!(loaded.skill, skill("market-research"));
    assert_eq!(
        loaded.content,
        "<skill name=\"market-research\">\n# market-research\nDo it well.\n</skill>"
    );
    // Not in the catalogue: the same words as an unknown skill.
    let err = load_skill(&dir, "acme", &list, &json!({"name": "unbound"})).unwrap_err();
    let unknown = resolve_selection(&directory(vec![]), "acme", &slugs(&["unbound"])).unwrap_err();
    assert_eq!(err.to_string(), unknown.to_string());
    // Made invisible since the catalogue was built: refused.
    let mut hidden = skill("market-research");
    hidden.visible = false;
    let err = load_skill(
        &directory(vec![hidden]),
        "acme",
        &list,
        &json!({"name": "market-research"}),
    );
    assert_eq!(
        err.unwrap_err(),
        SkillError::Unavailable {
            slugs: slugs(&["market-research"])
        }
    );
    assert_eq!(
        load_skill(&dir, "acme", &list, &json!({"skill": 1})),
        Err(SkillError::BadArguments)
    );
}

#[test]
fn skill_file_reads_front_matter_and_body() {
    let file = parse_skill_file(
        "---\nname: market-research\ndescription: Use when the user asks about a market. # why\nlicense: MIT\nmetadata:\n  owner: team\nvisibility: organisation\nactive: true\n---\n\n# Market research\n\nSteps.\n",
    )
    .unwrap();
    assert_eq!(file.name, "market-research");
    assert_eq!(file.description, "Use when the user asks about a market.");
    assert_eq!(file.visibility, Some(Visibility::Organisation));
    assert_eq!(file.active, Some(true));
    assert_eq!(file.body, "# Market research\n\nSteps.");

    let quoted = parse_skill_file(
        "---\r\nname: 'fact-check'\r\ndescription: \"Check: \\\"facts\\\"\" # c\r\n---\r\nBody",
    )
    .unwrap();
    assert_eq!(quoted.description, "Check: \"facts\"");
    assert_eq!((quoted.visibility, quoted.active), (None, None));
    let folded =
        parse_skill_file("---\nname: x\ndescription: >\n  Use when\n  folding.\n---\n").unwrap();
    assert_eq!(folded.description, "Use when folding.");
    let plain =
        parse_skill_file("---\nname: x\ndescription: Use when\n  it goes on.\n---\n").unwrap();
    assert_eq!(plain.description, "Use when it goes on.");
}

#[test]
fn skill_file_errors_say_what_is_wrong() {
    let cases: [(&str, SkillFileError); 9] = [
        ("name: x\n", SkillFileError::NoFrontMatter),
        ("---\nname: x\n", SkillFileError::Unclosed),
        (
            "---\ndescription: d\n---\n",
            SkillFileError::Missing { key: "name" },
        ),
        (
            "---\nname: x\n---\n",
            SkillFileError::Missing { key: "description" },
        ),
        (
            "---\nname: Market\ndescription: d\n---\n",
            SkillFileError::BadName {
                name: "Market".into(),
            },
        ),
        (
            "---\nname: compact\ndescription: d\n---\n",
            SkillFileError::BadName {
                name: "compact".into(),
            },
        ),
        (
            "---\nname: x\nname: y\ndescription: d\n---\n",
            SkillFileError::Duplicate {
                line: 3,
                key: "name".into(),
            },
        ),
        (
            "---\nname: x\njust words\n---\n",
            SkillFileError::NotKeyValue {
                line: 3,
                text: "just words".into(),
            },
        ),
        (
            "---\nname: x\ndescription: \"open\n---\n",
            SkillFileError::UnclosedQuote {
                line: 3,
                key: "description".into(),
            },
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(parse_skill_file(input), Err(expected), "{input:?}");
    }
    let bad = parse_skill_file("---\nname: x\ndescription: d\nactive: yes\n---\n").unwrap_err();
    assert_eq!(
        bad.to_string(),
        "line 4: `active: yes` is not allowed; write `true` or `false`"
    );
}
