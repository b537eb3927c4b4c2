//! Web pages as text: pages against the markdown they become, and hostile pages that must still
//! be read.

use expect_test::{Expect, expect};
use portal_knowledge::html::{MOST_DEPTH, to_text};

fn check(html: &str, expected: Expect) {
    expected.assert_eq(&to_text(html));
}

#[test]
fn headings_lists_and_entities_become_markdown() {
    check(
        r#"<!doctype html><html><head><title>Guide</title><style>p { color: red }</style></head>
        <body><nav><a href="/">Home</a> | <a href="/docs">Docs</a></nav>
        <h1>Install &amp; run</h1><p>Fish &lt;3 chips&nbsp;&mdash; &#x263A;.</p>
        <h2>On Debian</h2><ul><li>apt-get <code>update</code></li><li>reboot</li></ul>
        <script>document.write("<h1>not text</h1>")</script>
        <table><tr><th>Key</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
        </body></html>"#,
        expect![[r#"
            # Install & run

            Fish <3 chips — ☺.

            ## On Debian

            *   apt-get `update`
            *   reboot

            | Key | Value |
            | --- | ----- |
            | a   | 1     |"#]],
    );
}

#[test]
fn text_without_tags_is_its_text() {
    check(
        "just words, 1 < 2 &amp; done",
        expect!["just words, 1 < 2 & done"],
    );
    check("", expect![""]);
}

#[test]
fn a_page_nested_too_deep_is_read_flat_with_its_headings_and_entities() {
    let depth = MOST_DEPTH + 1;
    let html = format!(
        "<nav>menu</nav><h2>Deep &amp; down</h2>{}<p>first</p><span>inline</span> text<div>second</div>{}<script>x()</script>",
        "<div><section>".repeat(depth),
        "</section></div>".repeat(depth),
    );
    check(
        &html,
        expect![[r#"
            ## Deep & down

            first

            inline text

            second"#]],
    );
}

#[test]
fn a_hundred_thousand_nested_divs_are_read() {
    let html = format!(
        "{}deep{}",
        "<div>".repeat(100_000),
        "</div>".repeat(100_000)
    );
    check(&html, expect!["deep"]);
    let unclosed = format!("{}<b>deep", "<span><i>".repeat(100_000));
    check(&unclosed, expect!["deep"]);
}

#[test]
fn five_megabytes_of_text_are_read() {
    let text = "Words &amp; more words. ".repeat((5 << 20) / 24);
    let read = to_text(&format!("<p>{text}</p>"));
    assert!(
        read.starts_with("Words & more words. Words"),
        "{}",
        &read[..40]
    );
    assert!(read.len() > 4 << 20);
}
