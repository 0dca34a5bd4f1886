//! zram written back to storage while the screen is off (`swap.writeback_below`, the
//! `writeback` switch), on the pure engine: the pages an unlikely app holds in zram are moved
//! to a storage file of its own, the least likely app first, down to the fill at which
//! unlikely apps' squeezes go to storage anyway (`swap.cold_at_zram_used`), and never while
//! someone waits.

mod common;
use common::*;
use memorch_core::engine::{Action, ActionKind, App, Engine, Event, Outcome, Step};
use memorch_core::{Class, Snapshot};

const NOTES: u32 = 10;
const MAIL: u32 = 11;

/// `notes` (10) used in the first of five sessions only, `mail` (11) in all five; both
/// cached with pages in swap (80 and 40 MiB); then the screen goes off. The engine, and the
/// time of that screen-off.
fn five_sessions(spec: &str) -> (Engine, u64) {
    let mut e = engine(spec);
    let plenty = snap(1024, 700, 0);
    let launched = |app: &str, pid: u32| Event::Launched { app: app.into(), pid, ms: 400, cold: true };
    let front = |pid: u32| Event::AppState { pid, class: Class::Foreground };
    let away = |pid: u32| Event::AppState { pid, class: Class::Previous };
    decide(&mut e, 1_000, &plenty, &apps(Some(NOTES), &[NOTES]), &[launched("notes", NOTES)]);
    decide(&mut e, 2_000, &plenty, &apps(Some(MAIL), &[NOTES, MAIL]), &[away(NOTES), launched("mail", MAIL)]);
    let mut t = 3_000;
    for _ in 0..4 {
        decide(&mut e, t, &plenty, &apps(None, &[NOTES, MAIL]), &[away(MAIL), Event::Screen { on: false }]);
        decide(&mut e, t + 5_000, &plenty, &apps(None, &[NOTES, MAIL]), &[Event::Screen { on: true }]);
        decide(&mut e, t + 6_000, &plenty, &apps(Some(MAIL), &[NOTES, MAIL]), &[front(MAIL)]);
        t += 7_000;
    }
    decide(&mut e, t, &plenty, &apps(None, &[NOTES, MAIL]), &[away(MAIL), Event::Screen { on: false }]);
    (e, t)
}

/// The two apps, `front` in front and the other cached, with 80 and 40 MiB in swap.
fn apps(front: Option<u32>, running: &[u32]) -> Vec<App> {
    [(NOTES, "notes", 80), (MAIL, "mail", 40)]
        .iter()
        .filter(|(pid, ..)| running.contains(pid))
        .map(|&(pid, name, swap_mb)| App {
            swap_bytes: swap_mb * MIB,
            ..app(pid, name, if Some(pid) == front { Class::Foreground } else { Class::Cached }, 60)
        })
        .collect()
}

/// `available_mb` available of 1 GiB, its zram (256 MiB) `zram_pct` full.
fn idle_with_zram(zram_pct: u64, available_mb: u64) -> Snapshot {
    let mut s = snap(1024, available_mb, 0);
    s.swap.devices[0].used_bytes = s.swap.devices[0].size_bytes * zram_pct / 100;
    s.swap.used_bytes = s.swap.devices[0].used_bytes;
    s
}

/// The writebacks of a decision: (pid, bytes).
fn writebacks(actions: &[Action]) -> Vec<(u32, u64)> {
    actions
        .iter()
        .filter_map(|a| {
            if let ActionKind::Writeback { pid, max_pages, .. } = a.kind {
                Some((pid, max_pages * 4096))
            } else {
                None
            }
        })
        .collect()
}

/// One idle decision after [`five_sessions`] on `s`.
fn idle_decision(spec: &str, s: &Snapshot) -> Vec<Action> {
    let (mut e, t) = five_sessions(spec);
    decide(&mut e, t + 500, s, &apps(None, &[NOTES, MAIL]), &[Event::Timer])
}

#[test]
fn an_unlikely_apps_zram_pages_go_to_storage_at_idle_down_to_the_threshold() {
    let on = "memorch:writeback=on";
    let acts = idle_decision(on, &idle_with_zram(60, 600));
    let wb = writebacks(&acts);
    assert_eq!(wb.len(), 1, "one writeback a decision: {acts:?}");
    let (pid, bytes) = wb[0];
    assert_eq!(pid, NOTES, "notes, in one session of five, not mail, in all: {acts:?}");
    // zram is 60 % of 256 MiB full: 25.6 MiB over the half at which unlikely apps' pages go
    // to storage anyway; no more than that is moved.
    let over = 256 * MIB / 10;
    assert!(bytes <= over + 4096 && bytes > over - MIB, "{bytes} bytes, zram {over} over: {acts:?}");
    let a = acts.iter().find(|a| matches!(a.kind, ActionKind::Writeback { .. })).unwrap();
    assert_eq!(a.reason.step, Step::Writeback);
    assert!(a.reason.text.contains("from zram to a storage file of its own"), "{}", a.reason.text);
}

