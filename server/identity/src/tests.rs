use std::fs;
use std::path::Path;

use super::*;

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

const ALICE: &str = "alice-token";
const BOB: &str = "bob-token";

fn user_file(name: &str, token: &str) -> String {
    format!(
        "name = \"{name}\"\ntoken_sha256 = \"{}\"\n",
        TokenDigest::of(token).to_hex()
    )
}

/// Two organisations with a user each; acme has an agent.
fn two_organisations() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "organisations/acme/organisation.toml",
        "name = \"Acme\"\n",
    );
    write(
        root,
        "organisations/acme/users/alice/user.toml",
        &user_file("Alice", ALICE),
    );
    write(
        root,
        "organisations/acme/agents/researcher.toml",
        "name = \"Researcher\"\ninstructions = \"\"\"\nCite sources.\n\"\"\"\nmodel = \"gpt-4o\"\neffort = \"high\"\nskills = [\"market-research\", \"fact-check\"]\n",
    );
    write(
        root,
        "organisations/globex/organisation.toml",
        "name = \"Globex\"\n",
    );
    write(
        root,
        "organisations/globex/users/bob/user.toml",
        &user_file("Bob", BOB),
    );
    dir
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

#[test]
fn built_in_local_mode_is_one_organisation_one_user_no_login() {
    let identity = Identity::local();
    assert_eq!(identity.mode(), Mode::Local);
    assert_eq!(identity.organisations().count(), 1);
    let caller = identity.authenticate(None).expect("no login in local mode");
    assert_eq!(
        caller,
        Caller {
            organisation: LOCAL_ORGANISATION.into(),
            user: LOCAL_USER.into(),
            admin: true,
        }
    );
    let agents = identity.agents(&caller);
    assert_eq!(agents.len(), 1);
    assert_eq!(agents[0].id, DEFAULT_AGENT);
    assert_eq!(agents[0].model, DEFAULT_MODEL);
}

#[test]
fn configured_organisation_without_users_is_local_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "organisations/studio/organisation.toml",
        "name = \"Studio\"\n",
    );
    let identity = Identity::load(dir.path()).expect("loads");
    assert_eq!(identity.mode(), Mode::Local);
    let caller = identity
        .authenticate(Some("Bearer anything"))
        .expect("local");
    assert_eq!(caller.organisation, "studio");
    assert_eq!(caller.user, LOCAL_USER);
    assert_eq!(identity.agents(&caller)[0].id, DEFAULT_AGENT);
}

#[test]
fn agents_are_read_with_their_defaults_and_skills_in_binding_order() {
    let dir = two_organisations();
    let identity = Identity::load(dir.path()).expect("loads");
    assert_eq!(identity.mode(), Mode::Users);
    let alice = identity.authenticate(Some(&bearer(ALICE))).expect("alice");
    let agent = identity.agent(&alice, "researcher").expect("acme's agent");
    assert_eq!(
        agent,
        &Agent {
            id: "researcher".into(),
            organisation: "acme".into(),
            name: "Researcher".into(),
            instructions: "Cite sources.".into(),
            model: "gpt-4o".into(),
            effort: Effort::High,
            skills: vec!["market-research".into(), "fact-check".into()],
            tools: Vec::new(),
            mcp: Default::default(),
            knowledge: Vec::new(),
            description: String::new(),
            examples: Vec::new(),
        }
    );
    let bob = identity.authenticate(Some(&bearer(BOB))).expect("bob");
    assert_eq!(bob.organisation, "globex");
    assert!(identity.agent(&bob, "researcher").is_none());
    assert_eq!(identity.agents(&bob)[0].id, DEFAULT_AGENT);
}

#[test]
fn an_agent_is_offered_the_tools_its_file_lists_and_the_default_agent_the_demo_tools() {
    let dir = two_organisations();
    write(
        dir.path(),
        "organisations/acme/agents/publisher.toml",
        "name = \"Publisher\"\ntools = [\"publish_note\"]\n",
    );
    let identity = Identity::load(dir.path()).expect("loads");
    let alice = identity.authenticate(Some(&bearer(ALICE))).expect("alice");
    let tools = |agent: &Agent| agent.tools.clone();
    let publisher = identity.agent(&alice, "publisher").expect("publisher");
    assert_eq!(tools(publisher), ["publish_note"]);
    let researcher = identity.agent(&alice, "researcher").expect("researcher");
    assert!(
        tools(researcher).is_empty(),
        "a file without `tools` lists none"
    );
    let bob = identity.authenticate(Some(&bearer(BOB))).expect("bob");
    assert_eq!(
        tools(&identity.agents(&bob)[0]),
        ["count_characters", "publish_note", "ask_user"],
        "globex has no agent files: its default agent keeps the demo tools"
    );
    let local = Identity::local();
    let caller = local.authenticate(None).expect("local");
    assert_eq!(
        tools(&local.agents(&caller)[0]),
        ["count_characters", "publish_note", "ask_user"]
    );
}

#[test]
fn bearer_tokens_find_their_user_and_others_are_refused() {
    let dir = two_organisations();
    let identity = Identity::load(dir.path()).expect("loads");
    assert_eq!(identity.authenticate(None), Err(AuthError::Missing));
    assert_eq!(
        identity.authenticate(Some(ALICE)),
        Err(AuthError::Malformed)
    );
    assert_eq!(
        identity.authenticate(Some("Basic YWxpY2U=")),
        Err(AuthError::Malformed)
    );
    assert_eq!(
        identity.authenticate(Some("Bearer wrong")),
        Err(AuthError::Unknown)
    );
    let caller = identity
        .authenticate(Some(&format!("bearer  {ALICE} ")))
        .expect("scheme is case-insensitive");
    assert_eq!(caller.user, "alice");
}

