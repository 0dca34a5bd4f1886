//! Whether the preset sees memory as short now, and the floors the steps that take memory on purpose keep (the critical
//! band and the pressure step's margin).

use super::ctx::Ctx;
use crate::engine::margins::Margins;
use crate::engine::model::mib;
use crate::engine::preset::Detection;

/// Whether this preset sees "pressure" now, and why.
pub fn pressure(ctx: &Ctx) -> Option<String> {
    let c = ctx.preset.compaction.as_ref()?;
    match &ctx.preset.detection {
        Detection::None => None,
        Detection::Minfree(m) => {
            let band = m.scale(c.slight_pressure_pages_at_1gib, ctx.total());
            (ctx.free() < band).then(|| format!("slight shortage: free {} below {}", mib(ctx.free()), mib(band)))
        }
        Detection::Psi(l) => {
            let partial_pct = l.partial_stall_us(ctx.total()) as f64 * 100.0 / l.psi_window_us as f64;
            if let Some(level) = ctx.pressure_event() {
                Some(format!("PSI {level:?} stall trigger"))
            } else {
                (ctx.psi_some_avg10() > partial_pct)
                    .then(|| format!("PSI some {:.1} % over {partial_pct:.0} %", ctx.psi_some_avg10()))
            }
        }
        Detection::Bands(b) => {
            // Stall counts only near the band: with memory to spare, a stall is not what pushing more pages out would
            // cure (it would add refaults to it).
            let low = ctx.frac(b.low_available_frac);
            if ctx.available() < low {
                Some(format!("available {} below the low band {}", mib(ctx.available()), mib(low)))
            } else if ctx.available() < 2 * low
                && ctx.psi_some_avg10() > b.psi_some_target_pct
                && ctx.stall_goes_on(b.psi_some_target_pct)
            {
                Some(format!(
                    "PSI some {:.1} % over the {:.1} % target with available {} near the low band",
                    ctx.psi_some_avg10(),
                    b.psi_some_target_pct,
                    mib(ctx.available())
                ))
            } else {
                ctx.pressure_event().filter(|_| ctx.available() < 2 * low).map(|l| {
                    format!("PSI {l:?} stall trigger with available {} near the low band", mib(ctx.available()))
                })
            }
        }
    }
}

/// What memorch aims to bring available memory up to under pressure, beyond its low band: a share of the domain, scaled
/// down by the PSI feedback when compaction costs stall (how far ahead to act), never up: memory taken beyond what is
/// short only turns hot returns warm (issue 11: a margin grown to 12 % of the domain moved 360 MiB for a 17 MiB gap).
pub const PRESSURE_MARGIN_FRAC: f64 = 0.02;

/// Available memory at the critical band and the pressure step's margin above it, in bytes: the least that the steps
/// taking memory on purpose (the whole read-back of the app in front, a storage file's removal) leave, short of the
/// kill band.
pub fn critical_floor(ctx: &Ctx) -> u64 {
    Margins::of(ctx.preset, ctx.total()).critical_bytes + ctx.frac(PRESSURE_MARGIN_FRAC)
}
