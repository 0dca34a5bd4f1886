//! Cooperation with apps (issue 14) on the pure engine: the cached-app freezer and trim notices.

mod common;
use common::*;
use memorch_core::engine::{ActionKind, Event, Preset, Step};
use memorch_core::Class;

fn freezes(actions: &[memorch_core::engine::Action]) -> (Vec<u32>, Vec<u32>) {
    let mut f = (Vec::new(), Vec::new());
    for a in actions {
        match a.kind {
            ActionKind::Freeze { pid } => f.0.push(pid),
            ActionKind::Thaw { pid } => f.1.push(pid),
            _ => continue,
        }
        assert_eq!(a.reason.step, Step::Freeze);
    }
    f
}

/// memorch with its freezer on (`memorch:freeze=on`: 10 s, Android's delay).
fn freezer() -> memorch_core::engine::Engine {
    memorch_core::engine::Engine::new(Preset::from_spec("memorch:freeze=on").unwrap())
}

fn freezable(pid: u32, name: &str, class: Class, frozen: bool) -> memorch_core::engine::App {
    memorch_core::engine::App { frozen: Some(frozen), ..app(pid, name, class, 50) }
}

#[test]
fn an_app_cached_for_the_set_time_is_frozen_and_not_before() {
    let mut e = freezer();
    let s = snap(2048, 1500, 200);
    let apps = [
        freezable(10, "fg", Class::Foreground, false),
        freezable(11, "mail", Class::Cached, false),
        app(12, "no-group", Class::Cached, 50),
    ];
    assert_eq!(
        freezes(&decide(&mut e, 1_000, &s, &apps, &[Event::Timer])).0,
        Vec::<u32>::new(),
        "just cached: not yet"
    );
    assert_eq!(
        freezes(&decide(&mut e, 10_999, &s, &apps, &[Event::Timer])).0,
        Vec::<u32>::new(),
        "9.999 s cached: not yet"
    );
    // Cached for 10 s: frozen; the foreground and the app without a group of its own never.
    assert_eq!(freezes(&decide(&mut e, 11_000, &s, &apps, &[Event::Timer])).0, vec![11]);
}

#[test]
fn a_frozen_app_is_thawed_when_it_comes_back_or_is_launched_and_never_frozen_in_front() {
    let mut e = freezer();
    let s = snap(2048, 1500, 200);
    decide(&mut e, 0, &s, &[freezable(11, "mail", Class::Cached, false)], &[Event::Timer]);
    // Brought to the front (said by whoever: the class changed).
    let back = [freezable(11, "mail", Class::Foreground, true)];
    assert_eq!(freezes(&decide(&mut e, 20_000, &s, &back, &[Event::Timer])), (vec![], vec![11]));
    // Cached again: the clock starts again.
    let cached = [freezable(11, "mail", Class::Cached, false)];
    assert_eq!(freezes(&decide(&mut e, 21_000, &s, &cached, &[Event::Timer])).0, Vec::<u32>::new());
    // About to be launched while frozen: thawed first, not frozen again in the same breath.
    let frozen = [freezable(11, "mail", Class::Cached, true)];
    let launch = [Event::LaunchIntent { app: "mail".into(), expected_bytes: None }];
    assert_eq!(freezes(&decide(&mut e, 40_000, &s, &frozen, &launch)), (vec![], vec![11]));
}

