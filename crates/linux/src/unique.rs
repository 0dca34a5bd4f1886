//! Names unique to this process and call (`prefix-TAG-N`, TAG the pid and, outside the initial PID namespace, the
//! namespace: `owner::tag`), for sandboxes, devices and files: the tag tells whose they are, so what a dead process
//! left can be found (sandbox.rs `remove_stale`).

use std::sync::atomic::{AtomicU32, Ordering};

pub fn unique_name(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}-{}-{}", crate::owner::tag(), N.fetch_add(1, Ordering::Relaxed))
}
