//! The caps on a reply's tool calls, checked in one place for both adapters' readers: how many
//! calls one reply may make, how long one call's arguments may grow, and how long all of them
//! together.

use super::{AnswerLimits, EndpointError};

/// A reply's tool-call caps and the arguments its calls have written so far.
#[derive(Debug)]
pub struct CallCaps {
    /// The most calls one reply may make.
    max_calls: usize,
    /// The longest arguments of one call, in bytes.
    max_arguments: usize,
    /// The most arguments the reply's calls may write together, in bytes.
    max_total_arguments: usize,
    /// The arguments the reply's calls have written so far, in bytes.
    total_arguments: usize,
}

impl CallCaps {
    /// The caps of `limits`, before the reply's first call.
    pub fn new(limits: &AnswerLimits) -> CallCaps {
        CallCaps {
            max_calls: limits.max_tool_calls,
            max_arguments: limits.max_arguments_bytes,
            max_total_arguments: limits.max_total_arguments_bytes,
            total_arguments: 0,
        }
    }

    /// Refuses a new call when the reply has made `calls` already and may make no more.
    pub fn admit_call(&self, calls: usize) -> Result<(), EndpointError> {
        if calls >= self.max_calls {
            return Err(EndpointError::TooManyCalls {
                max: self.max_calls,
            });
        }
        Ok(())
    }

    /// Counts `piece` more bytes of the arguments of call `index`, which has `written` so far;
    /// refused when the call's arguments, or all the reply's together, would pass their cap.
    pub fn admit_arguments(
        &mut self,
        index: u32,
        written: usize,
        piece: usize,
    ) -> Result<(), EndpointError> {
        if written.saturating_add(piece) > self.max_arguments {
            return Err(EndpointError::ArgumentsTooLong {
                index,
                kib: self.max_arguments.div_ceil(1024),
            });
        }
        self.total_arguments = self.total_arguments.saturating_add(piece);
        if self.total_arguments > self.max_total_arguments {
            return Err(EndpointError::AllArgumentsTooLong {
                kib: self.max_total_arguments.div_ceil(1024),
            });
        }
        Ok(())
    }
}
