//! Shielding the likely apps' pages from the kernel's reclaim (`memorch:shield=on`,
//! ladder/shield.rs), on the pure engine.

mod common;
use common::*;
use memorch_core::engine::{Action, ActionKind, App, Event, Step};
use memorch_core::Class;

/// The pids shielded and unshielded by a decision.
fn shields(actions: &[Action]) -> (Vec<u32>, Vec<u32>) {
    let mut s = (Vec::new(), Vec::new());
    for a in actions {
        match a.kind {
            ActionKind::Shield { pid } => s.0.push(pid),
            ActionKind::Unshield { pid } => s.1.push(pid),
            _ => continue,
        }
        assert_eq!(a.reason.step, Step::Shield);
    }
    s.0.sort_unstable();
    s.1.sort_unstable();
    s
}

/// An app in a group of its own, shielded or not.
fn shieldable(pid: u32, name: &str, class: Class, anon_mb: u64, shielded: bool) -> App {
    App { shielded: Some(shielded), ..app(pid, name, class, anon_mb) }
}

/// `mail` (11) opened three times, `fg` (10) in front now; `old` (12) never came back.
fn history(e: &mut memorch_core::engine::Engine, s: &memorch_core::Snapshot, apps: &[App]) {
    for (i, at) in [1_000, 5_000, 9_000].into_iter().enumerate() {
        let ev = [Event::Launched { app: "mail".into(), pid: 11, ms: 300, cold: i == 0 }];
        decide(e, at, s, apps, &ev);
    }
    decide(e, 20_000, s, apps, &[Event::Launched { app: "fg".into(), pid: 10, ms: 300, cold: true }]);
}

#[test]
fn the_likeliest_apps_that_fit_in_the_budget_are_shielded_and_no_other() {
    // 1 GiB: a quarter is 256 MiB. fg (100) and mail (100) fit; old (100) would not, and the
    // app in no group of its own cannot be shielded at all.
    let s = snap(1024, 600, 100);
    let mut apps = vec![
        shieldable(10, "fg", Class::Foreground, 100, false),
        shieldable(11, "mail", Class::Cached, 100, false),
        shieldable(12, "old", Class::Cached, 100, false),
        app(13, "no-group", Class::Cached, 10),
    ];
    let mut e = engine("memorch:sessions=off,popularity=on,shield=on");
    history(&mut e, &s, &apps);
    let a = decide(&mut e, 21_000, &s, &apps, &[Event::Timer]);
    assert_eq!(shields(&a), (vec![10, 11], vec![]), "{a:#?}");
    // Once shielded, nothing more is asked while nothing changes.
    apps[0].shielded = Some(true);
    apps[1].shielded = Some(true);
    assert_eq!(shields(&decide(&mut e, 22_000, &s, &apps, &[Event::Timer])), (vec![], vec![]));
    // The same apps with the switch off: no shield at all.
    let mut off = engine("memorch");
    history(&mut off, &s, &apps);
    let fresh: Vec<App> = apps.iter().map(|a| App { shielded: a.shielded.map(|_| false), ..a.clone() }).collect();
    assert_eq!(shields(&decide(&mut off, 21_000, &s, &fresh, &[Event::Timer])), (vec![], vec![]));
}

#[test]
fn an_app_grown_past_the_budget_gives_its_shield_to_a_smaller_one() {
    let s = snap(1024, 600, 100);
    let mut e = engine("memorch:sessions=off,popularity=on,shield=on");
    let small = [
        shieldable(10, "fg", Class::Foreground, 100, true),
        shieldable(11, "mail", Class::Cached, 100, true),
        shieldable(12, "old", Class::Cached, 50, false),
    ];
    history(&mut e, &s, &small);
    // mail grew to 200 MiB: fg and mail no longer fit together. mail, opened three times, is
    // likelier than fg, in front now but opened once: mail keeps its shield, fg loses it, and
    // old (50) fits beside mail.
    let grown = [
        shieldable(10, "fg", Class::Foreground, 100, true),
        shieldable(11, "mail", Class::Cached, 200, true),
        shieldable(12, "old", Class::Cached, 50, false),
    ];
    assert_eq!(shields(&decide(&mut e, 21_000, &s, &grown, &[Event::Timer])), (vec![12], vec![10]));
}

#[test]
fn below_the_critical_band_every_shield_is_lifted_so_the_kernel_may_swap_anything() {
    let mut e = engine("memorch:sessions=off,popularity=on,shield=on");
    let apps = [shieldable(10, "fg", Class::Foreground, 100, true), shieldable(11, "mail", Class::Cached, 100, true)];
    history(&mut e, &snap(1024, 600, 100), &apps);
    // 10 MiB available of 1 GiB: under memorch's critical band (a few per cent).
    let a = decide(&mut e, 21_000, &zram_full(snap(1024, 10, 0)), &apps, &[Event::Timer]);
    // Every shield goes, but a victim of this decision's kill needs none lifted: it dies.
    let killed: Vec<u32> = a
        .iter()
        .flat_map(|x| {
            if let ActionKind::Kill { victims, .. } = &x.kind {
                victims.iter().map(|v| v.pid).collect()
            } else {
                vec![]
            }
        })
        .collect();
    let kept: Vec<u32> = [10, 11].into_iter().filter(|p| !killed.contains(p)).collect();
    assert!(kept.contains(&10), "the foreground is no victim here: {a:#?}");
    assert_eq!(shields(&a).1, kept, "{a:#?}");
    assert!(shields(&a).0.is_empty());
    assert!(a
        .iter()
        .filter(|x| matches!(x.kind, ActionKind::Unshield { .. }))
        .all(|x| x.reason.text.contains("critical band")));
}

#[test]
fn a_reload_that_turns_the_shield_off_gives_every_group_its_swappiness_back() {
    let mut e = engine("memorch");
    let apps = [shieldable(10, "fg", Class::Foreground, 100, true), app(11, "mail", Class::Cached, 100)];
    let a = decide(&mut e, 1_000, &snap(1024, 600, 100), &apps, &[Event::Timer]);
    assert_eq!(shields(&a), (vec![], vec![10]));
    assert!(a.iter().any(|x| x.reason.text.contains("shields no app")));
}
