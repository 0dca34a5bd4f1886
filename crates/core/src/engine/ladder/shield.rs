//! The likely apps' pages kept in RAM (issue 11, "cold pages first"): the kernel's reclaim,
//! which keeps the domain within its memory, weighs every app's pages alike, so on a device
//! that holds more apps than fit, the apps the user returns to most lose their data to zram
//! as much as the apps left long ago, and every return to them is warm. The apps most likely
//! to be wanted soon (`p_return`: recency and popularity), as many as fit in `shield_frac`
//! of the domain, are shielded: their groups' swappiness is 0, so the kernel's reclaim takes
//! their file pages only, and the anonymous pages of the others.
//!
//! Below the critical band every shield is lifted: the kernel must be free to swap anything
//! rather than run out of pages to reclaim and kill. Shields also go when the preset has
//! none (a reload turned them off), when an app falls out of the likely set, and with the
//! daemon (it gives every group it shielded its swappiness back when it stops).

use super::{mib, Ctx, Step};
use crate::engine::model::ActionKind;
use crate::engine::preset::Detection;
use std::collections::BTreeSet;

pub fn run(ctx: &mut Ctx) {
    let critical = match &ctx.preset.detection {
        Detection::Bands(b) => ctx.frac(b.critical_available_frac),
        _ => 0,
    };
    let budget = ctx.preset.shield_frac.map(|f| ctx.frac(f));
    // As the snapshot saw it, not with what this decision's kill will free: until the victims
    // are gone the kernel may need every page.
    let available = ctx.input.snapshot.memory.available_bytes;
    let short = available < critical;
    let mut keep = BTreeSet::new();
    if let (Some(budget), false) = (budget, short) {
        // The likeliest to return first, the app in front only as likely as its history makes
        // it: its pages are in use, so the kernel's LRU keeps them active anyway, and a shield
        // that goes to whatever is in front moves at every switch and leaves the favourites
        // bare while they are away, which is when the kernel takes their pages (measured:
        // docs/results.md).
        let mut likely: Vec<_> =
            ctx.free_apps().filter(|a| a.shielded.is_some()).map(|a| (ctx.p_return(a), a)).collect();
        likely.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.pid.cmp(&y.1.pid)));
        let mut held = 0;
        for (_, a) in likely {
            // What the app holds when all of it is back: a swapped-out likely app comes back.
            let size = a.anon_bytes + a.swap_bytes;
            if held + size > budget {
                continue;
            }
            held += size;
            keep.insert(a.pid);
        }
    }
    let apps = ctx.input.apps;
    let lifted: Vec<_> =
        apps.iter().filter(|a| a.shielded == Some(true) && !keep.contains(&a.pid) && !ctx.is_touched(a.pid)).collect();
    for a in lifted {
        let why = match budget {
            None => format!("'{}' unshielded: the preset shields no app", a.name),
            Some(_) if short => format!(
                "'{}' unshielded: available {} below the critical band {}, the kernel may swap any app",
                a.name,
                mib(available),
                mib(critical)
            ),
            Some(b) => format!("'{}' unshielded: no longer among the likeliest apps that fit in {}", a.name, mib(b)),
        };
        let reason = ctx.reason(Step::Shield, why);
        ctx.push(ActionKind::Unshield { pid: a.pid }, reason, 0);
    }
    for a in apps.iter().filter(|a| a.shielded == Some(false) && keep.contains(&a.pid)) {
        let text = format!("'{}' shielded: among the apps likeliest to be wanted soon (p_return {:.2}) that fit in {}; the kernel's reclaim takes others' pages first", a.name, ctx.p_return(a), mib(budget.unwrap_or(0)));
        let reason = ctx.reason(Step::Shield, text).with("p_return", ctx.p_return(a));
        ctx.push(ActionKind::Shield { pid: a.pid }, reason, 0);
    }
}
