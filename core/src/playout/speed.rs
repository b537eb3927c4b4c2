//! The reveal controller: a position, in clusters, that advances at an eased speed
//! (rules R3, R4, R5, R9).
//!
//! The target speed is the one that would show the whole backlog exactly when its newest
//! cluster is due (its arrival plus the lag): `backlog / time left`. For steady arrivals this
//! holds every cluster about one lag behind its arrival, and when arrivals stop (a pause, or the
//! end of the stream) the backlog still plays out on time instead of slowing down. The time left
//! is never taken as less than half the ease time, so an overdue backlog asks for a high but
//! finite speed. The target is never below the floor. The speed follows the target through a
//! first-order lag with the ease time constant, integrated exactly over each step.

use super::config::PlayoutConfig;

/// The longest step the controller integrates at once. Between pushes and ticks the backlog
/// only shrinks, so the target is recomputed at least this often.
const STEP_MS: f64 = 1000.0 / 60.0;

/// Guards the position against float noise when it is rounded down to whole clusters.
const EPSILON: f64 = 1e-9;

/// The clusters that have been decided, as far as the controller needs to know them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Backlog {
    /// Clusters decided so far (shown or waiting).
    pub decided: usize,
    /// When the newest decided cluster arrived.
    pub newest_arrival_ms: f64,
}

/// Where the reveal is and how fast it moves.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Controller {
    /// Clusters revealed so far, with the fraction of the next one.
    position: f64,
    /// Characters a second.
    speed: f64,
    /// The time the controller has been advanced to; `None` before the first event.
    clock: Option<f64>,
}

impl Controller {
    pub fn new(config: &PlayoutConfig) -> Self {
        Controller {
            position: 0.0,
            speed: config.min_cps,
            clock: None,
        }
    }

    /// The time the controller has reached.
    pub fn clock(&self) -> Option<f64> {
        self.clock
    }

    /// The current speed in characters a second.
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// How many whole clusters are due at a frame that came `frame_ms` after the previous one:
    /// those the position has reached, and those it reaches within the next half frame, which
    /// this frame shows nearer their time than the next one would. Frame spacing counts up to
    /// one step, so a long gap does not reach further ahead.
    pub fn due(&self, frame_ms: f64) -> usize {
        let half_frame = frame_ms.clamp(0.0, STEP_MS) / 2.0 / 1000.0;
        (self.position + self.speed * half_frame + EPSILON).floor() as usize
    }

    /// Advances the controller to `to_ms` with the backlog unchanged since its clock.
    pub fn advance(&mut self, to_ms: f64, backlog: Backlog, config: &PlayoutConfig) {
        let Some(mut now) = self.clock else {
            self.clock = Some(to_ms);
            return;
        };
        let decided = backlog.decided as f64;
        while now < to_ms {
            if decided - self.position <= EPSILON {
                // Caught up: nothing waits, so the speed falls back to the floor and a later
                // burst eases up from there.
                self.speed = config.min_cps;
                break;
            }
            let step_ms = (to_ms - now).min(STEP_MS);
            let target = self.target(now, backlog, config);
            if target.is_finite() {
                let step = step_ms / 1000.0;
                let ease = config.ease_ms / 1000.0;
                let keep = if ease > 0.0 {
                    (-step / ease).exp()
                } else {
                    0.0
                };
                self.position += target * step + (self.speed - target) * ease * (1.0 - keep);
                self.speed = target + (self.speed - target) * keep;
            } else {
                self.position = decided;
            }
            if self.position >= decided {
                self.position = decided;
                self.speed = config.min_cps;
            }
            now += step_ms;
        }
        self.clock = Some(to_ms);
    }

    /// The speed the controller eases toward at `now_ms`.
    pub fn target(&self, now_ms: f64, backlog: Backlog, config: &PlayoutConfig) -> f64 {
        let waiting = backlog.decided as f64 - self.position;
        if waiting <= EPSILON {
            return config.min_cps;
        }
        let left_ms =
            (backlog.newest_arrival_ms + config.lag_ms - now_ms).max(config.ease_ms / 2.0);
        (waiting * 1000.0 / left_ms).max(config.min_cps)
    }

    /// When the position should reach the cluster after the `shown` first, at the current speed.
    pub fn next_reveal_ms(&self, shown: usize) -> Option<f64> {
        let clock = self.clock?;
        let ahead = shown as f64 + 1.0 - self.position;
        if ahead <= EPSILON {
            return Some(clock);
        }
        Some(clock + ahead * 1000.0 / self.speed)
    }
}
