//! Reading the app in front back from swap (`prefetch_whole`, ladder/prefetch.rs), on
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
                cpu_us: None,
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