#[test]
fn protected_apps_are_never_frozen_and_the_switch_turns_it_off_and_thaws() {
    let s = snap(2048, 1500, 200);
    let mut e = freezer();
    let protected = memorch_core::engine::App { protected: true, ..freezable(11, "init", Class::Cached, false) };
    decide(&mut e, 0, &s, std::slice::from_ref(&protected), &[Event::Timer]);
    assert_eq!(freezes(&decide(&mut e, 60_000, &s, &[protected], &[Event::Timer])).0, Vec::<u32>::new());
    let mut off = memorch_core::engine::Engine::new(Preset::from_spec("memorch:freeze=off").unwrap());
    decide(&mut off, 0, &s, &[freezable(11, "mail", Class::Cached, false)], &[Event::Timer]);
    assert_eq!(
        freezes(&decide(&mut off, 60_000, &s, &[freezable(11, "mail", Class::Cached, false)], &[Event::Timer])).0,
        Vec::<u32>::new()
    );
    // A frozen app under a preset that freezes nothing (a reload turned it off) is thawed.
    assert_eq!(
        freezes(&decide(&mut off, 61_000, &s, &[freezable(11, "mail", Class::Cached, true)], &[Event::Timer])).1,
        vec![11]
    );
    // Papers' presets have no freezer; memorch's is off by measurement (docs/results.md).
    for name in ["lmkd", "swam", "mos", "thesis", "memorch"] {
        assert_eq!(Preset::by_name(name).unwrap().freeze_after_ms, None, "{name}");
    }
}

fn trims(actions: &[memorch_core::engine::Action]) -> Vec<(&'static str, Option<u32>)> {
    actions
        .iter()
        .filter_map(|a| match a.kind {
            ActionKind::Trim { level, pid } => Some((level.name(), pid)),
            _ => None,
        })
        .collect()
}

#[test]
fn trim_notices_rise_with_the_shortage_and_come_before_any_compression() {
    let mut e = memorch_core::engine::Engine::new(Preset::from_spec("memorch:trim=on").unwrap());
    let apps: Vec<_> = (0..6).map(|i| app(20 + i, &format!("bg{i}"), Class::Cached, 150)).collect();
    // 1000 MiB domain: compression below 120 MiB available, kills below 50.
    assert!(trims(&decide(&mut e, 0, &snap(1000, 300, 0), &apps, &[Event::Timer])).is_empty(), "nothing near a margin");
    let a = decide(&mut e, 1000, &snap(1000, 170, 0), &apps, &[Event::Timer]);
    assert_eq!(trims(&a), vec![("moderate", None)], "half a margin before compression: {a:?}");
    assert!(
        a.iter().all(|x| !matches!(x.kind, ActionKind::Compact { .. } | ActionKind::Kill { .. })),
        "told, nothing compressed yet: {a:?}"
    );
    assert!(
        trims(&decide(&mut e, 2000, &snap(1000, 170, 0), &apps, &[Event::Timer])).is_empty(),
        "said once while the level holds"
    );
    assert_eq!(
        trims(&decide(&mut e, 2000 + 10_000, &snap(1000, 170, 0), &apps, &[Event::Timer])),
        vec![("moderate", None)],
        "and again after a while"
    );
    let a = decide(&mut e, 13_000, &snap(1000, 100, 0), &apps, &[Event::Timer]);
    assert_eq!(trims(&a), vec![("low", None)]);
    assert!(
        matches!(a[0].kind, ActionKind::Trim { .. }),
        "the notice goes out before the decision's compressions: {a:?}"
    );
    assert!(a.iter().any(|x| matches!(x.kind, ActionKind::Compact { .. })), "compression below the margin: {a:?}");
    // An app sent away from the screen is told it is hidden, once.
    let mut shown = apps.clone();
    shown[1].class = Class::Foreground;
    decide(&mut e, 14_000, &snap(1000, 300, 0), &shown, &[Event::Timer]);
    shown[1].class = Class::Previous;
    let a = decide(&mut e, 15_000, &snap(1000, 300, 0), &shown, &[Event::AppState { pid: 21, class: Class::Previous }]);
    assert_eq!(trims(&a), vec![("hidden", Some(21))]);
    shown[1].class = Class::Cached;
    let a = decide(&mut e, 16_000, &snap(1000, 300, 0), &shown, &[Event::AppState { pid: 21, class: Class::Cached }]);
    assert!(trims(&a).is_empty(), "not again on its way from previous to cached: {a:?}");
    let mut off = engine("memorch");
    assert!(
        trims(&decide(&mut off, 0, &snap(1000, 100, 0), &apps, &[Event::Timer])).is_empty(),
        "off in memorch by measurement (docs/results.md)"
    );
}
