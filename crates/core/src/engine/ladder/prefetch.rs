//! The app in front read back from swap (issue 11, "returns fast"): an app memorch keeps
//! alive rather than kill lives partly in zram (or storage swap), and every return that
//! touches a page of it there waits for the read; a killer's relaunched app is all in RAM,
//! so its returns in the rest of the session are hot. Once the user is back in an app (it is
//! in front), the rest of its swapped-out pages are read back into the swap cache
//! (`process_madvise(MADV_WILLNEED)`), as far as memory above the low band allows, so the
//! next returns of the session find them in RAM: the kernel's LRU then keeps the apps the
//! user switches between and pushes out the others, instead of the reverse.
//!
//! Once a stint in front (a page read back and dropped again is not read twice for the same
//! visit), never below the low band (reading back is what compression undoes: it must not
//! make the shortage the pressure step answers).

use super::{mib, ActionKind, Ctx, Step, PAGE};
use crate::engine::preset::Detection;
use crate::Class;

/// Less than this is not worth a call (nor a log line).
const MIN_BYTES: u64 = 4 << 20;

pub fn run(ctx: &mut Ctx) {
    let Detection::Bands(b) = &ctx.preset.detection else { return };
    if !ctx.preset.prefetch_front || !ctx.state.screen_on {
        return;
    }
    let low = ctx.frac(b.low_available_frac);
    let front: Vec<_> = ctx.free_apps().filter(|a| a.class == Class::Foreground && a.swap_bytes >= MIN_BYTES).collect();
    // What this decision reads back is no longer available to the next app in front.
    let mut taken = 0;
    for a in front {
        let stint = ctx.state.last_front_switch.get(&a.pid).copied().unwrap_or(0);
        if ctx.state.prefetched.get(&a.pid) == Some(&stint) {
            continue;
        }
        let room = ctx.available().saturating_sub(low + taken);
        let bytes = a.swap_bytes.min(room);
        if bytes < MIN_BYTES {
            let r = ctx.reason(Step::Prefetch, format!("'{}' in front with {} in swap: not read back, available {} is at the low band {}", a.name, mib(a.swap_bytes), mib(ctx.available()), mib(low)));
            ctx.quiet(r);
            continue;
        }
        ctx.state.prefetched.insert(a.pid, stint);
        let text = format!("'{}' in front: read back {} of its {} in swap while available {} is above the low band {}", a.name, mib(bytes), mib(a.swap_bytes), mib(ctx.available()), mib(low));
        let reason = ctx.reason(Step::Prefetch, text).with("swap_bytes", a.swap_bytes as f64).with("prefetch_bytes", bytes as f64);
        ctx.push(ActionKind::Prefetch { pid: a.pid, app: a.name.clone(), max_pages: bytes / PAGE }, reason, 0);
        taken += bytes;
    }
}