#[test]
fn nothing_is_written_back_while_someone_waits_zram_has_room_or_the_switch_is_off() {
    let on = "memorch:writeback=on";
    let half = idle_with_zram(45, 600);
    assert!(writebacks(&idle_decision(on, &half)).is_empty(), "zram under half full: its room is the likely apps'");
    // As the preset ships (the switch off): zram is left as it is.
    assert!(writebacks(&idle_decision("memorch", &idle_with_zram(90, 600))).is_empty());
    // The critical band, its margin and a piece must stay available (a piece is read back
    // before it goes out again): 51 + 20 + 8 MiB of 1 GiB.
    let short = idle_decision(on, &idle_with_zram(90, 70));
    assert!(writebacks(&short).is_empty(), "{short:?}");
    // The screen on: the user may be waiting for the CPU and the memory a piece takes.
    let (mut e, t) = five_sessions(on);
    decide(&mut e, t + 500, &snap(1024, 700, 0), &apps(None, &[NOTES, MAIL]), &[Event::Screen { on: true }]);
    let lit = decide(&mut e, t + 1_000, &idle_with_zram(90, 600), &apps(None, &[NOTES, MAIL]), &[Event::Timer]);
    assert!(writebacks(&lit).is_empty(), "{lit:?}");
    // A likely app never: with the threshold under notes' chance, nothing goes.
    assert!(writebacks(&idle_decision("memorch:swap.writeback_below=0.1", &idle_with_zram(90, 600))).is_empty());
}

/// A writeback that found little of the app in zram (its swap was in storage already) is not
/// asked of that app again until it has been in front; the next unlikely app is asked instead.
#[test]
fn an_app_with_little_in_zram_is_not_asked_again_until_it_is_back_in_front() {
    let (mut e, t) = five_sessions("memorch:writeback=on,swap.writeback_below=1.01");
    let s = idle_with_zram(90, 600);
    let running = apps(None, &[NOTES, MAIL]);
    let input = memorch_core::engine::Input { now_ms: t + 500, snapshot: &s, apps: &running, events: &[Event::Timer] };
    let first = e.decide(&input);
    assert_eq!(writebacks(&first).first().map(|w| w.0), Some(NOTES), "{first:?}");
    // Done, but nothing of it was in zram.
    let outcomes: Vec<Outcome> =
        first.iter().map(|a| Outcome { action: a, done: true, failed: false, bytes: Some(0) }).collect();
    e.learn(&input, &outcomes);
    // Every writeback below found nothing in zram either.
    let dry = |e: &mut Engine, now_ms: u64| {
        let input = memorch_core::engine::Input { now_ms, snapshot: &s, apps: &running, events: &[Event::Timer] };
        let acts = e.decide(&input);
        e.learn(
            &input,
            &acts.iter().map(|a| Outcome { action: a, done: true, failed: false, bytes: Some(0) }).collect::<Vec<_>>(),
        );
        writebacks(&acts).iter().map(|w| w.0).collect::<Vec<u32>>()
    };
    assert_eq!(dry(&mut e, t + 750), vec![MAIL], "notes is dry: mail next");
    assert!(dry(&mut e, t + 1_000).is_empty(), "both dry: nothing asked");
    // Notes back in front and away again: it may be asked again; mail, still dry, not.
    decide(
        &mut e,
        t + 1_500,
        &snap(1024, 700, 0),
        &apps(Some(NOTES), &[NOTES, MAIL]),
        &[Event::Screen { on: true }, Event::AppState { pid: NOTES, class: Class::Foreground }],
    );
    decide(
        &mut e,
        t + 2_500,
        &snap(1024, 700, 0),
        &running,
        &[Event::AppState { pid: NOTES, class: Class::Previous }, Event::Screen { on: false }],
    );
    assert_eq!(dry(&mut e, t + 3_000), vec![NOTES]);
}

/// A writeback the executor refused (zram's swap type not known, no file to be made) is not
/// asked of that app again until it has been in front, as one that found nothing; one not
/// tried (a dry run) is asked again at the next decision.
#[test]
fn a_refused_writeback_is_not_asked_again_and_a_dry_run_one_is() {
    let s = idle_with_zram(90, 600);
    let running = apps(None, &[NOTES, MAIL]);
    let asked = |e: &mut Engine, now_ms: u64, refused: bool| {
        let input = memorch_core::engine::Input { now_ms, snapshot: &s, apps: &running, events: &[Event::Timer] };
        let acts = e.decide(&input);
        e.learn(
            &input,
            &acts.iter().map(|a| if refused { Outcome::failed(a) } else { Outcome::undone(a) }).collect::<Vec<_>>(),
        );
        writebacks(&acts).iter().map(|w| w.0).collect::<Vec<u32>>()
    };
    let spec = "memorch:writeback=on,swap.writeback_below=1.01";
    let (mut e, t) = five_sessions(spec);
    assert_eq!(asked(&mut e, t + 500, true), vec![NOTES]);
    assert_eq!(asked(&mut e, t + 750, true), vec![MAIL], "notes refused: mail next");
    assert!(asked(&mut e, t + 1_000, true).is_empty(), "both refused: nothing asked");

    let (mut e, t) = five_sessions(spec);
    assert_eq!(asked(&mut e, t + 500, false), vec![NOTES]);
    assert_eq!(asked(&mut e, t + 750, false), vec![NOTES], "not tried: asked again");
}