#[test]
fn a_bad_field_names_the_file_and_the_field() {
    let dir = two_organisations();
    write(
        dir.path(),
        "organisations/acme/users/alice/user.toml",
        "name = \"Alice\"\ntoken_sha256 = \"abc\"\n",
    );
    let error = Identity::load(dir.path()).expect_err("bad digest");
    let text = error.to_string();
    assert!(matches!(
        error,
        ConfigError::Field {
            field: "token_sha256",
            ..
        }
    ));
    assert!(
        text.contains("organisations/acme/users/alice/user.toml"),
        "{text}"
    );
    assert!(text.contains("token_sha256"), "{text}");
}

#[test]
fn an_unknown_or_missing_key_names_the_file_and_the_key() {
    let dir = two_organisations();
    write(
        dir.path(),
        "organisations/acme/agents/researcher.toml",
        "name = \"R\"\nmodle = \"x\"\n",
    );
    let text = Identity::load(dir.path()).expect_err("typo").to_string();
    assert!(text.contains("agents/researcher.toml"), "{text}");
    assert!(text.contains("modle"), "{text}");

    write(
        dir.path(),
        "organisations/acme/agents/researcher.toml",
        "model = \"x\"\n",
    );
    let text = Identity::load(dir.path()).expect_err("no name").to_string();
    assert!(text.contains("agents/researcher.toml"), "{text}");
    assert!(text.contains("name"), "{text}");
}

#[test]
fn an_empty_name_and_a_bad_skill_binding_are_field_errors() {
    let dir = two_organisations();
    write(
        dir.path(),
        "organisations/acme/organisation.toml",
        "name = \" \"\n",
    );
    let error = Identity::load(dir.path()).expect_err("empty name");
    assert!(
        matches!(error, ConfigError::Field { field: "name", .. }),
        "{error}"
    );

    let dir = two_organisations();
    write(
        dir.path(),
        "organisations/acme/agents/researcher.toml",
        "name = \"R\"\nskills = [\"Market Research\"]\n",
    );
    let error = Identity::load(dir.path()).expect_err("bad slug");
    assert!(
        matches!(
            error,
            ConfigError::Field {
                field: "skills",
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn folder_names_must_be_ids() {
    let dir = two_organisations();
    write(
        dir.path(),
        "organisations/Big Co/organisation.toml",
        "name = \"B\"\n",
    );
    let error = Identity::load(dir.path()).expect_err("bad id");
    assert!(matches!(error, ConfigError::BadId { ref name, .. } if name == "Big Co"));
}

#[test]
fn two_users_may_not_share_a_token() {
    let dir = two_organisations();
    write(
        dir.path(),
        "organisations/globex/users/bob/user.toml",
        &user_file("Bob", ALICE),
    );
    let error = Identity::load(dir.path()).expect_err("shared token");
    assert!(matches!(error, ConfigError::SharedToken { .. }), "{error}");
}

#[test]
fn several_organisations_without_users_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "organisations/a/organisation.toml",
        "name = \"A\"\n",
    );
    write(
        dir.path(),
        "organisations/b/organisation.toml",
        "name = \"B\"\n",
    );
    let error = Identity::load(dir.path()).expect_err("ambiguous local mode");
    assert!(matches!(
        error,
        ConfigError::LocalModeNeedsOneOrganisation { count: 2, .. }
    ));
}

#[test]
fn a_directory_without_organisations_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let error = Identity::load(dir.path()).expect_err("empty");
    assert!(matches!(error, ConfigError::NoOrganisation { .. }));
    assert!(error.to_string().contains("organisation.toml"));
}

#[test]
fn usage_report_readers_are_the_users_whose_role_is_admin() {
    let dir = two_organisations();
    write(
        dir.path(),
        "organisations/acme/users/alice/user.toml",
        &format!("{}role = \"admin\"\n", user_file("Alice", ALICE)),
    );
    write(
        dir.path(),
        "organisations/acme/users/dave/user.toml",
        &format!("{}role = \"member\"\n", user_file("Dave", "dave-token")),
    );
    let identity = Identity::load(dir.path()).expect("loads");
    assert!(identity.authenticate(Some(&bearer(ALICE))).unwrap().admin);
    assert!(
        !identity
            .authenticate(Some(&bearer("dave-token")))
            .unwrap()
            .admin
    );
    assert!(!identity.authenticate(Some(&bearer(BOB))).unwrap().admin);
    assert!(Identity::local().authenticate(None).unwrap().admin);
}

#[test]
fn an_unknown_role_names_the_file_and_the_roles() {
    let dir = two_organisations();
    write(
        dir.path(),
        "organisations/acme/users/alice/user.toml",
        &format!("{}role = \"owner\"\n", user_file("Alice", ALICE)),
    );
    let error = Identity::load(dir.path())
        .expect_err("an unknown role")
        .to_string();
    assert!(error.contains("alice/user.toml"), "{error}");
    assert!(error.contains("`owner`"), "{error}");
    assert!(error.contains("\"member\" or \"admin\""), "{error}");
}
