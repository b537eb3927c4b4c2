//! Any text as a `SKILL.md`: reading its front matter never panics, and a file that reads has a
//! name that is a valid slug (rule S1). Seed with the `SKILL.md` files under `tests/fixtures/`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(skill) = portal_core::skills::parse_skill_file(text) {
        let name = skill.name.as_str();
        assert!(
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !name.starts_with('-'),
            "a skill read with the name {name:?}"
        );
    }
});
