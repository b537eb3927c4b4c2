//! TeX turned into MathML Core by math-core, whose markup is read as XML (never as HTML) and
//! drawn again element by element, keeping only MathML Core's presentation elements and the
//! attributes that lay maths out.

use math_core::{LatexToMathML, MathCoreConfig, MathDisplay};
use wasm_bindgen::JsCast;
use web_sys::{Document, DomParser, Element, SupportedType};

const MATHML: &str = "http://www.w3.org/1998/Math/MathML";

/// The MathML Core elements a drawing may hold; any other (and its content) is left out.
const ELEMENTS: &[&str] = &[
    "math",
    "mi",
    "mn",
    "mo",
    "ms",
    "mspace",
    "mtext",
    "mrow",
    "mfrac",
    "msqrt",
    "mroot",
    "mstyle",
    "merror",
    "mpadded",
    "mphantom",
    "msub",
    "msup",
    "msubsup",
    "munder",
    "mover",
    "munderover",
    "mmultiscripts",
    "mprescripts",
    "none",
    "mtable",
    "mtr",
    "mtd",
];

/// The attributes kept: how MathML lays maths out. No `href`, `style`, `class` or event
/// handlers, whatever the TeX asked for.
const ATTRIBUTES: &[&str] = &[
    "display",
    "displaystyle",
    "scriptlevel",
    "mathvariant",
    "mathcolor",
    "mathbackground",
    "stretchy",
    "symmetric",
    "largeop",
    "movablelimits",
    "accent",
    "accentunder",
    "lspace",
    "rspace",
    "minsize",
    "maxsize",
    "form",
    "fence",
    "separator",
    "linethickness",
    "width",
    "height",
    "depth",
    "voffset",
    "columnalign",
    "rowalign",
    "columnspan",
    "rowspan",
];

thread_local! {
    /// One converter for every span: it holds no state between them.
    static CONVERTER: Option<LatexToMathML> = LatexToMathML::new(MathCoreConfig::default()).ok();
}

/// A math span's `<math>` element, or why it cannot be drawn.
pub(crate) fn mathml(document: &Document, tex: &str, display: bool) -> Result<Element, String> {
    within_bounds(tex)?;
    let mode = if display {
        MathDisplay::Block
    } else {
        MathDisplay::Inline
    };
    let converted = CONVERTER.with(|converter| match converter {
        Some(converter) => converter
            .convert_with_local_state(tex, mode)
            .map_err(|error| error.to_string()),
        None => Err("the maths converter did not start".to_string()),
    });
    converted.and_then(|result| {
        rebuilt(document, &result.mathml).ok_or_else(|| "its MathML could not be read".to_string())
    })
}

/// The longest TeX drawn as maths: a formula is rarely a kilobyte, and a reply's maths must not
/// make a page of MathML the size of a book.
const MAX_TEX: usize = 10_000;

/// How deeply groups (`{…}`, `\left…\right`, `\begin…\end`) may nest in TeX drawn as maths:
/// math-core reads them by recursion, and a wasm stack is small (10,000 nested braces overflow
/// even a native one). The markdown tree's own nesting bound is 32 too.
const MAX_DEPTH: usize = 32;

/// Why `tex` is not drawn as maths, if it is too long or nests too deeply.
fn within_bounds(tex: &str) -> Result<(), String> {
    if tex.len() > MAX_TEX {
        return Err(format!("it is longer than {MAX_TEX} bytes"));
    }
    let bytes = tex.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        let (step, change) = match rest[0] {
            b'{' => (1, 1),
            b'}' => (1, -1),
            b'\\' if rest.starts_with(b"\\left") || rest.starts_with(b"\\begin") => (5, 1),
            b'\\' if rest.starts_with(b"\\right") || rest.starts_with(b"\\end") => (4, -1),
            // An escaped brace, or any other command's first letter, is not a group.
            b'\\' => (2, 0),
            _ => (1, 0),
        };
        depth = depth.saturating_add_signed(change);
        if depth > MAX_DEPTH {
            return Err(format!("its groups nest more than {MAX_DEPTH} deep"));
        }
        at += step;
    }
    Ok(())
}

/// `markup` read as XML and drawn again in the MathML namespace.
fn rebuilt(document: &Document, markup: &str) -> Option<Element> {
    let parsed = DomParser::new()
        .ok()?
        .parse_from_string(markup, SupportedType::ApplicationXml)
        .ok()?;
    let root = parsed.document_element()?;
    if root.local_name() != "math" {
        return None;
    }
    copy(document, &root)
}

/// A copy of `from` and the elements and text under it that a drawing may hold.
fn copy(document: &Document, from: &Element) -> Option<Element> {
    let name = from.local_name();
    if !ELEMENTS.contains(&name.as_str()) {
        return None;
    }
    let to = document.create_element_ns(Some(MATHML), &name).ok()?;
    for attribute in ATTRIBUTES {
        if let Some(value) = from.get_attribute(attribute) {
            let _ = to.set_attribute(attribute, &value);
        }
    }
    let mut child = from.first_child();
    while let Some(node) = child {
        if let Some(inner) = node.dyn_ref::<Element>() {
            if let Some(copied) = copy(document, inner) {
                let _ = to.append_child(&copied);
            }
        } else if node.node_type() == web_sys::Node::TEXT_NODE {
            let text = document.create_text_node(&node.text_content().unwrap_or_default());
            let _ = to.append_child(&text);
        }
        child = node.next_sibling();
    }
    Some(to)
}
