//! The versions of one message (Regenerate, an edited latest message): which turns are versions
//! of one another is core's `display::versions`; this keeps which version of each the person is
//! looking at. The transcript keeps every turn; the page shows one version at a time.

use leptos::prelude::*;
use portal_core::display::{Version, versions};

use crate::turn_view::TurnView;

/// Each turn's version, and the versions the person chose to look at.
#[derive(Debug, Clone, Copy)]
pub struct Versions {
    /// Each turn's number and version, in order.
    of: Memo<Vec<(u32, Version)>>,
    /// The version looked at of each message answered more than once, as (its first turn, the
    /// version's number), where the person chose one; the newest is shown otherwise.
    chosen: RwSignal<Vec<(u32, usize)>>,
}

impl Versions {
    /// The versions of `turns`.
    pub fn new(turns: RwSignal<Vec<TurnView>>) -> Self {
        let of = Memo::new(move |_| {
            turns.with(|turns| {
                let links: Vec<(u32, Option<u32>)> =
                    turns.iter().map(|t| (t.index, t.again)).collect();
                links.iter().map(|l| l.0).zip(versions(&links)).collect()
            })
        });
        Versions {
            of,
            chosen: RwSignal::new(Vec::new()),
        }
    }

    /// Turn `index`'s version, when its message was answered more than once.
    pub fn of(&self, index: u32) -> Option<Version> {
        self.of
            .with(|of| of.iter().find(|(turn, _)| *turn == index).map(|(_, v)| *v))
            .filter(|v| v.of > 1)
    }

    /// Whether turn `index` is drawn: the only version, or the one looked at.
    pub fn shown(&self, index: u32) -> bool {
        self.of(index).is_none_or(|v| {
            let chosen = self
                .chosen
                .with(|c| c.iter().find(|(first, _)| *first == v.first).map(|c| c.1));
            chosen.unwrap_or(v.of) == v.number
        })
    }

    /// Looks at the version before (`-1`) or after (`1`) turn `index`'s; returns the turn now
    /// shown.
    pub fn step(&self, index: u32, by: isize) -> Option<u32> {
        let v = self.of(index)?;
        let number = v.number.saturating_add_signed(by).clamp(1, v.of);
        self.forget(v.first);
        self.chosen.update(|c| c.push((v.first, number)));
        self.of.with_untracked(|of| {
            of.iter()
                .find(|(_, o)| o.first == v.first && o.number == number)
                .map(|(turn, _)| *turn)
        })
    }

    /// Shows the newest version of the message turn `index` answers: a new one was just sent.
    pub fn show_newest(&self, index: u32) {
        if let Some(v) = self.of(index) {
            self.forget(v.first);
        }
    }

    fn forget(&self, first: u32) {
        self.chosen.update(|c| c.retain(|(f, _)| *f != first));
    }
}
