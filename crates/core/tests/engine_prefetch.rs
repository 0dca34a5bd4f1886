//! Reading the app in front back from swap (`memorch:prefetch=on`, ladder/prefetch.rs), on
//! the pure engine.

mod common;
use common::*;
use memorch_core::engine::model::{MIB, PAGE};
use memorch_core::engine::{Action, ActionKind, App, Event, Step};
use memorch_core::Class;

/// (pid, pages) of each read-back a decision asks for.
fn prefetches(actions: &[Action]) -> Vec<(u32, u64)> {
    actions
        .iter()
        .filter_map(|a| match a.kind {
            ActionKind::Prefetch { pid, max_pages, .. } => {
                assert_eq!(a.reason.step, Step::Prefetch);
                Some((pid, max_pages))
            }
            _ => None,
        })
        .collect()
}

/// An app with `swap_mb` of it in swap.
fn swapped(pid: u32, name: &str, class: Class, anon_mb: u64, swap_mb: u64) -> App {
    App { swap_bytes: swap_mb * MIB, ..app(pid, name, class, anon_mb) }
}

fn to_front(pid: u32) -> Event {
    Event::AppState { pid, class: Class::Foreground }
}

#[test]
fn the_app_in_front_is_read_back_once_a_stint_and_again_when_it_comes_back() {
    // 1 GiB, 600 MiB available: far above the low band (12 %).
    let s = snap(1024, 600, 0);
    let apps = [swapped(10, "maps", Class::Foreground, 60, 200), swapped(11, "mail", Class::Cached, 20, 80)];
    // The once-a-stint step alone (the `whole` step, on as shipped, would read on at later
    // decisions of the stint).
    let mut e = engine("memorch:prefetch=on,whole=off");
    let a = decide(&mut e, 1_000, &s, &apps, &[to_front(10)]);
    assert_eq!(
        prefetches(&a),
        vec![(10, 200 * MIB / PAGE)],
        "all of what is in swap, and only the app in front's: {a:#?}"
    );
    // Its swap does not fall until it touches the pages: the same stint asks nothing more.
    assert_eq!(prefetches(&decide(&mut e, 2_000, &s, &apps, &[Event::Timer])), vec![]);
    // mail comes to the front, then maps again: a new stint, read back again.
    let mail_front = [swapped(10, "maps", Class::Previous, 60, 200), swapped(11, "mail", Class::Foreground, 20, 80)];
    assert_eq!(prefetches(&decide(&mut e, 3_000, &s, &mail_front, &[to_front(11)])), vec![(11, 80 * MIB / PAGE)]);
    assert_eq!(prefetches(&decide(&mut e, 4_000, &s, &apps, &[to_front(10)])), vec![(10, 200 * MIB / PAGE)]);
}

#[test]
fn it_reads_back_no_more_than_memory_above_the_low_band_and_nothing_at_the_band() {
    let apps = [swapped(10, "maps", Class::Foreground, 60, 300)];
    let low = (1024.0 * 0.12) as u64; // memorch's low band, MiB of 1 GiB
    let mut e = engine("memorch:prefetch=on");
    let a = decide(&mut e, 1_000, &snap(1024, 200, 0), &apps, &[to_front(10)]);
    let [(10, pages)] = prefetches(&a)[..] else { panic!("one read-back of maps: {a:#?}") };
    let mb = pages * PAGE / MIB;
    assert!(mb <= 200 - low && mb + 1 >= 200 - low, "available 200 MiB, low band {low} MiB: {mb} MiB read back");
    // At the band: nothing read back (the pressure step would only have to push it out again).
    let mut e = engine("memorch:prefetch=on");
    let a = decide(&mut e, 1_000, &snap(1024, low + 2, 0), &apps, &[to_front(10)]);
    assert_eq!(prefetches(&a), vec![], "{a:#?}");
}

#[test]
fn once_a_stint_is_off_by_default_whole_waits_for_the_return_and_neither_reads_an_app_not_in_front() {
    let s = snap(1024, 600, 0);
    let apps = [swapped(10, "maps", Class::Foreground, 60, 200), swapped(11, "mail", Class::Cached, 20, 80)];
    assert_eq!(prefetches(&decide(&mut engine("memorch"), 1_000, &s, &apps, &[to_front(10)])), vec![]);
    let cached_only = [swapped(11, "mail", Class::Cached, 20, 80), swapped(12, "feed", Class::Previous, 20, 80)];
    assert_eq!(
        prefetches(&decide(&mut engine("memorch:prefetch=on"), 1_000, &s, &cached_only, &[Event::Timer])),
        vec![]
    );
}

