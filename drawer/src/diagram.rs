//! Fenced code blocks of the languages a host names ([`Diagrams`]) drawn as diagrams by the
//! host's own library: once such a top-level block has settled (never while it plays out), it is
//! drawn as an empty container, `<div class="diagram" data-language="…">`, in place of the code,
//! and [`Diagrams::draw`] is called once with it, the block's source and the language. The
//! drawer never looks inside the container again, so what the host draws there stays while the
//! rest of the reply is patched, and a settled reply is still the DOM a reloaded one is (R10)
//! with the same hook. The `diagrams` feature: a host that draws none pays nothing for it.

use std::rc::Rc;

use portal_core::markdown::Block;
use web_sys::Element;

use crate::describe::Node;

/// Fenced code blocks of some languages (`mermaid`, or any a host names) drawn by the host, with
/// the library its page already loads. Once such a top-level block has settled (never while it
/// plays out), the drawer draws an empty `<div class="diagram" data-language="…">` in place of
/// the code and calls [`Diagrams::draw`] once with it; the drawer never changes what the host
/// draws inside.
#[derive(Clone)]
pub struct Diagrams {
    /// The languages drawn as diagrams: a code block's language (its info string's first word)
    /// matches one without regard to ASCII case.
    pub languages: Vec<String>,
    /// Called with the empty container, the block's source and the language as named in
    /// [`Diagrams::languages`], while the reply is drawn: it must not call back into the reply.
    pub draw: DrawDiagram,
}

/// What [`Diagrams::draw`] calls: `(container, source, language)`.
pub type DrawDiagram = Rc<dyn Fn(&Element, &str, &str)>;

impl std::fmt::Debug for Diagrams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Diagrams")
            .field("languages", &self.languages)
            .finish_non_exhaustive()
    }
}

/// A settled code block to draw as a diagram: the host's hook, the language as the host named
/// it, and the block's source.
pub(crate) struct Diagram<'a> {
    diagrams: &'a Diagrams,
    language: &'a str,
    source: String,
}

/// The diagram `block` is drawn as, if it is a code block of one of the languages `diagrams`
/// names.
pub(crate) fn find<'a>(block: &Block, diagrams: Option<&'a Diagrams>) -> Option<Diagram<'a>> {
    let (Some(diagrams), Block::Code { language, content }) = (diagrams, block) else {
        return None;
    };
    let written = language.as_deref()?;
    let language = diagrams
        .languages
        .iter()
        .find(|named| named.eq_ignore_ascii_case(written))?;
    let mut source = String::new();
    for text in content {
        source.push_str(&text.text);
    }
    Some(Diagram {
        diagrams,
        language,
        source,
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
    pub fn draw(&self, container: &Element) {
        (self.diagrams.draw)(container, &self.source, self.language);
    }
}
