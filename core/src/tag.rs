//! The XML-style tags the prompt wraps data in (`<document name="…">`, `<passage …>`): a value
//! written into an attribute ([`attribute`]) and read back out of a tag ([`value`]), so every
//! tag escapes and unescapes alike.

/// Escapes the characters that would end an attribute value or open a tag.
pub fn attribute(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

/// The value of `name="…"` in `tag`, unescaped as [`attribute`] escaped it.
pub fn value(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = start + tag[start..].find('"')?;
    Some(
        tag[start..end]
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&amp;", "&"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_written_is_read_back_whatever_it_holds() {
        for written in ["plain", "a \"quoted\" <b> & &amp;", ""] {
            let tag = format!("<passage reference=\"r\" name=\"{}\">", attribute(written));
            assert_eq!(value(&tag, "name").as_deref(), Some(written));
        }
        assert_eq!(value("<x name=\"a\">", "other"), None);
    }
}
