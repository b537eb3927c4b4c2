//! Link reference definitions (`[label]: https://…`) met earlier in a reply, for the blocks after
//! them, which are parsed on their own.

use std::collections::BTreeMap;

/// Definitions by normalised label; the first definition of a label wins, as in CommonMark.
#[derive(Debug, Clone, Default)]
pub(super) struct References {
    destinations: BTreeMap<String, String>,
}

impl References {
    /// The destination defined for `label`, if any.
    pub fn get(&self, label: &str) -> Option<&str> {
        self.destinations.get(&normalise(label)).map(String::as_str)
    }

    /// Adds a definition unless the label is defined already; returns whether it was added.
    pub fn define(&mut self, label: &str, destination: &str) -> bool {
        let label = normalise(label);
        if self.destinations.contains_key(&label) {
            return false;
        }
        self.destinations.insert(label, destination.to_string());
        true
    }
}

/// A label as CommonMark matches it: case folded, with runs of white space as one space.
pub(super) fn normalise(label: &str) -> String {
    label
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}
