//! Swap that grows and shrinks (SWAM's adaptive swap, slow path): add a storage swap file
//! when zram is nearly full (or compresses badly) under pressure; remove files that hold
//! nothing (SWAM's ISOP eraser).

use super::under_pressure::pressure;
use super::{mib, ActionKind, Ctx, Step};

pub fn run(ctx: &mut Ctx) {
    let p = ctx.preset.swap.clone();
    if !p.swap_files {
        return;
    }
    let snap = ctx.input.snapshot;
    let (orig, disksize) = snap.zram.get().map_or((0, 0), |z| {
        z.devices.iter().filter(|d| d.is_swap).fold((0, 0), |(o, s), d| (o + d.orig_data_bytes, s + d.disksize_bytes))
    });
    // Without zram statistics, the swap devices' own fill stands in.
    let swap = &snap.swap;
    let zram_used = if disksize > 0 {
        orig as f64 / disksize as f64
    } else if swap.total_bytes > 0 {
        swap.used_bytes as f64 / swap.total_bytes as f64
    } else {
        1.0
    };
    let files = snap.swap.devices.iter().filter(|d| d.kind == "file").count() as u32;
    let idle_file = snap.swap.devices.iter().any(|d| d.kind == "file" && d.used_bytes == 0);
    let bad_ratio = orig > 0 && ctx.zram_ratio() < p.grow_below_ratio;
    match pressure(ctx).or_else(|| ctx.pressure_event().map(|l| format!("PSI {l:?} stall trigger"))) {
        Some(why) if (zram_used >= p.grow_at_zram_used_frac || bad_ratio) && files < p.max_files => {
            let recent = ctx.state.last_swap_grow_ms.is_some_and(|t| ctx.input.now_ms.saturating_sub(t) < p.grow_interval_ms);
            if recent || idle_file {
                return;
            }
            let bytes = ctx.frac(p.file_frac);
            let what = if bad_ratio { format!("zram compresses only {:.2}×", ctx.zram_ratio()) } else { format!("zram is {:.0} % full", zram_used * 100.0) };
            let r = ctx
                .reason(Step::AdaptiveSwap, format!("{why} and {what}: add a {} storage swap file (SWAM slow path)", mib(bytes)))
                .with("zram_used_frac", zram_used);
            ctx.push(ActionKind::SwapGrow { bytes }, r, 0);
        }
        None if idle_file && zram_used < p.grow_at_zram_used_frac / 2.0 => {
            let r = ctx.reason(Step::AdaptiveSwap, "a storage swap file holds nothing and zram has room: remove it (SWAM ISOP eraser)");
            ctx.push(ActionKind::SwapShrink, r, 0);
        }
        _ => {}
    }
}