/// (pid, bytes asked) of each compaction a decision asks for.
fn squeezes(actions: &[Action]) -> Vec<u32> {
    actions.iter().filter_map(|a| if let ActionKind::Compact { pid, .. } = a.kind { Some(pid) } else { None }).collect()
}

/// `memorch:refill=on`: with the screen off, the app likeliest to be wanted is read back,
/// room made from an app unlikely to be (away for an hour); never the reverse, never below
/// the room the idle step keeps, and nothing with the screen on or the switch off.
/// `fav` (pid 12) launched five times just now, then in front and left for home: the app
/// most likely to be wanted soon.
fn favourite_history(e: &mut memorch_core::engine::Engine, apps: &[App]) {
    for i in 0..5 {
        decide(
            e,
            1_000 * i,
            &snap(1024, 600, 10),
            apps,
            &[Event::Launched { app: "fav".into(), pid: 12, ms: 300, cold: i == 0 }],
        );
    }
    decide(e, 6_000, &snap(1024, 600, 10), apps, &[to_front(12), Event::Home]);
}

#[test]
fn at_idle_the_likely_app_is_read_back_and_room_made_from_the_unlikely_one() {
    // `fav` came to the front five times just now and has 200 MiB in swap; `old` has been
    // away for an hour with 150 MiB resident.
    let old = App { age_ms: 3_600_000, ..app(11, "old", Class::Cached, 150) };
    let apps = vec![old, swapped(12, "fav", Class::Cached, 60, 200)];
    let history = |e: &mut memorch_core::engine::Engine| favourite_history(e, &apps);
    let off = [Event::Screen { on: false }];
    // 1 GiB, 200 MiB available: above the low band (123 MiB) and its margin, short of room.
    let s = snap(1024, 200, 0);
    let mut e = engine("memorch:sessions=off,popularity=on,refill=on");
    history(&mut e);
    let a = decide(&mut e, 7_000, &s, &apps, &off);
    let read = prefetches(&a);
    assert_eq!(read.len(), 1, "one read-back: {a:#?}");
    assert_eq!(read[0].0, 12, "of the likely app: {a:#?}");
    let mb = read[0].1 * PAGE / MIB;
    assert!((4..=64).contains(&mb), "a step of at most a sixteenth of the domain: {mb} MiB");
    assert!(squeezes(&a).contains(&11) && !squeezes(&a).contains(&12), "room from the unlikely app only: {a:#?}");
    // An idle period reads back at most an eighth of the domain: a second step, then none
    // until the screen has been on and off again.
    let plenty = snap(1024, 600, 0);
    assert_eq!(prefetches(&decide(&mut e, 7_250, &plenty, &apps, &[Event::Timer])).len(), 1);
    assert_eq!(
        prefetches(&decide(&mut e, 7_500, &plenty, &apps, &[Event::Timer])),
        vec![],
        "an eighth of the domain this period"
    );
    decide(&mut e, 8_000, &plenty, &apps, &[Event::Screen { on: true }]);
    assert_eq!(prefetches(&decide(&mut e, 9_000, &plenty, &apps, &off)).len(), 1, "the next idle period carries on");
    // Nothing less likely to take from and no room above what the idle step keeps: nothing.
    let likely_only = vec![swapped(12, "fav", Class::Cached, 60, 200)];
    let mut e = engine("memorch:sessions=off,popularity=on,refill=on");
    history(&mut e);
    let a = decide(&mut e, 7_000, &snap(1024, 140, 0), &likely_only, &off);
    assert_eq!(prefetches(&a), vec![], "{a:#?}");
    // Screen on, or the switch off (the preset as shipped): nothing read back.
    let mut e = engine("memorch:sessions=off,popularity=on,refill=on");
    history(&mut e);
    assert_eq!(prefetches(&decide(&mut e, 7_000, &s, &apps, &[Event::Timer])), vec![]);
    let mut e = engine("memorch");
    history(&mut e);
    assert_eq!(prefetches(&decide(&mut e, 7_000, &s, &apps, &off)), vec![]);
}

