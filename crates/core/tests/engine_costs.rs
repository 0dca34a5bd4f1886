//! What the cost model learns of the device (costs.rs): a page's read-back from a return's
//! reported time and the fall of the app's swap, and a squeeze's CPU from its outcome.

mod common;
use common::*;
use memorch_core::engine::costs::{Swap, PRIOR_READ_US};
use memorch_core::engine::{ActionKind, Event, Input, Outcome};
use memorch_core::Class;

/// `maps` (10) launched, then returned to: twice quickly (5 ms, nothing in swap), then once
/// for each of `swapped` (MiB in swap at the return, all read back), each 10 ms slower for
/// other things and 4 µs a page read back.
fn returns(e: &mut memorch_core::engine::Engine, swapped: &[u64]) {
    let plenty = snap(1024, 700, 0);
    let maps = |class: Class, swap_mb: u64| {
        let mut a = app(10, "maps", class, 100);
        a.swap_bytes = swap_mb * MIB;
        vec![a, app(2, "home", Class::Home, 10)]
    };
    let back = |ms: u64| Event::Launched { app: "maps".into(), pid: 10, ms, cold: false };
    decide(
        e,
        0,
        &plenty,
        &maps(Class::Foreground, 0),
        &[Event::Launched { app: "maps".into(), pid: 10, ms: 400, cold: true }],
    );
    let slow = swapped.iter().map(|&mb| (15 + mb * MIB / 4096 * 4 / 1000, mb));
    for (i, (ms, swap)) in [(5, 0), (5, 0)].into_iter().chain(slow).enumerate() {
        let t = 10_000 * (i as u64 + 1);
        decide(e, t, &plenty, &maps(Class::Cached, swap), &[Event::AppState { pid: 10, class: Class::Cached }]);
        decide(
            e,
            t + 1_000,
            &plenty,
            &maps(Class::Foreground, swap),
            &[Event::AppState { pid: 10, class: Class::Foreground }],
        );
        decide(e, t + 1_100, &plenty, &maps(Class::Foreground, 0), &[back(ms)]);
    }
}

#[test]
fn a_return_that_read_pages_back_prices_them() {
    let mut e = engine("memorch");
    returns(&mut e, &[8, 40, 16, 24, 4, 32]);
    let touch = e.state.stats.get("maps").and_then(|s| s.return_touch);
    assert_eq!(touch, Some(1.0), "each return read back all it had in swap");
    let d = &e.state.stats.device;
    let us = d.zram_read_us.expect("fitted through six returns");
    // The slope, not the average (which the 10 ms of other things would make 5-9 µs); the
    // app's quickest return creeps up with the slow ones, which tilts the line a little.
    assert!((us - 4.0).abs() < 0.6, "{us}");
    assert_eq!(d.storage_read_us, None, "maps was never squeezed to storage");
    let mut quiet = engine("memorch");
    returns(&mut quiet, &[0, 0, 0, 0, 0, 0]);
    assert_eq!(quiet.state.stats.device.read_us(Swap::Zram), PRIOR_READ_US[0], "no page read back: nothing learned");
}

#[test]
fn a_squeeze_prices_its_cpu_and_sends_its_apps_return_to_storage() {
    let mut e = engine("memorch");
    let short = snap(1024, 60, 10);
    let apps = vec![app(10, "maps", Class::Cached, 200), app(2, "fg", Class::Foreground, 300)];
    let input = Input { now_ms: 1_000, snapshot: &short, apps: &apps, events: &[] };
    let mut acts = e.decide(&input);
    let squeeze = acts.iter_mut().find(|a| matches!(a.kind, ActionKind::Compact { .. })).expect("a squeeze");
    if let ActionKind::Compact { to_storage, .. } = &mut squeeze.kind {
        *to_storage = true;
    }
    let outcomes = [Outcome { action: squeeze, done: true, failed: false, bytes: Some(8 * MIB), cpu_us: Some(6_144) }];
    e.learn(&input, &outcomes);
    assert_eq!(e.state.stats.device.storage_cpu_us, Some(3.0), "6,144 µs for 2,048 pages");
    assert_eq!(e.state.stats.device.zram_cpu_us, None);
    assert!(e.state.on_storage.contains(&10), "its return reads from storage");
}

/// 1 GiB with `free_mb` free and zram of 512 MiB `pct` % full.
fn zram_full_by(free_mb: u64, pct: u64) -> memorch_core::Snapshot {
    let mut s = snap(1024, free_mb, 0);
    s.swap.devices[0].size_bytes = 512 * MIB;
    s.swap.devices[0].used_bytes = 512 * MIB * pct / 100;
    s.swap.total_bytes = 512 * MIB;
    s.swap.used_bytes = s.swap.devices[0].used_bytes;
    s
}

