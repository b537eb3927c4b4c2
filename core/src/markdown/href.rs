//! Which link destinations a reply may open: http, https and mailto only.

/// How a link that may open begins, lowercase: an absolute web address or a mail address.
const SAFE_STARTS: [&str; 3] = ["http://", "https://", "mailto:"];

/// The address a link opens, or `None` when it must be drawn as text: a destination without a
/// scheme (relative or bare), or with any scheme but http, https and mailto (`javascript:`,
/// `data:`, `file:`, …), or a web address without its `//`. An email autolink
/// (`<me@example.com>`) opens as mailto.
pub(super) fn safe_href(destination: &str, email: bool) -> Option<String> {
    if email {
        return Some(["mailto:", destination].concat());
    }
    SAFE_STARTS
        .iter()
        .any(|start| {
            destination
                .get(..start.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(start))
        })
        .then(|| destination.to_string())
}

#[cfg(test)]
mod tests {
    use super::safe_href;

    #[test]
    fn only_web_and_mail_schemes_open() {
        for (destination, email, expected) in [
            (
                "https://example.com/a?b#c",
                false,
                Some("https://example.com/a?b#c"),
            ),
            ("HTTP://EXAMPLE.COM", false, Some("HTTP://EXAMPLE.COM")),
            (
                "mailto:me@example.com",
                false,
                Some("mailto:me@example.com"),
            ),
            ("me@example.com", true, Some("mailto:me@example.com")),
            ("javascript:alert(1)", false, None),
            ("JavaScript:alert(1)", false, None),
            (" javascript:alert(1)", false, None),
            ("java\tscript:alert(1)", false, None),
            ("data:text/html,<script>alert(1)</script>", false, None),
            ("vbscript:msgbox", false, None),
            ("file:///etc/passwd", false, None),
            ("https:javascript:alert(1)", false, None),
            ("https:example.com", false, None),
            ("/relative/path", false, None),
            ("#anchor", false, None),
            ("example.com", false, None),
            ("", false, None),
        ] {
            assert_eq!(
                safe_href(destination, email).as_deref(),
                expected,
                "for {destination:?}"
            );
        }
    }
}