/// `memorch:refill=on` judged by sessions (`kill.return_by_sessions`, on as shipped): with the
/// screen off, the app read back is the one used in the most sessions (`fav`, three of four),
/// not the one of the session the screen-off just ended (`last`, one of four), and the room
/// comes from an app in half as many sessions or fewer (`rare`, never in front), never from
/// `fav`. Below a quarter of the sessions no app is taken as likely.
#[test]
fn at_idle_the_app_of_the_most_sessions_is_read_back_not_the_last_sessions() {
    let plenty = snap(1024, 700, 0);
    let rare = App { age_ms: 3_600_000, ..app(11, "rare", Class::Cached, 150) };
    let apps = vec![rare, swapped(12, "fav", Class::Cached, 60, 200), swapped(13, "last", Class::Cached, 60, 200)];
    let back = |app: &str, pid: u32, cold: bool| Event::Launched { app: app.into(), pid, ms: 300, cold };
    let off = || Event::Screen { on: false };
    let on = || Event::Screen { on: true };
    // Four sessions: `fav` in the first three, `last` in the fourth only.
    let sessions = |e: &mut memorch_core::engine::Engine| {
        decide(e, 1_000, &plenty, &apps, &[back("fav", 12, true), Event::Home, off()]);
        for (i, (name, pid)) in [("fav", 12), ("fav", 12), ("last", 13)].into_iter().enumerate() {
            let t = 10_000 * (i as u64 + 1);
            decide(e, t, &plenty, &apps, &[on()]);
            decide(e, t + 1_000, &plenty, &apps, &[back(name, pid, name == "last"), Event::Home]);
            if i < 2 {
                decide(e, t + 2_000, &plenty, &apps, &[off()]);
            }
        }
    };
    // 1 GiB, 200 MiB available: above the low band and its margin, short of room.
    let s = snap(1024, 200, 0);
    let mut e = engine("memorch:refill=on");
    sessions(&mut e);
    let a = decide(&mut e, 40_000, &s, &apps, &[off()]);
    assert_eq!(
        prefetches(&a).iter().map(|p| p.0).collect::<Vec<_>>(),
        vec![12],
        "fav, in three sessions of four: {a:#?}"
    );
    assert!(squeezes(&a).contains(&11), "room from rare: {a:#?}");
    assert!(!squeezes(&a).contains(&12), "never from the app read back: {a:#?}");
    let r = a.iter().find(|a| matches!(a.kind, ActionKind::Prefetch { .. })).unwrap();
    assert!(r.reason.text.contains("in 75 % of the sessions"), "{}", r.reason.text);
    // Judged by recency and fronts instead (`sessions=off`), `last`, in front last, is read
    // back first: the screen-off's session counted as the one in progress.
    let mut e = engine("memorch:sessions=off,refill=on");
    sessions(&mut e);
    assert_eq!(
        prefetches(&decide(&mut e, 40_000, &s, &apps, &[off()])).iter().map(|p| p.0).collect::<Vec<_>>(),
        vec![13]
    );
    // Every app in fewer than a quarter of the sessions: nothing is read back.
    let seldom = vec![
        App { age_ms: 3_600_000, ..app(11, "rare", Class::Cached, 150) },
        swapped(14, "once", Class::Cached, 60, 200),
    ];
    let mut e = engine("memorch:refill=on");
    decide(&mut e, 1_000, &plenty, &seldom, &[back("once", 14, true), Event::Home, off()]);
    for i in 1..5u64 {
        decide(&mut e, 10_000 * i, &plenty, &seldom, &[on()]);
        decide(&mut e, 10_000 * i + 2_000, &plenty, &seldom, &[off()]);
    }
    assert_eq!(
        prefetches(&decide(&mut e, 60_000, &s, &seldom, &[Event::Timer])),
        vec![],
        "once: in one session of five"
    );
}

