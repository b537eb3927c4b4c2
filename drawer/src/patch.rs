//! Drawing [`Node`] descriptions into the page with DOM calls and text nodes only, and patching a
//! drawing into the next frame's: a growing block changes only its last text and pieces, so a
//! frame costs a few DOM calls, not the block. Resolving words are `.w` pieces drawn in the step
//! of their resolving their age has reached (core's `pacing::motion`, R7).

use portal_core::pacing::motion::{RESOLVE_STEPS, resolving_step};
use wasm_bindgen::JsCast;
use web_sys::{CharacterData, Document, Element};

use crate::describe::Node;
use crate::maths;
use crate::page::element;

/// How many top-level blocks share a `<div class="blocks">` group. The browser lays out every
/// child of a changed element again (from its cache), so a live reply's frame would otherwise
/// cost more the longer the reply; style.css keeps the spacing as without the groups.
pub const BLOCKS_PER_GROUP: usize = 32;

/// The group element block `index` belongs in, made when it is the first of its group.
pub fn group(
    document: &Document,
    body: &Element,
    groups: &mut Vec<Element>,
    index: usize,
) -> Element {
    let number = index / BLOCKS_PER_GROUP;
    while groups.len() <= number {
        let group = element(document, "div");
        group.set_class_name("blocks");
        let _ = body.append_child(&group);
        groups.push(group);
    }
    groups[number].clone()
}

/// Draws descriptions into the page at `now`, and keeps each resolving word it draws.
pub struct Drawer<'a> {
    pub document: &'a Document,
    pub now: f64,
    /// The resolving words drawn (`.w` pieces), each with when it was revealed and its step:
    /// the live text moves them on as they age, frame by frame.
    pub words: &'a mut Vec<(Element, f64, u8)>,
    /// Text that grew, appended by [`Drawer::finish`] once everything else is changed. Chromium
    /// shapes a paragraph again on the spot when text is appended to a page with no other change
    /// waiting, and again at layout once the frame's pieces moved; appended last, it is shaped
    /// once, at layout.
    pub appended: Vec<(web_sys::Node, String)>,
}

impl<'a> Drawer<'a> {
    /// A drawer that draws into `document` at `now`, keeping the resolving words it draws in
    /// `words`.
    pub fn new(document: &'a Document, now: f64, words: &'a mut Vec<(Element, f64, u8)>) -> Self {
        Drawer {
            document,
            now,
            words,
            appended: Vec::new(),
        }
    }

    /// Appends the text that grew.
    pub fn finish(self) {
        for (node, more) in self.appended {
            let _ = node.unchecked_ref::<CharacterData>().append_data(&more);
        }
    }

    /// Draws a description; resolving pieces are drawn as far resolved as they are old.
    pub fn render(&mut self, node: &Node) -> web_sys::Node {
        match node {
            Node::Text(text) => self.document.create_text_node(text).into(),
            Node::Piece { text, revealed_ms } => {
                let word = element(self.document, "span");
                let step = resolving_step(self.now - revealed_ms);
                word.set_class_name(resolving_class(step));
                word.set_text_content(Some(text));
                self.words.push((word.clone(), *revealed_ms, step));
                word.into()
            }
            Node::Math { tex, display } => maths::draw(self.document, tex, *display),
            Node::Element {
                tag,
                attributes,
                children,
            } => {
                let drawn = element(self.document, tag);
                for (name, value) in attributes {
                    let _ = drawn.set_attribute(name, value);
                }
                for child in children {
                    let _ = drawn.append_child(&self.render(child));
                }
                drawn.into()
            }
        }
    }

