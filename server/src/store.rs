//! Conversations kept in memory for the lifetime of the process.

use std::collections::HashMap;
use std::sync::Arc;

use portal_core::Transcript;

use crate::events::TurnLog;

/// One conversation: its transcript and the event logs of its turns.
#[derive(Debug, Default)]
pub struct Conversation {
    pub transcript: Transcript,
    pub logs: HashMap<u32, Arc<TurnLog>>,
}

/// Every conversation, by id.
#[derive(Debug, Default)]
pub struct Store {
    conversations: HashMap<String, Conversation>,
    created: u64,
}

impl Store {
    /// Opens a new, empty conversation and returns its id.
    pub fn create(&mut self) -> String {
        self.created += 1;
        let id = format!("c{}", self.created);
        self.conversations
            .insert(id.clone(), Conversation::default());
        id
    }

    pub fn get(&self, id: &str) -> Option<&Conversation> {
        self.conversations.get(id)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Conversation> {
        self.conversations.get_mut(id)
    }

    /// Conversation ids, oldest first.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.conversations.keys().cloned().collect();
        ids.sort_by_key(|id| {
            id.trim_start_matches('c')
                .parse::<u64>()
                .unwrap_or(u64::MAX)
        });
        ids
    }
}