/// `memorch:whole=on` (on as shipped): the app in front is read back once its return is served (not in the
/// decision that brings it to the front), a piece a decision, down to the critical band and
/// its margin rather than the low band, at most half the domain a stint; a new stint starts
/// the count again.
#[test]
fn whole_reads_the_app_in_front_back_a_piece_a_decision_after_its_return() {
    let apps = [swapped(10, "maps", Class::Foreground, 60, 300), swapped(11, "mail", Class::Cached, 20, 80)];
    // 1 GiB, 100 MiB available: below the low band (123 MiB), above the critical band and its
    // margin (5 % + 2 %: 71 MiB).
    let s = snap(1024, 100, 0);
    let mut e = engine("memorch:whole=on");
    assert_eq!(
        prefetches(&decide(&mut e, 1_000, &s, &apps, &[to_front(10)])),
        vec![],
        "not while its return is served"
    );
    let a = decide(&mut e, 1_250, &s, &apps, &[Event::Timer]);
    let [(10, pages)] = prefetches(&a)[..] else { panic!("one read-back of maps once served: {a:#?}") };
    assert_eq!(pages * PAGE, 16 * MIB, "a piece: a 64th of the domain");
    // Down to the floor and no further (maps alone: no squeeze of another app's to count).
    let alone = [swapped(10, "maps", Class::Foreground, 60, 300)];
    let near = snap(1024, 80, 0);
    let a = decide(&mut e, 1_500, &near, &alone, &[Event::Timer]);
    let [(10, pages)] = prefetches(&a)[..] else { panic!("what is above the floor: {a:#?}") };
    let floor = (1024.0 * 0.07) as u64;
    assert!(
        (pages * PAGE / MIB).abs_diff(80 - floor) <= 1,
        "80 MiB available, floor {floor} MiB: {} MiB",
        pages * PAGE / MIB
    );
    assert_eq!(
        prefetches(&decide(&mut e, 1_750, &snap(1024, floor + 2, 0), &alone, &[Event::Timer])),
        vec![],
        "at the floor"
    );
    // Two apps in front (a split screen): together, no further than the floor.
    let two = [swapped(10, "maps", Class::Foreground, 60, 300), swapped(12, "docs", Class::Foreground, 60, 300)];
    let mut e = engine("memorch:whole=on");
    decide(&mut e, 1_000, &near, &two, &[to_front(10), to_front(12)]);
    let read: u64 =
        prefetches(&decide(&mut e, 1_250, &near, &two, &[Event::Timer])).iter().map(|p| p.1 * PAGE / MIB).sum();
    assert!(read.abs_diff(80 - floor) <= 1, "both read back {read} MiB of the {} MiB above the floor", 80 - floor);
    // Half the domain a stint: with plenty of room, 512 MiB in 16 MiB pieces, then nothing.
    let mut e = engine("memorch:whole=on");
    let big = [swapped(10, "maps", Class::Foreground, 60, 900)];
    let plenty = snap(1024, 600, 0);
    decide(&mut e, 1_000, &plenty, &big, &[to_front(10)]);
    let mut read = 0;
    for i in 1..=40 {
        read += prefetches(&decide(&mut e, 1_000 + 250 * i, &plenty, &big, &[Event::Timer]))
            .iter()
            .map(|p| p.1 * PAGE)
            .sum::<u64>();
    }
    assert_eq!(read, 512 * MIB, "half the domain in a stint");
    // Back in front: a new stint.
    decide(&mut e, 20_000, &plenty, &big, &[to_front(10)]);
    assert_eq!(prefetches(&decide(&mut e, 20_250, &plenty, &big, &[Event::Timer])).len(), 1, "a new stint reads again");
    // On as shipped; off when switched off.
    let mut e = engine("memorch");
    decide(&mut e, 1_000, &s, &apps, &[to_front(10)]);
    assert_eq!(prefetches(&decide(&mut e, 1_250, &s, &apps, &[Event::Timer])).len(), 1);
    let mut e = engine("memorch:whole=off");
    decide(&mut e, 1_000, &s, &apps, &[to_front(10)]);
    assert_eq!(prefetches(&decide(&mut e, 1_250, &s, &apps, &[Event::Timer])), vec![]);
}

