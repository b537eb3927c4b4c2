//! Maths drawn as MathML, which browsers draw themselves (MathML Core), by `mathml.rs` with
//! math-core. TeX math-core cannot read, or a build without the `maths` feature, draws the TeX
//! as its text, styled as code.

use web_sys::Document;

use crate::page::element;

/// A math span's drawing: a `<math>` element, `display="block"` for display maths, or the TeX
/// as code when it cannot be drawn as maths (its `title` says why).
pub(crate) fn draw(document: &Document, tex: &str, display: bool) -> web_sys::Node {
    match mathml(document, tex, display) {
        Ok(math) => math.into(),
        Err(why) => {
            let code = element(document, "code");
            code.set_class_name(if display { "math display" } else { "math" });
            let _ = code.set_attribute("title", &format!("Not drawn as maths: {why}"));
            code.set_text_content(Some(tex));
            code.into()
        }
    }
}

#[cfg(feature = "maths")]
use crate::mathml::mathml;

#[cfg(not(feature = "maths"))]
fn mathml(_: &Document, _: &str, _: bool) -> Result<web_sys::Element, String> {
    Err("this build of the drawer has no maths".to_string())
}
