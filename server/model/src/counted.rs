//! A model whose tokenizer the models file names (`tokenizer = "o200k_base"`): its tokens are
//! counted exactly for compaction's projections (rule C1), where other models use core's estimate.

use std::sync::Arc;

use portal_core::model::ModelCapabilities;
use portal_core::prompt::{PictureSource, Prompt};
use portal_core::tokens::TokenCounter;

use super::{Model, ModelCall, ModelStream};
use crate::tokens::BpeCounter;

/// `model`, counting its tokens with `counter`.
#[derive(Debug)]
pub struct Counted {
    model: Arc<dyn Model>,
    counter: BpeCounter,
}

impl Counted {
    pub fn new(model: Arc<dyn Model>, counter: BpeCounter) -> Self {
        Counted { model, counter }
    }
}

impl Model for Counted {
    fn label(&self) -> &str {
        self.model.label()
    }

    fn capabilities(&self) -> &ModelCapabilities {
        self.model.capabilities()
    }

    fn is_demo(&self) -> bool {
        self.model.is_demo()
    }

    fn tokens(&self) -> &dyn TokenCounter {
        &self.counter
    }

    fn counts_exactly(&self) -> bool {
        true
    }

    fn stream(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> ModelStream {
        self.model.stream(prompt, pictures)
    }

    fn call(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> ModelCall {
        self.model.call(prompt, pictures)
    }
}