/// `detection.whole_stops_at_low_band`: the whole read-back reads into what is above the low
/// band and its margin only (12 % + 2 % of 1 GiB: 143 MiB), where as shipped it goes on down
/// to the critical band's floor (71 MiB).
#[test]
fn whole_stops_at_the_low_band_when_asked() {
    let alone = [swapped(10, "maps", Class::Foreground, 60, 300)];
    let read_at = |spec: &str, available_mb: u64| {
        let mut e = engine(spec);
        let s = snap(1024, available_mb, 0);
        decide(&mut e, 1_000, &s, &alone, &[to_front(10)]);
        prefetches(&decide(&mut e, 1_250, &s, &alone, &[Event::Timer])).iter().map(|p| p.1 * PAGE / MIB).sum::<u64>()
    };
    let low_floor = (1024.0 * 0.14) as u64;
    // 100 MiB available: under the low band's floor, above the critical band's.
    assert_eq!(read_at("memorch", 100), 16, "as shipped: a piece");
    assert_eq!(read_at("memorch:detection.whole_stops_at_low_band=true", 100), 0, "nothing under the low band's floor");
    // 150 MiB available: what is above the low band's floor.
    let read = read_at("memorch:detection.whole_stops_at_low_band=true", 150);
    assert!(read.abs_diff(150 - low_floor) <= 1, "150 MiB available, floor {low_floor} MiB: {read} MiB");
}

/// `detection.whole_stops_when_churning`: after two apps were read back whole in turn (640
/// MiB within a minute, more than half of 1 GiB), the next whole read-back stops at the low
/// band's floor (143 MiB); with 100 MiB available it reads nothing, where as shipped, or
/// before the round, it reads a piece.
#[test]
fn whole_stops_at_the_low_band_while_the_apps_go_round_when_asked() {
    let apps = |front: u32| {
        let class = |pid| if pid == front { Class::Foreground } else { Class::Previous };
        vec![
            swapped(10, "a", class(10), 60, 400),
            swapped(11, "b", class(11), 60, 400),
            swapped(12, "c", class(12), 60, 300),
        ]
    };
    let read_at_the_end = |spec: &str, rounds: &[u32]| {
        let mut e = engine(spec);
        let plenty = snap(1024, 600, 0);
        let mut t = 1_000;
        for &front in rounds {
            decide(&mut e, t, &plenty, &apps(front), &[to_front(front)]);
            for i in 1..=20 {
                decide(&mut e, t + 300 + 100 * i, &plenty, &apps(front), &[Event::Timer]);
            }
            t += 5_000;
        }
        let short = snap(1024, 100, 0);
        decide(&mut e, t, &short, &apps(12), &[to_front(12)]);
        prefetches(&decide(&mut e, t + 250, &short, &apps(12), &[Event::Timer]))
            .iter()
            .map(|p| p.1 * PAGE / MIB)
            .sum::<u64>()
    };
    let spec = "memorch:detection.whole_stops_when_churning=true";
    assert_eq!(read_at_the_end(spec, &[10, 11]), 0, "the apps go round: nothing under the low band's floor");
    assert_eq!(read_at_the_end(spec, &[10]), 16, "one app's read-back (320 MiB) is no round: a piece");
    assert_eq!(read_at_the_end("memorch", &[10, 11]), 16, "as shipped: a piece down to the critical band's floor");
}

/// `detection.whole_below_low_favourites_only`: under the low band and its margin, the whole
/// read-back goes on for a favourite (brought to the front at least half as often as the most
/// visited app running) and stops for an app the user comes back to less.
#[test]
fn under_the_low_band_only_a_favourite_is_read_back_whole_when_asked() {
    // 100 MiB available of 1 GiB: under the low band's floor (143 MiB), above the critical
    // band's (71 MiB).
    let s = snap(1024, 100, 0);
    let read = |spec: &str, mail_fronts: u64| {
        let mut e = engine(spec);
        let away = [swapped(10, "maps", Class::Cached, 60, 300), app(11, "mail", Class::Cached, 20)];
        let mut t = 0;
        for _ in 0..mail_fronts {
            t += 1_000;
            decide(&mut e, t, &s, &away, &[to_front(11), Event::AppState { pid: 11, class: Class::Cached }]);
        }
        // maps comes back once, and is in front when its return is served.
        decide(&mut e, t + 1_000, &s, &away, &[to_front(10)]);
        let front = [swapped(10, "maps", Class::Foreground, 60, 300), app(11, "mail", Class::Cached, 20)];
        prefetches(&decide(&mut e, t + 1_250, &s, &front, &[Event::Timer]))
            .iter()
            .map(|p| p.1 * PAGE / MIB)
            .sum::<u64>()
    };
    let on = "memorch:sessions=off,popularity=on,detection.whole_below_low_favourites_only=true";
    assert_eq!(read("memorch", 4), 16, "as shipped: a piece, favourite or not");
    assert_eq!(read(on, 4), 0, "maps in front once against mail's four times: not a favourite");
    assert_eq!(read(on, 1), 16, "once each: a favourite");
}

