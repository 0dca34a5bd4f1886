//! How likely a return is, judged by usage sessions (`kill.return_by_sessions`, on in the
//! `memorch` preset; `memorch:sessions=off` judges it by recency and front counts), on the
//! pure engine: the app used in the session in progress is spared before one used often in
//! an earlier session.

mod common;
use common::*;
use memorch_core::engine::{Action, ActionKind, App, Event};
use memorch_core::Class;

/// The pids of the compactions a decision asks for, in order.
fn squeezes(actions: &[Action]) -> Vec<u32> {
    actions.iter().filter_map(|a| if let ActionKind::Compact { pid, .. } = a.kind { Some(pid) } else { None }).collect()
}

fn to_front(pid: u32) -> Event {
    Event::AppState { pid, class: Class::Foreground }
}

/// The app leaving the front, as a launcher tells it.
fn away(pid: u32) -> Event {
    Event::AppState { pid, class: Class::Previous }
}

/// `maps` (10) in front five times in a first session (between visits to `feed`, 13, too
/// small to squeeze), `mail` (11) once; the screen off and on (unless `screen_off` is false);
/// then `mail` returned to and `chat` (12) launched; then available memory falls below the
/// low band with `maps` and `mail` cached. The apps squeezed, in order.
fn squeezed_under_pressure(spec: &str, screen_off: bool) -> Vec<u32> {
    squeezes(&under_pressure(spec, screen_off, &snap(1024, 100, 0)))
}

/// The sessions of [`squeezed_under_pressure`], then one decision on `short` (a snapshot
/// with available memory under the low band): its actions.
fn under_pressure(spec: &str, screen_off: bool, short: &memorch_core::Snapshot) -> Vec<Action> {
    let plenty = snap(1024, 700, 0);
    let mut e = engine(spec);
    let with = |front: u32, running: &[u32]| -> Vec<App> {
        [(10, "maps", 100), (11, "mail", 100), (12, "chat", 100), (13, "feed", 1)]
            .iter()
            .filter(|(pid, ..)| running.contains(pid))
            .map(|&(pid, name, mb)| app(pid, name, if pid == front { Class::Foreground } else { Class::Cached }, mb))
            .collect()
    };
    let launched = |app: &str, pid: u32| Event::Launched { app: app.into(), pid, ms: 400, cold: true };
    decide(&mut e, 1_000, &plenty, &with(10, &[10]), &[launched("maps", 10)]);
    decide(&mut e, 2_000, &plenty, &with(11, &[10, 11]), &[away(10), launched("mail", 11)]);
    decide(&mut e, 3_000, &plenty, &with(13, &[10, 11, 13]), &[away(11), launched("feed", 13)]);
    // Each switch told as the daemon gives it: the app leaving, the app back, and the list
    // as it is after the switch.
    for t in [4_000, 6_000, 8_000, 10_000] {
        decide(&mut e, t, &plenty, &with(10, &[10, 11, 13]), &[away(13), to_front(10)]);
        decide(&mut e, t + 1_000, &plenty, &with(13, &[10, 11, 13]), &[away(10), to_front(13)]);
    }
    let all = [10, 11, 12, 13];
    if screen_off {
        decide(&mut e, 12_000, &plenty, &with(0, &[10, 11, 13]), &[Event::Screen { on: false }]);
        decide(&mut e, 17_000, &plenty, &with(0, &[10, 11, 13]), &[Event::Screen { on: true }]);
    }
    decide(&mut e, 18_000, &plenty, &with(11, &[10, 11, 13]), &[away(13), to_front(11)]);
    decide(&mut e, 18_500, &plenty, &with(0, &[10, 11, 13]), &[away(11)]);
    decide(&mut e, 19_000, &plenty, &with(12, &all), &[launched("chat", 12)]);
    decide(&mut e, 20_000, short, &with(12, &all), &[Event::Timer])
}

/// 100 MiB available of 1 GiB (23 MiB under memorch's low band, 12 %), its zram (256 MiB)
/// `zram_pct` full.
fn short_with_zram(zram_pct: u64) -> memorch_core::Snapshot {
    let mut s = snap(1024, 100, 0);
    s.swap.devices[0].used_bytes = s.swap.devices[0].size_bytes * zram_pct / 100;
    s.swap.used_bytes = s.swap.devices[0].used_bytes;
    s
}

/// The squeezes a decision sends to a storage file of their own (`to_storage`), by pid.
fn to_storage(actions: &[Action]) -> Vec<u32> {
    actions
        .iter()
        .filter_map(|a| if let ActionKind::Compact { pid, to_storage: true, .. } = a.kind { Some(pid) } else { None })
        .collect()
}

