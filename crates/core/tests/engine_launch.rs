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

#[test]
fn a_launch_that_fits_only_in_page_cache_is_made_room_for_from_the_unlikely_apps() {
    // 1 GiB: 100 MiB free and 400 MiB of page cache, so 500 MiB available; a 200 MiB launch
    // fits in available memory, not in free memory.
    let s = snap(1024, 100, 400);
    let mut e = engine("memorch:sessions=off,popularity=on,ahead.launch_from_free=true");
    let apps = apps_and_history(&mut e);
    let a = decide(&mut e, 7_000, &s, &apps, &launch(200));
    let squeezed = before_launch_squeezes(&a);
    assert!(
        !squeezed.is_empty() && squeezed.iter().all(|(pid, _)| *pid == 11),
        "only the app away for an hour gives: {a:#?}"
    );
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
    let mut e = engine("memorch:sessions=off,popularity=on,ahead.launch_from_free=true");
    let apps = apps_and_history(&mut e);
    let a = decide(&mut e, 7_000, &snap(1024, 400, 100), &apps, &launch(200));
    assert_eq!(before_launch_squeezes(&a), vec![], "400 MiB free holds a 200 MiB launch: {a:#?}");
}

#[test]
fn only_the_likely_apps_left_means_nothing_is_taken() {
    let mut e = engine("memorch:sessions=off,popularity=on,ahead.launch_from_free=true");
    let apps: Vec<App> = apps_and_history(&mut e).into_iter().filter(|a| a.name == "fav").collect();
    let a = decide(&mut e, 7_000, &snap(1024, 100, 400), &apps, &launch(200));
    assert_eq!(before_launch_squeezes(&a), vec![], "the likely app keeps its pages: {a:#?}");
}

/// Idle (ladder/prepare_idle.rs) makes room for the next likely launch. With every app seen
/// running, that is an app not seen yet, if the preset expects one
/// (`ahead.unseen_launch_chance`) and the history says new apps are still likely.
///
/// What the idle step found short, in the reasons of its squeezes (none: 0), and the pids it
/// squeezed. `old` has been cached for an hour and never in front: unlikely to be wanted; it
/// holds less than the need.
fn idle_need_bytes(spec: &str, sessions_of_the_same_apps: u64) -> (u64, Vec<u32>) {
    let mut e = engine(spec);
    let old = App { age_ms: 3_600_000, ..app(10, "old", Class::Cached, 40) };
    let apps = vec![old, app(11, "mail", Class::Cached, 100), app(12, "maps", Class::Cached, 150)];
    // 160 MiB available on 1 GiB: above the low band (12 %), under the threshold (60 MiB)
    // plus the median peak of the apps seen (150 MiB).
    let s = snap(1024, 150, 10);
    let mut now = 0;
    for session in 0..sessions_of_the_same_apps {
        for (pid, name) in [(11, "mail"), (12, "maps")] {
            now += 1_000;
            let launched = Event::Launched { app: name.into(), pid, ms: 300, cold: session == 0 };
            decide(&mut e, now, &s, &apps, &[launched, Event::AppState { pid, class: Class::Foreground }]);
        }
        now += 1_000;
        decide(
            &mut e,
            now,
            &s,
            &apps,
            &[Event::AppState { pid: 12, class: Class::Cached }, Event::Home, Event::Screen { on: false }],
        );
        now += 1_000;
        decide(&mut e, now, &s, &apps, &[Event::Screen { on: true }]);
    }
    let a = decide(&mut e, now + 1_000, &s, &apps, &[Event::Screen { on: false }]);
    let squeezes: Vec<(f64, u32)> = a
        .iter()
        .filter(|a| a.reason.step == Step::PrepareIdle)
        .filter_map(|a| match a.kind {
            ActionKind::Compact { pid, .. } => Some((a.reason.fields["need_bytes"], pid)),
            _ => None,
        })
        .collect();
    assert!(squeezes.windows(2).all(|w| w[0].0 == w[1].0), "one need, shared by its squeezes: {a:#?}");
    (squeezes.first().map_or(0, |s| s.0 as u64), squeezes.iter().map(|s| s.1).collect())
}

#[test]
fn at_idle_room_is_made_for_an_app_not_seen_yet_while_new_apps_are_likely() {
    // Two apps, one session: each seen once, so a new app is as likely as not (chance 1).
    let (need, squeezed) = idle_need_bytes("memorch:sessions=off,popularity=on,ahead.unseen_launch_chance=0.1", 1);
    // The threshold (60 MiB) plus the median peak of the apps in front (150 MiB) less the
    // 160 MiB available.
    assert!((49 * MIB..=51 * MIB).contains(&need), "{} MiB short", need / MIB);
    assert_eq!(squeezed, vec![10], "for a launch that may not come, only the unlikely app gives");
    assert_eq!(idle_need_bytes("memorch", 1), (0, vec![]), "off as shipped: only apps seen are prepared for");
    // The same two apps in ten sessions: no app seen in one session only, chance 0.
    assert_eq!(
        idle_need_bytes("memorch:sessions=off,popularity=on,ahead.unseen_launch_chance=0.1", 10),
        (0, vec![]),
        "new apps have become rare"
    );
}