/// A read-back that found little of what it asked for in swap (a JVM's swap in memory the
/// read-back does not reach) is not asked again while the app stays in front, nor at idle,
/// until it comes back to the front; one that read what it asked goes on.
#[test]
fn a_read_back_that_finds_little_in_swap_is_not_asked_again_until_the_app_comes_back() {
    use memorch_core::engine::{Input, Outcome};
    let plenty = snap(1024, 600, 0);
    let front = [swapped(10, "maps", Class::Foreground, 60, 40)];
    // One decision of the stint, its read-back carried out as reading `read(asked)` bytes.
    let step = |e: &mut memorch_core::engine::Engine, now_ms: u64, read: &dyn Fn(u64) -> u64| {
        let input = Input { now_ms, snapshot: &plenty, apps: &front, events: &[Event::Timer] };
        let acts = e.decide(&input);
        let outcomes: Vec<Outcome> = acts
            .iter()
            .map(|a| Outcome {
                action: a,
                done: true,
                failed: false,
                bytes: match a.kind {
                    ActionKind::Prefetch { max_pages, .. } => Some(read(max_pages * PAGE)),
                    _ => None,
                },
            })
            .collect();
        e.learn(&input, &outcomes);
        prefetches(&acts)
    };
    let mut e = engine("memorch");
    decide(&mut e, 1_000, &plenty, &front, &[to_front(10)]);
    assert_eq!(step(&mut e, 1_250, &|_| 0).len(), 1, "read back once its return is served");
    // It read nothing: the rest of the stint asks nothing, though 40 MiB stay in swap.
    for i in 2..8 {
        assert_eq!(step(&mut e, 1_000 + 250 * i, &|asked| asked), vec![], "decision {i} of the stint");
    }
    // Away for a while.
    let away = [swapped(10, "maps", Class::Cached, 60, 40)];
    decide(&mut e, 3_000, &plenty, &away, &[Event::AppState { pid: 10, class: Class::Cached }]);
    // Back in front: a new stint, read back again, and a read-back that reads what it asks
    // goes on at the next decision.
    decide(&mut e, 5_000, &plenty, &front, &[to_front(10)]);
    assert_eq!(step(&mut e, 5_250, &|asked| asked).len(), 1, "a new stint reads again");
    assert_eq!(step(&mut e, 5_500, &|asked| asked).len(), 1, "it read what it asked: on");
    // A read of less than a quarter of what was asked counts as little.
    assert_eq!(step(&mut e, 5_750, &|asked| asked / 5).len(), 1);
    assert_eq!(step(&mut e, 6_000, &|asked| asked), vec![]);
}

/// At idle (`refill=on`), an app whose last read-back found little in swap is not read back,
/// and no room is made for it.
#[test]
fn at_idle_an_app_whose_read_back_found_little_is_left_alone() {
    use memorch_core::engine::{Input, Outcome};
    let old = App { age_ms: 3_600_000, ..app(11, "old", Class::Cached, 150) };
    let apps = vec![old, swapped(12, "fav", Class::Cached, 60, 200)];
    let off = [Event::Screen { on: false }];
    let s = snap(1024, 200, 0);
    let history = |e: &mut memorch_core::engine::Engine| favourite_history(e, &apps);
    let mut e = engine("memorch:sessions=off,popularity=on,refill=on");
    history(&mut e);
    let input = Input { now_ms: 7_000, snapshot: &s, apps: &apps, events: &off };
    let acts = e.decide(&input);
    assert_eq!(prefetches(&acts).len(), 1, "{acts:#?}");
    // The read-back found nothing to read.
    let outcomes: Vec<Outcome> = acts
        .iter()
        .map(|a| Outcome {
            action: a,
            done: true,
            failed: false,
            bytes: matches!(a.kind, ActionKind::Prefetch { .. }).then_some(0),
        })
        .collect();
    e.learn(&input, &outcomes);
    let a = decide(&mut e, 7_250, &s, &apps, &[Event::Timer]);
    assert_eq!(prefetches(&a), vec![], "{a:#?}");
    assert!(!squeezes(&a).contains(&11), "no room made for it: {a:#?}");
}