/// A file made for an unlikely app's squeeze, above zram in priority, is removed once it holds
/// under an eighth of its size (its app came back or went):
/// its room would take the next pages swapped out ahead of zram. One still holding more stays,
/// and so does a storage file below zram however empty it is (the ISOP eraser's, at idle).
/// Removing it reads what it holds back in, so a higher share removes it only where that fits
/// in available memory above the critical band and its margin, and the one holding least goes
/// first.
#[test]
fn a_drained_storage_file_above_zram_is_removed() {
    let drops = |acts: &[Action]| -> Vec<String> {
        acts.iter()
            .filter_map(|a| match &a.kind {
                ActionKind::SwapDropCold { path } => Some(path.clone()),
                _ => None,
            })
            .collect()
    };
    let apps = vec![app(11, "c1", Class::Cached, 50), app(2, "fg", Class::Foreground, 100)];
    let with_files = |free_mb: u64, files: &[(&str, u64, i32)]| {
        let mut s = snap(1024, free_mb, 100);
        for &(path, used_mb, priority) in files {
            s.swap.devices.push(memorch_core::SwapDevice {
                path: path.into(),
                kind: "file".into(),
                size_bytes: 64 * MIB,
                used_bytes: used_mb * MIB,
                priority,
            });
            s.swap.total_bytes += 64 * MIB;
            s.swap.used_bytes += used_mb * MIB;
        }
        s
    };
    let with_file = |used_mb: u64, priority: i32| with_files(600, &[("/swap/memorch-swap-3.swap", used_mb, priority)]);
    let drained = decide(&mut engine("memorch"), 0, &with_file(4, 101), &apps, &[]);
    assert_eq!(drops(&drained), vec!["/swap/memorch-swap-3.swap"], "4 of 64 MiB above zram: removed: {drained:?}");
    let held = decide(&mut engine("memorch"), 0, &with_file(40, 101), &apps, &[]);
    assert!(drops(&held).is_empty(), "40 of 64 MiB: it stays: {held:?}");
    let below = decide(&mut engine("memorch"), 0, &with_file(0, 10), &apps, &[]);
    assert!(drops(&below).is_empty(), "below zram: not this rule's: {below:?}");

    // Of two drained files, the one holding less goes first.
    let two = with_files(600, &[("/swap/memorch-swap-3.swap", 6, 101), ("/swap/memorch-swap-4.swap", 4, 101)]);
    let gone = decide(&mut engine("memorch"), 0, &two, &apps, &[]);
    assert_eq!(drops(&gone), vec!["/swap/memorch-swap-4.swap"], "{gone:?}");
    // What it holds is read back: only where that fits above the critical band and its
    // margin (72 MiB of 1024). (The foreground alone: a squeeze of a cached app in the same
    // decision would count as available what it frees.)
    let apps = &apps[1..];
    let available = |mb: u64| {
        let mut s = with_files(0, &[("/swap/memorch-swap-3.swap", 6, 101)]);
        s.memory.available_bytes = mb * MIB;
        s
    };
    let short = decide(&mut engine("memorch"), 0, &available(75), apps, &[]);
    assert!(drops(&short).is_empty(), "6 MiB to read back with 3 to spare: it stays: {short:?}");
    let fits = decide(&mut engine("memorch"), 0, &available(100), apps, &[]);
    assert_eq!(drops(&fits), vec!["/swap/memorch-swap-3.swap"], "6 MiB with 28 to spare: removed: {fits:?}");
}

