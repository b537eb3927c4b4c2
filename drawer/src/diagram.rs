//! Fenced code blocks of the languages a host names ([`Diagrams`]) drawn as diagrams by the
//! host's own library: once such a top-level block has settled (never while it plays out), it is
//! drawn as an empty container, `<div class="diagram" data-language="…">`, in place of the code,
//! and [`Diagrams::draw`] is called once with it, the block's source and the language. The
//! drawer never looks inside the container again, so what the host draws there stays while the
//! rest of the reply is patched, and a settled reply is still the DOM a reloaded one is (R10)
//! with the same hook.

use portal_core::markdown::Block;
use web_sys::Element;

use crate::Diagrams;
use crate::describe::Node;

/// A settled code block to draw as a diagram: the language as the host named it, and its source.
pub(crate) struct Diagram<'a> {
    pub language: &'a str,
    pub source: String,
}

/// The diagram `block` is drawn as, if it is a code block of one of the languages `diagrams`
/// names (compared without regard to ASCII case).
pub(crate) fn find<'a>(block: &Block, diagrams: Option<&'a Diagrams>) -> Option<Diagram<'a>> {
    let (Some(diagrams), Block::Code { language, content }) = (diagrams, block) else {
        return None;
    };
    let written = language.as_deref()?;
    let language = diagrams
        .languages
        .iter()
        .find(|named| named.eq_ignore_ascii_case(written))?;
    Some(Diagram {
        language,
        source: content.iter().map(|text| text.text.as_str()).collect(),
    })
}

impl Diagram<'_> {
    /// The container's description: empty, for the host to draw into. Its one attribute beside
    /// the class is the language as the host named it, never the reply's text.
    pub fn node(&self) -> Node {
        Node::Element {
            tag: "div",
            attributes: vec![
                ("class", "diagram".to_string()),
                ("data-language", self.language.to_string()),
            ],
            children: Vec::new(),
        }
    }

    /// Hands the drawn container to the host.
    pub fn draw(&self, diagrams: &Diagrams, container: &Element) {
        (diagrams.draw)(container, &self.source, self.language);
    }
}
