//! Names unique to this process and call (`prefix-PID-N`), for sandboxes, devices and files:
//! the pid in them tells whose they are, so what a dead process left can be found
//! (sandbox.rs `remove_stale`).

use std::sync::atomic::{AtomicU32, Ordering};

pub fn unique_name(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}
