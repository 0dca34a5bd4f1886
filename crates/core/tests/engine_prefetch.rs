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
    let mut e = engine("memorch:prefetch=on");
    let a = decide(&mut e, 1_000, &s, &apps, &[to_front(10)]);
    assert_eq!(prefetches(&a), vec![(10, 200 * MIB / PAGE)], "all of what is in swap, and only the app in front's: {a:#?}");
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
fn off_by_default_and_never_for_an_app_that_is_not_in_front() {
    let s = snap(1024, 600, 0);
    let apps = [swapped(10, "maps", Class::Foreground, 60, 200), swapped(11, "mail", Class::Cached, 20, 80)];
    assert_eq!(prefetches(&decide(&mut engine("memorch"), 1_000, &s, &apps, &[to_front(10)])), vec![]);
    let cached_only = [swapped(11, "mail", Class::Cached, 20, 80), swapped(12, "feed", Class::Previous, 20, 80)];
    assert_eq!(prefetches(&decide(&mut engine("memorch:prefetch=on"), 1_000, &s, &cached_only, &[Event::Timer])), vec![]);
}
