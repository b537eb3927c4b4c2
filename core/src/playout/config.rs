//! The playout's tunable numbers (rules R3–R5), with the product's defaults.

use serde::{Deserialize, Serialize};

/// How live text plays out. `Default` gives the product's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PlayoutConfig {
    /// How far behind its arrival each character appears, in milliseconds (R3).
    pub lag_ms: f64,
    /// The slowest speed while anything is waiting, in characters a second (R4).
    pub min_cps: f64,
    /// The time constant with which the speed eases toward its target, in milliseconds (R5).
    pub ease_ms: f64,
    /// No frame reveals more than this many times the previous frame's count… (R5)
    pub frame_growth_factor: usize,
    /// …plus this many characters (R5).
    pub frame_growth_extra: usize,
}

impl Default for PlayoutConfig {
    fn default() -> Self {
        PlayoutConfig {
            lag_ms: 600.0,
            min_cps: 40.0,
            ease_ms: 300.0,
            frame_growth_factor: 3,
            frame_growth_extra: 2,
        }
    }
}

/// A playout configuration that cannot drive a playout.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlayoutConfigError {
    #[error("playout lag_ms is {0}; give a finite number of milliseconds, zero or more")]
    Lag(f64),
    #[error("playout min_cps is {0}; give a finite number of characters a second above zero")]
    MinCps(f64),
    #[error("playout ease_ms is {0}; give a finite number of milliseconds, zero or more")]
    Ease(f64),
    #[error(
        "playout frame growth is {factor}x the previous frame plus {extra}; both must be at \
         least 1, or the reveal could never start or never speed up"
    )]
    FrameGrowth { factor: usize, extra: usize },
}

impl PlayoutConfig {
    /// Checks that every number can drive a playout.
    pub fn validate(&self) -> Result<(), PlayoutConfigError> {
        if !(self.lag_ms.is_finite() && self.lag_ms >= 0.0) {
            return Err(PlayoutConfigError::Lag(self.lag_ms));
        }
        if !(self.min_cps.is_finite() && self.min_cps > 0.0) {
            return Err(PlayoutConfigError::MinCps(self.min_cps));
        }
        if !(self.ease_ms.is_finite() && self.ease_ms >= 0.0) {
            return Err(PlayoutConfigError::Ease(self.ease_ms));
        }
        if self.frame_growth_factor == 0 || self.frame_growth_extra == 0 {
            return Err(PlayoutConfigError::FrameGrowth {
                factor: self.frame_growth_factor,
                extra: self.frame_growth_extra,
            });
        }
        Ok(())
    }

    /// The most a frame may reveal after one that revealed `previous` characters.
    pub fn frame_allowance(&self, previous: usize) -> usize {
        previous
            .saturating_mul(self.frame_growth_factor)
            .saturating_add(self.frame_growth_extra)
    }
}
