//! What taking memory costs the user against the kernel's own reclaim (ladder/cost.rs), on
//! the pure engine: memorch squeezes only apps whose cold pages the kernel can pick.

mod common;
use common::*;
use memorch_core::engine::{Action, ActionKind, App, Event};
use memorch_core::Class;

fn squeezed(actions: &[Action]) -> Vec<u32> {
    actions.iter().filter_map(|a| if let ActionKind::Compact { pid, .. } = a.kind { Some(pid) } else { None }).collect()
}

/// `maps` in front; `mail`, `chat` and `docs` cached, 150 MiB each, `grouped` of them in a
/// group of their own; available memory under memorch's low band on a 1 GiB domain.
fn under_pressure(spec: &str, grouped: &[u32]) -> Vec<Action> {
    under_pressure_at(spec, grouped, 60, Class::Cached)
}

/// [`under_pressure`] with `free_mb` free and the background apps of class `bg`.
fn under_pressure_at(spec: &str, grouped: &[u32], free_mb: u64, bg: Class) -> Vec<Action> {
    let apps: Vec<App> = [(10, "maps"), (11, "mail"), (12, "chat"), (13, "docs")]
        .iter()
        .map(|&(pid, name)| App {
            own_group: grouped.contains(&pid),
            ..app(pid, name, if pid == 10 { Class::Foreground } else { bg }, 150)
        })
        .collect();
    let mut e = engine(spec);
    decide(
        &mut e,
        1_000,
        &snap(1024, 600, 0),
        &apps,
        &[Event::Launched { app: "maps".into(), pid: 10, ms: 400, cold: true }],
    );
    decide(&mut e, 2_000, &snap(1024, free_mb, 20), &apps, &[])
}

#[test]
fn memorch_squeezes_only_apps_whose_cold_pages_the_kernel_can_pick() {
    let all = under_pressure("memorch", &[10, 11, 12, 13]);
    assert!(!squeezed(&all).is_empty(), "apps in groups of their own give: {all:#?}");
    let one = under_pressure("memorch", &[12]);
    assert_eq!(squeezed(&one), [12], "only chat's cold pages can be told from its hot ones");
    // No app in a group of its own: the kernel's LRU is the cheaper path, memorch takes nothing.
    let none = under_pressure("memorch", &[]);
    assert!(squeezed(&none).is_empty(), "{none:#?}");
}

#[test]
fn the_papers_presets_keep_their_own_rules() {
    // The thesis compresses empty apps in steps under slight shortage (free under 48 MiB of
    // 1 GiB), groups or not.
    let thesis = under_pressure_at("thesis", &[], 40, Class::Empty);
    assert!(!squeezed(&thesis).is_empty(), "{thesis:#?}");
}

/// A complete stall with available memory between the critical band (51 MiB of 1 GiB) and
/// the low band (123 MiB): the kills it brings, with `grouped` apps in groups of their own.
fn kills_on_a_stall(grouped: &[u32]) -> usize {
    let apps: Vec<App> = [(10, "maps"), (11, "mail"), (12, "chat")]
        .iter()
        .map(|&(pid, name)| App {
            own_group: grouped.contains(&pid),
            ..app(pid, name, if pid == 10 { Class::Foreground } else { Class::Cached }, 200)
        })
        .collect();
    let mut e = engine("memorch");
    let full = memorch_core::engine::PressureLevel::Complete;
    let acts = decide(&mut e, 1_000, &zram_full(snap(1024, 60, 20)), &apps, &[Event::Pressure { level: full }]);
    acts.iter().filter(|a| matches!(a.kind, ActionKind::Kill { .. })).count()
}

#[test]
fn a_stall_kills_below_the_low_band_only_where_memorch_keeps_it() {
    assert_eq!(kills_on_a_stall(&[11, 12]), 1, "memorch's squeezes fall behind: kill");
    // Every app shares a group: the stall is the kernel's reclaim, and the critical band
    // is not reached.
    assert_eq!(kills_on_a_stall(&[]), 0);
}