    /// Changes `drawn`, drawn from `old`, into a drawing of `new`, keeping every node that did
    /// not change; returns the node that replaced `drawn` if it had to be replaced.
    pub fn patch(
        &mut self,
        drawn: &web_sys::Node,
        old: &Node,
        new: &Node,
    ) -> Option<web_sys::Node> {
        if !old.same_kind(new) {
            let fresh = self.render(new);
            if let Some(parent) = drawn.parent_node() {
                let _ = parent.replace_child(&fresh, drawn);
            }
            return Some(fresh);
        }
        match (old, new) {
            (Node::Text(was), Node::Text(is)) => {
                // Text that grew is appended to, after the frame's other changes (see
                // `Drawer::appended`). A text description is always drawn as a text node.
                match is.strip_prefix(was.as_str()) {
                    Some("") => {}
                    Some(more) => self.appended.push((drawn.clone(), more.to_string())),
                    None => drawn.set_node_value(Some(is)),
                }
            }
            (Node::Piece { text: was, .. }, Node::Piece { text: is, .. }) if was != is => {
                drawn.set_text_content(Some(is));
            }
            (
                Node::Element {
                    children: was_children,
                    ..
                },
                Node::Element { children, .. },
            ) => self.patch_children(drawn, was_children, children),
            // A piece whose text is the same needs nothing; `same_kind` pairs nodes of one kind.
            _ => {}
        }
        None
    }

    /// Changes the children of `parent`, drawn from `old`, into drawings of `new`. A piece is
    /// kept by when it was revealed, so as the text before it grows and the pieces before it
    /// resolve into it, each frame adds the newest piece and removes the resolved ones rather
    /// than drawing every piece again.
    fn patch_children(&mut self, parent: &web_sys::Node, old: &[Node], new: &[Node]) {
        // The live caret may stand after the drawn children; it stays where it is.
        let caret = parent.last_child().filter(is_caret);
        let mut olds = old.iter().peekable();
        let mut current = parent.first_child();
        for is in new {
            // Pieces before the one that is kept have resolved into the text before them.
            if let Node::Piece { revealed_ms, .. } = is
                && olds
                    .clone()
                    .any(|was| was.is_piece_revealed_at(*revealed_ms))
            {
                while olds
                    .next_if(|was| !was.is_piece_revealed_at(*revealed_ms))
                    .is_some()
                {
                    if let Some(node) = current.take() {
                        current = node.next_sibling();
                        let _ = parent.remove_child(&node);
                    }
                }
            }
            match (olds.peek(), current.clone()) {
                (Some(was), Some(node)) if was.same_kind(is) => {
                    current = node.next_sibling();
                    if *was != is {
                        self.patch(&node, was, is);
                    }
                    olds.next();
                }
                _ => {
                    let _ =
                        parent.insert_before(&self.render(is), current.as_ref().or(caret.as_ref()));
                }
            }
        }
        while let Some(node) = current {
            current = node.next_sibling();
            if Some(&node) != caret.as_ref() {
                let _ = parent.remove_child(&node);
            }
        }
    }
}

fn is_caret(node: &web_sys::Node) -> bool {
    node.dyn_ref::<Element>()
        .is_some_and(|e| e.class_list().contains("caret"))
}

/// The classes of a resolving word at `step` (style.css draws each step's blur and ink); a
/// resolved word is a plain `.w`.
pub fn resolving_class(step: u8) -> &'static str {
    const CLASSES: [&str; RESOLVE_STEPS as usize + 1] =
        ["w r0", "w r1", "w r2", "w r3", "w r4", "w r5", "w"];
    CLASSES[usize::from(step.min(RESOLVE_STEPS))]
}

/// Where the caret goes in a drawn block: after its last text, inside the innermost element that
/// holds it.
pub fn caret_home(block: &Element) -> Element {
    let mut home = block.clone();
    while let Some(last) = home.last_element_child() {
        let holds_text = matches!(
            last.tag_name().as_str(),
            "P" | "LI"
                | "BLOCKQUOTE"
                | "UL"
                | "OL"
                | "PRE"
                | "CODE"
                | "TABLE"
                | "THEAD"
                | "TBODY"
                | "TR"
                | "TH"
                | "TD"
                | "DIV"
                | "H1"
                | "H2"
                | "H3"
                | "H4"
                | "H5"
                | "H6"
        );
        if !holds_text || last.class_list().contains("code-head") {
            break;
        }
        home = last;
    }
    home
}