/// docs/design.md's worked example, figure by figure: 1 GiB, zram of 512 MiB (ratio 2.5 before
/// it has data: a page saves 0.6), `mail` (chance 0.75, its returns read back a tenth of its
/// swap) and `maps` (0.25, a fifth).
#[test]
fn the_design_documents_worked_example() {
    use memorch_core::engine::ladder::Ctx;
    use memorch_core::engine::{Preset, State};
    let zram_full_by = |pct: u64| zram_full_by(100, pct);
    let apps = [app(10, "maps", Class::Cached, 100), app(11, "mail", Class::Cached, 150)];
    let mut state = State::default();
    // Four sessions: mail in front in this one and one other, maps in two earlier ones.
    state.stats.sessions = 4;
    for (name, last, touch) in [("mail", 4, 0.1), ("maps", 3, 0.2)] {
        let s = state.stats.entry(name);
        (s.sessions, s.last_session, s.return_touch) = (2, last, Some(touch));
    }
    let preset = Preset::from_spec("memorch").unwrap();
    let cost = |state: &State, pct: u64, f: &dyn Fn(&Ctx) -> f64| {
        let s = zram_full_by(pct);
        let input = Input { now_ms: 1_000, snapshot: &s, apps: &apps, events: &[] };
        f(&Ctx::new(&input, &preset, state))
    };
    let near = |a: f64, b: f64| (a - b).abs() < 1e-3;
    assert!(near(cost(&state, 60, &|c| c.return_weight(&apps[0])), 0.25));
    assert!(near(cost(&state, 60, &|c| c.return_weight(&apps[1])), 0.75));
    assert!(near(cost(&state, 60, &|c| c.take_cost(&apps[0], Swap::Zram)), 0.05 * 7.0 / 0.6));
    assert!(near(cost(&state, 60, &|c| c.take_cost(&apps[0], Swap::Storage)), 1.0));
    let to_storage = |state: &State, pct| {
        let s = zram_full_by(pct);
        let input = Input { now_ms: 1_000, snapshot: &s, apps: &apps, events: &[] };
        Ctx::new(&input, &preset, state).storage_costs_less(&apps[0], 80 * MIB)
    };
    assert!(!to_storage(&state, 40), "zram under half full: room for all");
    assert!(!to_storage(&state, 60), "120 MiB of mail's and 80 of maps' fit in 205 MiB: zram");
    assert!(to_storage(&state, 70), "not in 154 MiB: maps to storage, zram left to mail");
    state.launch_in_flight = Some(("chat".into(), 500));
    assert!(near(cost(&state, 60, &|c| c.take_cost(&apps[0], Swap::Zram)), (0.35 + 11.5) / 0.6));
    assert!(near(cost(&state, 60, &|c| c.take_cost(&apps[0], Swap::Storage)), 12.0));
    assert!(to_storage(&state, 60), "during a launch storage is cheaper outright");
}

/// A squeeze to a storage file of its own saves all it moves: it takes what is short, not
/// the more that zram's saving would need (which had it move 2-3 times the shortfall).
#[test]
fn a_squeeze_to_storage_takes_what_is_short_and_one_to_zram_what_zram_saves() {
    let zram_full_by = |pct: u64| zram_full_by(90, pct);
    let apps = [
        app(10, "maps", Class::Cached, 300),
        app(11, "mail", Class::Cached, 300),
        app(2, "fg", Class::Foreground, 100),
    ];
    let squeezes = |pct: u64| {
        let mut e = engine("memorch");
        e.state.stats.sessions = 4;
        for (name, last) in [("mail", 4), ("maps", 1)] {
            let s = e.state.stats.entry(name);
            (s.sessions, s.last_session, s.return_touch) = (2, last, Some(0.2));
        }
        let s = zram_full_by(pct);
        let acts = e.decide(&Input { now_ms: 1_000, snapshot: &s, apps: &apps, events: &[] });
        acts.into_iter()
            .filter_map(|a| match a.kind {
                ActionKind::Compact { max_pages, to_storage, .. } => {
                    Some((max_pages.unwrap_or(0) * 4096, to_storage, a.reason.fields["need_bytes"] as u64))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let storage = squeezes(80);
    assert_eq!(storage.len(), 1, "one app covers it: {storage:?}");
    let (took, to_storage, short) = storage[0];
    assert!(to_storage, "zram is 80 % full: the unlikely app's squeeze goes to storage");
    assert!(took + 4096 > short && took <= short + MIB, "took {took} for {short} short");
    let zram = squeezes(10);
    let (took, to_storage, short) = zram[0];
    assert!(!to_storage);
    assert!(took > short * 3 / 2, "zram saves part of what it takes: took {took} for {short} short");
}