/// A read-back the executor refused (the app out of the domain's reach, say) is not asked
/// again in that stint, as one that found little; one not tried (a dry run) is.
#[test]
fn a_refused_read_back_is_not_asked_again_in_the_stint_and_a_dry_run_one_is() {
    use memorch_core::engine::{Input, Outcome};
    let plenty = snap(1024, 600, 0);
    let front = [swapped(10, "maps", Class::Foreground, 60, 40)];
    let step = |e: &mut memorch_core::engine::Engine, now_ms: u64, refused: bool| {
        let input = Input { now_ms, snapshot: &plenty, apps: &front, events: &[Event::Timer] };
        let acts = e.decide(&input);
        e.learn(
            &input,
            &acts.iter().map(|a| if refused { Outcome::failed(a) } else { Outcome::undone(a) }).collect::<Vec<_>>(),
        );
        prefetches(&acts).len()
    };
    let mut e = engine("memorch");
    decide(&mut e, 1_000, &plenty, &front, &[to_front(10)]);
    assert_eq!(step(&mut e, 1_250, false), 1, "read back once its return is served");
    assert_eq!(step(&mut e, 1_500, false), 1, "not tried: asked again");
    assert_eq!(step(&mut e, 1_750, true), 1);
    assert_eq!(step(&mut e, 2_000, true), 0, "refused: not asked again in the stint");
}

/// `detection.whole_paid_by_rare`: under the low band and its margin (143 MiB of 1 GiB), the
/// whole read-back reads only what the rarely visited apps (in front less than half as often
/// as the most visited) can give, and while it goes on the pressure step takes nothing from
/// an app the user keeps coming back to; as shipped such an app pays for it.
#[test]
fn under_the_low_band_the_whole_read_back_is_paid_by_rarely_visited_apps_only_when_asked() {
    let on = "memorch:detection.whole_paid_by_rare=true";
    let shipped = "memorch";
    // `fav` came to the front five times just now; `old` has been away for an hour and was
    // never in front; `maps` comes to the front with 300 MiB in swap.
    let fav = app(12, "fav", Class::Cached, 120);
    let old = App { age_ms: 3_600_000, ..app(11, "old", Class::Cached, 300) };
    let history = |e: &mut memorch_core::engine::Engine, apps: &[App]| {
        for i in 0..5 {
            decide(
                e,
                1_000 * i,
                &snap(1024, 600, 10),
                apps,
                &[Event::Launched { app: "fav".into(), pid: 12, ms: 300, cold: i == 0 }],
            );
        }
        decide(e, 6_000, &snap(1024, 600, 10), apps, &[to_front(10)]);
    };
    // MiB read back whole once maps's return is served, with `available_mb` available.
    let read = |spec: &str, background: &[App], available_mb: u64| {
        let apps: Vec<App> =
            [swapped(10, "maps", Class::Foreground, 60, 300)].into_iter().chain(background.iter().cloned()).collect();
        let mut e = engine(spec);
        history(&mut e, &apps);
        prefetches(&decide(&mut e, 6_250, &snap(1024, available_mb, 0), &apps, &[Event::Timer]))
            .iter()
            .map(|p| p.1 * PAGE / MIB)
            .sum::<u64>()
    };
    // 100 MiB available: under the low band's floor, above the critical band's (71 MiB).
    assert_eq!(read(shipped, std::slice::from_ref(&fav), 100), 16, "as shipped: a piece, whoever pays");
    assert_eq!(read(on, std::slice::from_ref(&fav), 100), 0, "only the favourite could pay: nothing under the floor");
    assert_eq!(read(on, &[fav.clone(), old.clone()], 100), 16, "a rarely visited app can pay: a piece");
    // Above the low band's floor it reads as shipped, with only the favourite behind.
    assert_eq!(read(on, std::slice::from_ref(&fav), 400), 16);

    // Read back at 400 MiB, then memory falls under the low band (123 MiB) while maps is
    // still in front: the favourite gives as shipped, not with the switch.
    let squeezed = |spec: &str| {
        let apps = [swapped(10, "maps", Class::Foreground, 60, 300), fav.clone()];
        let mut e = engine(spec);
        history(&mut e, &apps);
        assert_eq!(
            prefetches(&decide(&mut e, 6_250, &snap(1024, 400, 0), &apps, &[Event::Timer])).len(),
            1,
            "{spec}: read back whole"
        );
        squeezes(&decide(&mut e, 6_500, &snap(1024, 100, 0), &apps, &[Event::Timer]))
    };
    assert_eq!(squeezed(shipped), vec![12], "as shipped the favourite pays");
    assert_eq!(squeezed(on), Vec::<u32>::new(), "with the switch it is spared while maps is read back whole");
}