#[test]
fn with_unseen_from_every_app_the_likely_apps_give_too_the_least_likely_first() {
    let spec = "memorch:sessions=off,popularity=on,ahead.unseen_launch_chance=0.1,ahead.unseen_from_every_app=true";
    let (need, squeezed) = idle_need_bytes(spec, 1);
    assert!((49 * MIB..=51 * MIB).contains(&need), "{} MiB short", need / MIB);
    assert_eq!(squeezed.first(), Some(&10), "the unlikely app gives first: {squeezed:?}");
    assert!(
        squeezed.len() > 1 && squeezed[1..].iter().all(|p| [11, 12].contains(p)),
        "then the likely ones, for what it could not: {squeezed:?}"
    );
    assert_eq!(
        idle_need_bytes("memorch:ahead.unseen_from_every_app=true", 1),
        (0, vec![]),
        "without a chance given, no app not seen yet is prepared for"
    );
}

/// Pids the pressure step asks to compress.
fn pressure_squeezes(actions: &[Action]) -> Vec<u32> {
    actions
        .iter()
        .filter(|a| a.reason.step == Step::UnderPressure && matches!(a.kind, ActionKind::Compact { .. }))
        .flat_map(Action::pids)
        .collect()
}

/// `ahead.launch_first`: from a launch's intent until it is reported launched, the pressure
/// step waits while available memory is above the critical band (5 % of the device).
#[test]
fn with_launch_first_a_launch_in_flight_holds_the_pressure_step_back_until_it_is_launched() {
    // 1 GiB: 70 MiB available, under the low band (12 %, 123 MiB), over the critical (51 MiB).
    let short = snap(1024, 40, 30);
    let timer = [Event::Timer];
    for (spec, holds) in [("memorch:ahead.launch_first=true", true), ("memorch", false)] {
        let mut e = engine(spec);
        let apps = apps_and_history(&mut e);
        decide(&mut e, 7_000, &snap(1024, 600, 10), &apps, &launch(200));
        let a = decide(&mut e, 7_500, &short, &apps, &timer);
        assert_eq!(pressure_squeezes(&a).is_empty(), holds, "{spec}, launch in flight: {a:#?}");
        // Below the critical band the launch does not go first.
        let a = decide(&mut e, 7_600, &snap(1024, 20, 10), &apps, &timer);
        assert!(!pressure_squeezes(&a).is_empty(), "{spec}, 30 MiB available: {a:#?}");
        let done = [Event::Launched { app: "big".into(), pid: 13, ms: 700, cold: true }];
        let a = decide(&mut e, 7_800, &short, &apps, &done);
        assert!(!pressure_squeezes(&a).is_empty(), "{spec}, launched: {a:#?}");
    }
}

#[test]
fn a_launch_never_reported_launched_stops_holding_the_pressure_step_back() {
    let mut e = engine("memorch:ahead.launch_first=true");
    let apps = apps_and_history(&mut e);
    decide(&mut e, 7_000, &snap(1024, 600, 10), &apps, &launch(200));
    let a = decide(&mut e, 9_900, &snap(1024, 40, 30), &apps, &[Event::Timer]);
    assert!(pressure_squeezes(&a).is_empty(), "2.9 s after the intent the launch is still in flight: {a:#?}");
    let a = decide(&mut e, 10_100, &snap(1024, 40, 30), &apps, &[Event::Timer]);
    assert!(!pressure_squeezes(&a).is_empty(), "3.1 s after it, no longer: {a:#?}");
}

/// `ahead.kill_when_faster`: before a launch, a kill where it costs the user less than the
/// launch's wait for compressing what it lacks.
///
/// The before-launch step's kill, if any: (pids killed, the compression wait and the expected
/// cost it weighed).
fn launch_kill(actions: &[Action]) -> Option<(Vec<u32>, f64, f64)> {
    actions.iter().filter(|a| a.reason.step == Step::BeforeLaunch).find_map(|a| match &a.kind {
        ActionKind::Kill { victims, .. } => Some((
            victims.iter().map(|v| v.pid).collect(),
            a.reason.fields.get("compress_wait_ms").copied().unwrap_or(0.0),
            a.reason.fields.get("expected_cost_ms").copied().unwrap_or(0.0),
        )),
        _ => None,
    })
}