/// A return counts toward the app's popularity (`fronts`) by what the events said before,
/// whatever this input's list shows: the app already in front (how the daemon gives a
/// launcher's report or an inferred switch), still cached, or away again within the same
/// input; an app reported in front again while it stays there is not a new return, nor is
/// a launcher's report of the time a return took.
#[test]
fn each_return_counts_once_whichever_way_the_app_list_shows_it() {
    let plenty = snap(1024, 700, 0);
    let list = |front: u32| -> Vec<App> {
        [(10, "maps"), (11, "mail")]
            .iter()
            .map(|&(pid, name)| app(pid, name, if pid == front { Class::Foreground } else { Class::Cached }, 50))
            .collect()
    };
    let launched = |app: &str, pid: u32| Event::Launched { app: app.into(), pid, ms: 400, cold: true };
    let fronts =
        |e: &memorch_core::engine::Engine| ["maps", "mail"].map(|n| e.state.stats.get(n).map_or(0, |s| s.fronts));
    let mut e = engine("memorch");
    decide(&mut e, 1_000, &plenty, &list(10), &[launched("maps", 10)]);
    decide(&mut e, 2_000, &plenty, &list(11), &[away(10), launched("mail", 11)]);
    assert_eq!(fronts(&e), [1, 1], "a launch each");
    // maps back, the list as the daemon gives it: maps already in front.
    decide(&mut e, 3_000, &plenty, &list(10), &[away(11), to_front(10)]);
    assert_eq!(fronts(&e), [2, 1], "maps's return counts");
    decide(&mut e, 3_500, &plenty, &list(10), &[to_front(10)]);
    assert_eq!(fronts(&e), [2, 1], "in front again without leaving: no return");
    // mail back, the list as it was before the switch: mail still cached.
    decide(&mut e, 4_000, &plenty, &list(10), &[away(10), to_front(11)]);
    assert_eq!(fronts(&e), [2, 2], "mail's return counts");
    // maps back and away again within one input (a launcher's report and home, decided
    // together): the list shows it away, and the return counts once.
    decide(&mut e, 5_000, &plenty, &list(11), &[away(11), to_front(10), away(10), Event::Home]);
    assert_eq!(fronts(&e), [3, 2], "maps's second return counts once");
    // A launcher's report of a return once it is served (`Launched`, not cold), the app in
    // front since its switch: counted there, not again; its time is learned.
    decide(&mut e, 6_000, &plenty, &list(10), &[to_front(10)]);
    decide(&mut e, 6_100, &plenty, &list(10), &[Event::Launched { app: "maps".into(), pid: 10, ms: 6, cold: false }]);
    assert_eq!(fronts(&e), [4, 2], "the report of maps's third return counts once");
    assert_eq!(e.state.stats.get("maps").and_then(|s| s.quickest_return_ms), Some(6.0));
}

/// The cost model (`memorch`): an unlikely app's squeeze (maps: not used in the session in
/// progress) goes to a storage file of its own where zram's room left is what the likelier
/// apps (mail) would need, so that their pages stay in zram; with room for both, into zram.
#[test]
fn an_unlikely_apps_squeeze_goes_to_storage_where_zram_has_room_only_for_the_likelier() {
    let full = under_pressure("memorch:sessions=on", true, &short_with_zram(60));
    assert_eq!(squeezes(&full).first(), Some(&10), "maps gives first: {full:?}");
    assert_eq!(to_storage(&full), vec![10], "maps, and only maps, to storage: {full:?}");
    let a = full.iter().find(|a| a.pids() == vec![10]).expect("maps' squeeze");
    assert!(matches!(a.kind, ActionKind::Compact { max_pages: Some(p), .. } if p > 0), "sized, for its file: {a:?}");
    assert!(a.reason.text.contains("storage file of its own"), "{}", a.reason.text);
    let roomy = under_pressure("memorch:sessions=on", true, &short_with_zram(20));
    assert_eq!(squeezes(&roomy).first(), Some(&10), "{roomy:?}");
    assert!(to_storage(&roomy).is_empty(), "zram a fifth full, room for mail too: into zram: {roomy:?}");
    let without = under_pressure("memorch:sessions=on,cost_model=off", true, &short_with_zram(60));
    assert!(to_storage(&without).is_empty(), "without the model: where the kernel puts it: {without:?}");
}

#[test]
fn the_app_of_the_session_in_progress_is_spared_before_an_earlier_favourite() {
    // Sessions: mail was used since the screen came on; maps in one of the two sessions.
    assert_eq!(
        squeezed_under_pressure("memorch:sessions=on", true).first(),
        Some(&10),
        "maps first: not in the session in progress"
    );
}

/// A stall with available memory above the low band (under twice it) is answered only while
/// it goes on (the stall over the last looks over the target, not only `avg10`), and only by
/// the apps unlikely to be wanted soon: `maps`, not in the session in progress, gives;
/// `mail`, used since the screen came on, is spared. Below the band both may give.
#[test]
fn a_stall_near_the_band_takes_from_the_unlikely_apps_while_it_goes_on() {
    // 160 MiB available over a 123 MiB low band, PSI some avg10 5 % (target 1 %); the stall
    // total (µs) grown since the look a second before by `grown_us`.
    let stalled = |grown_us: u64| with_stall_total(with_psi(snap(1024, 150, 10), 5.0, 0.0), grown_us);
    let going_on = squeezes(&under_pressure("memorch", true, &stalled(100_000)));
    assert_eq!(going_on, vec![10], "only maps gives to a stall that goes on: {going_on:?}");
    let ended = squeezes(&under_pressure("memorch", true, &stalled(1_000)));
    assert!(ended.is_empty(), "a stall that ended (avg10 still high) takes nothing: {ended:?}");
    let below = squeezes(&under_pressure("memorch", true, &with_psi(snap(1024, 60, 10), 5.0, 0.0)));
    assert!(below.contains(&10) && below.contains(&11), "below the band both give: {below:?}");
}
