//! `load_skill` behind the turn loop's tool seam (rule S7): the conversation's owner and agent
//! give the caller and the catalogue, and core's `load_skill` makes the same checks as a
//! selection, with the same words.

use std::sync::Arc;

use portal_core::skills::{self, SkillError, catalogue, resume_selection};
use portal_core::tools::{self, ToolDefinition};

use super::SkillLibrary;
use crate::{Tool, ToolCall, ToolContext, ToolFuture, ToolOutput};
use portal_identity::Identity;

/// Loads a catalogue skill's instructions for the model.
#[derive(Debug, Clone)]
pub struct LoadSkill {
    pub identity: Arc<Identity>,
    pub library: Arc<SkillLibrary>,
}

impl Tool for LoadSkill {
    fn definition(&self) -> ToolDefinition {
        tools::load_skill()
    }

    fn run<'a>(&'a self, call: ToolCall<'a>, context: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            match self.load(call, context).await {
                Ok(content) => ToolOutput::ok(content),
                Err(error) => ToolOutput::error(error),
            }
        })
    }
}

impl LoadSkill {
    async fn load(&self, call: ToolCall<'_>, context: &ToolContext) -> Result<String, String> {
        let info = context
            .storage
            .conversation(&context.org_id, &context.conversation)
            .await
            .map_err(|error| format!("{}: {error}", tools::LOAD_SKILL))?;
        let caller = self
            .identity
            .caller(&info.owner.org_id, &info.owner.user_id);
        let unavailable = || {
            let name = call
                .arguments
                .get("name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            SkillError::Unavailable {
                slugs: vec![name.to_string()],
            }
            .to_string()
        };
        let agent = self
            .identity
            .agent(&caller, &info.agent_id)
            .ok_or_else(unavailable)?;
        let directory = self.library.directory(&caller);
        let trace = context
            .transcript
            .turns
            .last()
            .map(|turn| turn.trace.as_slice())
            .unwrap_or_default();
        let selected =
            resume_selection(&directory, &caller.organisation, trace).unwrap_or_default();
        let listed = catalogue(
            &directory,
            &caller.organisation,
            &self.library.bound_ids(agent),
            &selected,
        );
        skills::load_skill(&directory, &caller.organisation, &listed, call.arguments)
            .map(|loaded| loaded.content)
            .map_err(|error| error.to_string())
    }
}
