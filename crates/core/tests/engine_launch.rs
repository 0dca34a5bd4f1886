//! Before a launch (ladder/before_launch.rs) and at idle (prepare_idle.rs), memorch's own
//! variant of MOS on the pure engine: room for the launch secured at its intent.

mod common;
use common::*;
use memorch_core::engine::costs::DeviceCosts;
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

/// `old` away for an hour; `fav` launched and brought to the front five times just now.
fn apps_and_history(e: &mut Engine) -> Vec<App> {
    let old = App { age_ms: 3_600_000, ..app(11, "old", Class::Cached, 150) };
    let apps = vec![old, app(12, "fav", Class::Cached, 100)];
    for i in 0..5 {
        decide(
            e,
            1_000 * i,
            &snap(1024, 600, 10),
            &apps,
            &[Event::Launched { app: "fav".into(), pid: 12, ms: 300, cold: i == 0 }],
        );
    }
    decide(
        e,
        6_000,
        &snap(1024, 600, 10),
        &apps,
        &[Event::AppState { pid: 12, class: Class::Foreground }, Event::Home],
    );
    apps
}

/// Only `fav` (the history of [`apps_and_history`]) left to give, grown to 250 MiB so that
/// compression can cover a launch's 100 MiB.
fn only_the_favourite_grown(e: &mut Engine) -> Vec<App> {
    apps_and_history(e)
        .into_iter()
        .filter(|a| a.name == "fav")
        .map(|a| App { anon_bytes: 250 * MIB, pss_bytes: Some(250 * MIB), ..a })
        .collect()
}

fn launch(mb: u64) -> [Event; 1] {
    [Event::LaunchIntent { app: "big".into(), expected_bytes: Some(mb * MIB) }]
}

/// The squeezes a decision sends to a storage file of their own (`to_storage`), by pid.
fn to_storage(actions: &[Action]) -> Vec<u32> {
    actions
        .iter()
        .filter_map(|a| if let ActionKind::Compact { pid, to_storage: true, .. } = a.kind { Some(pid) } else { None })
        .collect()
}

/// The cost model (`memorch`): while a launch is in flight a squeeze's CPU is the launch's
/// wait too, so with compression costing more CPU a page than a storage write (the priors)
/// every squeeze goes to a storage file of its own, a likely app's and with zram nearly
/// empty too; once the launch is reported, into zram. A device that measured its compression
/// cheaper than its storage keeps the launch's squeezes in zram.
#[test]
fn a_launch_in_flight_is_made_room_for_on_storage() {
    // 1 GiB, 30 MiB available, zram (256 MiB) a fifth full; only the favourite, grown to 250
    // MiB, left to give for a 100 MiB launch: five returns just now make a return soon likely.
    let mut s = snap(1024, 20, 10);
    s.swap.devices[0].used_bytes = s.swap.devices[0].size_bytes / 5;
    s.swap.used_bytes = s.swap.devices[0].used_bytes;
    let run = |spec: &str, costs: DeviceCosts| {
        let mut e = engine(spec);
        e.state.stats.device = costs;
        let apps = only_the_favourite_grown(&mut e);
        let at_intent = decide(&mut e, 7_000, &s, &apps, &launch(100));
        let launched = [Event::Launched { app: "big".into(), pid: 99, ms: 500, cold: true }];
        let after = decide(&mut e, 8_000, &s, &apps, &launched);
        (at_intent, after)
    };
    let (at_intent, after) = run("memorch:sessions=off", DeviceCosts::default());
    let squeezed: Vec<u32> = before_launch_squeezes(&at_intent).iter().map(|(pid, _)| *pid).collect();
    assert!(!squeezed.is_empty(), "{at_intent:#?}");
    let mut stored = to_storage(&at_intent);
    stored.sort_unstable();
    let mut all: Vec<u32> = at_intent
        .iter()
        .filter_map(|a| if let ActionKind::Compact { pid, .. } = a.kind { Some(pid) } else { None })
        .collect();
    all.sort_unstable();
    assert_eq!(stored, all, "every squeeze while the launch is in flight, to storage: {at_intent:#?}");
    assert!(
        after.iter().any(|a| matches!(a.kind, ActionKind::Compact { .. })),
        "still short after the launch: {after:#?}"
    );
    assert!(to_storage(&after).is_empty(), "the launch reported: squeezes go where the kernel puts them: {after:#?}");
    let cheap_compression = DeviceCosts {
        zram_cpu_us: Some(1.0),
        storage_cpu_us: Some(20.0),
        storage_read_us: Some(60.0),
        ..DeviceCosts::default()
    };
    let (at_intent, _) = run("memorch:sessions=off", cheap_compression);
    assert!(!before_launch_squeezes(&at_intent).is_empty(), "{at_intent:#?}");
    assert!(
        to_storage(&at_intent).is_empty(),
        "compression measured cheaper, zram a fifth full: none to storage: {at_intent:#?}"
    );
}
