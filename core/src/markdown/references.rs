//! Link reference definitions (`[label]: https://…`) met earlier in a reply, for the blocks after
//! them, which are parsed on their own.

use pulldown_cmark::CowStr;
use unicase::UniCase;

/// A link label as CommonMark matches it: without regard to case. (pulldown-cmark already gives
/// runs of white space in a label as one space.) pulldown-cmark's own label type, so the build
/// holds one copy of its comparison.
pub(super) type Label = UniCase<CowStr<'static>>;

pub(super) fn label(text: &str) -> Label {
    UniCase::new(text.to_string().into())
}

/// Definitions with where each starts in the reply: the first in the reply wins, as in
/// CommonMark, whatever order they are met in. Replies define few labels, so a list will do.
#[derive(Debug, Clone, Default)]
pub(super) struct References {
    definitions: Vec<(Label, usize, String)>,
}

impl References {
    /// The destination defined for `label`, if any.
    pub fn get(&self, label: &Label) -> Option<&str> {
        self.definitions
            .iter()
            .find(|(defined, ..)| defined == label)
            .map(|(.., destination)| destination.as_str())
    }

    /// Adds a definition at byte `at` of the reply unless an earlier one defines its label;
    /// returns whether the label was not defined before.
    pub fn define(&mut self, label: &Label, at: usize, destination: &str) -> bool {
        match self
            .definitions
            .iter_mut()
            .find(|(defined, ..)| defined == label)
        {
            Some(definition) => {
                if at < definition.1 {
                    *definition = (label.clone(), at, destination.to_string());
                }
                false
            }
            None => {
                self.definitions
                    .push((label.clone(), at, destination.to_string()));
                true
            }
        }
    }
}
