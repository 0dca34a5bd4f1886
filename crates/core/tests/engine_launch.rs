//! Before a launch (ladder/before_launch.rs), memorch's own variant on the pure engine:
//! `ahead.launch_from_free` compresses for what free memory lacks, from the unlikely apps.

mod common;
use common::*;
use memorch_core::engine::model::{MIB, PAGE};
use memorch_core::engine::{Action, ActionKind, App, Engine, Event, Step};
use memorch_core::Class;

/// (pid, bytes asked) of each compaction the before-launch step asks for.
fn before_launch_squeezes(actions: &[Action]) -> Vec<(u32, u64)> {
    actions
        .iter()
        .filter(|a| a.reason.step == Step::BeforeLaunch)
        .filter_map(|a| match a.kind {
            ActionKind::Compact { pid, max_pages, .. } => Some((pid, max_pages.unwrap_or(u64::MAX / PAGE) * PAGE)),
            _ => None,
        })
        .collect()
}

fn kills(actions: &[Action]) -> usize {
    actions.iter().filter(|a| matches!(a.kind, ActionKind::Kill { .. })).count()
}

/// `old` away for an hour; `fav` launched and brought to the front five times just now.
fn apps_and_history(e: &mut Engine) -> Vec<App> {
    let old = App { age_ms: 3_600_000, ..app(11, "old", Class::Cached, 150) };
    let apps = vec![old, app(12, "fav", Class::Cached, 100)];
    for i in 0..5 {
        decide(e, 1_000 * i, &snap(1024, 600, 10), &apps, &[Event::Launched { app: "fav".into(), pid: 12, ms: 300, cold: i == 0 }]);
    }
    decide(e, 6_000, &snap(1024, 600, 10), &apps, &[Event::AppState { pid: 12, class: Class::Foreground }, Event::Home]);
    apps
}

fn launch(mb: u64) -> [Event; 1] {
    [Event::LaunchIntent { app: "big".into(), expected_bytes: Some(mb * MIB) }]
}

#[test]
fn a_launch_that_fits_only_in_page_cache_is_made_room_for_from_the_unlikely_apps() {
    // 1 GiB: 100 MiB free and 400 MiB of page cache, so 500 MiB available; a 200 MiB launch
    // fits in available memory, not in free memory.
    let s = snap(1024, 100, 400);
    let mut e = engine("memorch:ahead.launch_from_free=true");
    let apps = apps_and_history(&mut e);
    let a = decide(&mut e, 7_000, &s, &apps, &launch(200));
    let squeezed = before_launch_squeezes(&a);
    assert!(!squeezed.is_empty() && squeezed.iter().all(|(pid, _)| *pid == 11), "only the app away for an hour gives: {a:#?}");
    let bytes: u64 = squeezed.iter().map(|(_, b)| b).sum();
    // What free memory lacks: 200 + 2 % of the domain − 100 MiB, within the time budget
    // (300 ms at 350 MB/s: 100 MiB).
    assert!((90 * MIB..=121 * MIB).contains(&bytes), "{} MiB asked: {a:#?}", bytes / MIB);
    assert_eq!(kills(&a), 0, "available memory covers the launch: no kill for it");
}

#[test]
fn off_by_default_and_nothing_where_free_memory_covers_the_launch() {
    let mut e = engine("memorch");
    let apps = apps_and_history(&mut e);
    let a = decide(&mut e, 7_000, &snap(1024, 100, 400), &apps, &launch(200));
    assert_eq!(before_launch_squeezes(&a), vec![], "the preset as shipped counts page cache: {a:#?}");
    let mut e = engine("memorch:ahead.launch_from_free=true");
    let apps = apps_and_history(&mut e);
    let a = decide(&mut e, 7_000, &snap(1024, 400, 100), &apps, &launch(200));
    assert_eq!(before_launch_squeezes(&a), vec![], "400 MiB free holds a 200 MiB launch: {a:#?}");
}

#[test]
fn only_the_likely_apps_left_means_nothing_is_taken() {
    let mut e = engine("memorch:ahead.launch_from_free=true");
    let apps: Vec<App> = apps_and_history(&mut e).into_iter().filter(|a| a.name == "fav").collect();
    let a = decide(&mut e, 7_000, &snap(1024, 100, 400), &apps, &launch(200));
    assert_eq!(before_launch_squeezes(&a), vec![], "the likely app keeps its pages: {a:#?}");
}
