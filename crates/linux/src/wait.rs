//! Waiting for a condition with a deadline: the condition, not a fixed sleep, decides.

use std::time::{Duration, Instant};

/// Poll `cond` every 10 ms until it holds (true) or `timeout` passes (false).
pub fn wait_for(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