/// (pid, pages) of each ask for pages on storage a decision makes (`swap.ahead_at_return`).
fn asks_ahead(actions: &[Action]) -> Vec<(u32, u64)> {
    actions
        .iter()
        .filter_map(|a| {
            if let ActionKind::ReadAhead { pid, max_pages, .. } = a.kind {
                Some((pid, max_pages))
            } else {
                None
            }
        })
        .collect()
}

/// `memorch:swap.ahead_at_return=true`: an app that comes back to the front has its pages on
/// storage asked for at once, while its return is being served, once a stint, as far as
/// memory above the whole read-back's floor holds; not once its return is served (the whole
/// read-back's), nor while no storage file holds pages, and never as memorch ships.
#[test]
fn a_return_asks_for_its_pages_on_storage_at_once_while_it_is_served() {
    let mut s = snap(1024, 600, 0);
    s.swap.devices.push(memorch_core::SwapDevice {
        path: "/swap/memorch-swap-0.swap".into(),
        kind: "file".into(),
        size_bytes: 256 * MIB,
        used_bytes: 100 * MIB,
        priority: -2,
    });
    let apps = [swapped(10, "maps", Class::Foreground, 60, 200), swapped(11, "mail", Class::Cached, 20, 80)];
    let spec = "memorch:swap.ahead_at_return=true";
    let mut e = engine(spec);
    let a = decide(&mut e, 1_000, &s, &apps, &[to_front(10)]);
    assert_eq!(
        asks_ahead(&a),
        vec![(10, 200 * MIB / PAGE)],
        "all of its swap (the daemon asks only for what is on storage), the app in front's alone: {a:#?}"
    );
    assert!(a.iter().any(|x| matches!(x.kind, ActionKind::ReadAhead { .. }) && x.reason.step == Step::Prefetch));
    // The same stint asks nothing more, even within its return.
    assert_eq!(asks_ahead(&decide(&mut e, 1_050, &s, &apps, &[Event::Timer])), vec![]);
    // mail comes to the front: asked at once; maps again, decided only once its return was
    // served: left to the whole read-back.
    let mail_front = [swapped(10, "maps", Class::Previous, 60, 200), swapped(11, "mail", Class::Foreground, 20, 80)];
    assert_eq!(asks_ahead(&decide(&mut e, 3_000, &s, &mail_front, &[to_front(11)])), vec![(11, 80 * MIB / PAGE)]);
    // maps back with no room (available at the band): nothing asked; room again once its
    // return is served (200 ms on): left to the whole read-back.
    let mut at_band = snap(1024, 60, 0);
    at_band.swap.devices = s.swap.devices.clone();
    assert_eq!(asks_ahead(&decide(&mut e, 4_000, &at_band, &apps, &[to_front(10)])), vec![]);
    assert_eq!(asks_ahead(&decide(&mut e, 4_300, &s, &apps, &[Event::Timer])), vec![]);

    // Bounded by memory above the floor: with 200 MiB available, what is over it.
    let mut tight = snap(1024, 200, 0);
    tight.swap.devices = s.swap.devices.clone();
    let a = decide(&mut engine(spec), 1_000, &tight, &apps, &[to_front(10)]);
    let [(10, pages)] = asks_ahead(&a)[..] else { panic!("one ask for maps: {a:#?}") };
    assert!(
        pages * PAGE < 200 * MIB && pages * PAGE > 50 * MIB,
        "{} MiB asked for with 200 available",
        pages * PAGE / MIB
    );
    // No storage file holds pages: nothing to ask for. As memorch ships: off.
    assert_eq!(asks_ahead(&decide(&mut engine(spec), 1_000, &snap(1024, 600, 0), &apps, &[to_front(10)])), vec![]);
    assert_eq!(asks_ahead(&decide(&mut engine("memorch"), 1_000, &s, &apps, &[to_front(10)])), vec![]);
}