#[test]
fn a_launch_far_short_kills_an_app_unlikely_to_be_wanted_rather_than_wait_for_compression() {
    // 1 GiB, 30 MiB available: a 150 MiB launch lacks 150 + 20 (2 %) − 30 = 140 MiB, ~420 ms
    // of compression at 350 MB/s. `old`, never in front and away an hour (a return soon 0.1
    // likely by recency and fronts, as this file's history has no sessions), costs its state
    // and a tenth of its relaunch (450 ms by its size): it dies, and nothing is compressed for
    // the launch.
    let s = snap(1024, 20, 10);
    let mut e = engine("memorch:sessions=off,popularity=on,ahead.kill_when_faster=true");
    let apps = apps_and_history(&mut e);
    let a = decide(&mut e, 7_000, &s, &apps, &launch(150));
    let (pids, wait_ms, cost_ms) = launch_kill(&a).unwrap_or_else(|| panic!("a kill before the launch: {a:#?}"));
    assert_eq!(pids, vec![11], "the app away for an hour, not the favourite: {a:#?}");
    assert!((400.0..=440.0).contains(&wait_ms), "140 MiB at 350 MB/s: {wait_ms} ms");
    assert!(cost_ms < wait_ms, "{cost_ms} ms expected against {wait_ms} ms");
    assert_eq!(before_launch_squeezes(&a), vec![], "its death covers the launch: nothing compressed for it: {a:#?}");
}

#[test]
fn a_launch_compresses_where_a_kill_would_cost_more_or_it_is_off() {
    let s = snap(1024, 20, 10);
    // Only the favourite is left to give, grown to 250 MiB so that compression can cover
    // the launch's 90 MiB (~270 ms): five returns just now make a return soon likely, and its
    // relaunch (300 ms) and state cost more.
    let mut e = engine("memorch:sessions=off,popularity=on,ahead.kill_when_faster=true");
    let apps = only_the_favourite_grown(&mut e);
    let a = decide(&mut e, 7_000, &s, &apps, &launch(100));
    assert_eq!(launch_kill(&a), None, "the favourite is compressed, not killed: {a:#?}");
    assert!(before_launch_squeezes(&a).iter().any(|(pid, _)| *pid == 12), "{a:#?}");
    // A small shortfall compresses in less time than any kill's state is worth.
    let mut e = engine("memorch:sessions=off,popularity=on,ahead.kill_when_faster=true");
    let apps = apps_and_history(&mut e);
    let a = decide(&mut e, 7_000, &snap(1024, 100, 10), &apps, &launch(150));
    assert_eq!(launch_kill(&a), None, "60 MiB short, ~180 ms of compression: {a:#?}");
    assert!(!before_launch_squeezes(&a).is_empty(), "{a:#?}");
    // As memorch ships: compression.
    let mut e = engine("memorch:sessions=off,popularity=on");
    let apps = apps_and_history(&mut e);
    let a = decide(&mut e, 7_000, &s, &apps, &launch(150));
    assert_eq!(launch_kill(&a), None, "off in the preset: {a:#?}");
    assert!(!before_launch_squeezes(&a).is_empty(), "{a:#?}");
}

/// The squeezes a decision sends to a storage file of their own (`to_storage`), by pid.
fn to_storage(actions: &[Action]) -> Vec<u32> {
    actions
        .iter()
        .filter_map(|a| if let ActionKind::Compact { pid, to_storage: true, .. } = a.kind { Some(pid) } else { None })
        .collect()
}

/// `swap.launch_to_storage` (on in `memorch`): while a launch is in flight every squeeze goes
/// to a storage file of its own, a likely app's and with zram nearly empty too; once the
/// launch is reported, squeezes go where they went before.
#[test]
fn a_launch_in_flight_is_made_room_for_on_storage() {
    // 1 GiB, 30 MiB available, zram (256 MiB) a fifth full; only the favourite, grown to 250
    // MiB, left to give for a 100 MiB launch: five returns just now make a return soon likely.
    let mut s = snap(1024, 20, 10);
    s.swap.devices[0].used_bytes = s.swap.devices[0].size_bytes / 5;
    s.swap.used_bytes = s.swap.devices[0].used_bytes;
    let run = |spec: &str| {
        let mut e = engine(spec);
        let apps = only_the_favourite_grown(&mut e);
        let at_intent = decide(&mut e, 7_000, &s, &apps, &launch(100));
        let launched = [Event::Launched { app: "big".into(), pid: 99, ms: 500, cold: true }];
        let after = decide(&mut e, 8_000, &s, &apps, &launched);
        (at_intent, after)
    };
    let (at_intent, after) = run("memorch:sessions=off,popularity=on");
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
    let (at_intent, _) = run("memorch:sessions=off,popularity=on,swap.launch_to_storage=false");
    assert!(!before_launch_squeezes(&at_intent).is_empty(), "{at_intent:#?}");
    assert!(
        to_storage(&at_intent).is_empty(),
        "off (the preset before), zram a fifth full: none to storage: {at_intent:#?}"
    );
}
