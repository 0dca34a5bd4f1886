//! Invariants of every preset over random domains, apps and events.

mod common;
use common::*;
use memorch_core::engine::ladder::DEFAULT_ZRAM_RATIO;
use memorch_core::engine::preset::{BASELINES, NAMES};
use memorch_core::engine::victims::freeable_bytes;
use memorch_core::engine::{Action, ActionKind, App, Engine, Event, PressureLevel};
use memorch_core::Class;
use proptest::prelude::*;
use std::collections::BTreeSet;

fn class() -> impl Strategy<Value = Class> {
    prop::sample::select(Class::ALL.to_vec())
}

fn apps() -> impl Strategy<Value = Vec<App>> {
    prop::collection::vec((class(), 1u64..400, 0u64..100, 0u64..200, any::<bool>(), any::<bool>(), 0u32..4), 0..30)
        .prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (class, anon, file, swap, protected, ksm, parent))| {
                    let mut a = app(100 + i as u32, &format!("app{}", i % 7), class, anon);
                    a.file_bytes = file * MIB;
                    a.swap_bytes = swap * MIB;
                    a.protected = protected && i % 5 == 0;
                    a.ksm_mergeable = ksm;
                    a.ppid = parent;
                    a.so_unshared_bytes = (i % 3 == 0).then_some(file * MIB / 2);
                    a
                })
                .collect()
        })
}

fn events() -> impl Strategy<Value = Vec<Event>> {
    let one = prop_oneof![
        Just(Event::Pressure { level: PressureLevel::Partial }),
        Just(Event::Pressure { level: PressureLevel::Complete }),
        Just(Event::Home),
        any::<bool>().prop_map(|on| Event::Screen { on }),
        Just(Event::Timer),
        (0u64..600).prop_map(|mb| Event::LaunchIntent { app: "launching".into(), expected_bytes: Some(mb * MIB) }),
        (0u64..5).prop_map(|i| Event::LaunchIntent { app: format!("app{i}"), expected_bytes: None }),
        (0u64..5000, any::<bool>()).prop_map(|(ms, cold)| Event::Launched { app: "app1".into(), pid: 100, ms, cold }),
    ];
    prop::collection::vec(one, 0..4)
}

/// (total MB, free MB, file MB, PSI some, PSI full)
/// Half the domains are short of memory, some critically, so kills and batches are reached.
fn domain() -> impl Strategy<Value = (u64, u64, u64, f64, f64)> {
    (256u64..4096).prop_flat_map(|total| {
        (
            Just(total),
            prop_oneof![0..total / 2, 0..total / 30],
            prop_oneof![0..total / 4, 0..total / 100],
            prop_oneof![0.0..100.0f64, Just(0.0)],
            prop_oneof![0.0..100.0f64, Just(0.0)],
        )
    })
}

fn check(apps: &[App], acts: &[Action]) -> Result<(), TestCaseError> {
    prop_assert!(!acts.is_empty(), "a decision is never empty");
    let by_pid = |p: u32| apps.iter().find(|a| a.pid == p);
    // No action outside the domain or on a protected process.
    for a in acts {
        for p in a.pids() {
            let app = by_pid(p);
            prop_assert!(app.is_some(), "pid {p} is not in the domain: {a:?}");
            prop_assert!(app.unwrap().actionable(), "pid {p} is protected: {a:?}");
        }
        prop_assert!(!a.reason.text.is_empty());
    }
    let killed: BTreeSet<u32> =
        acts.iter().filter(|a| matches!(a.kind, ActionKind::Kill { .. })).flat_map(Action::pids).collect();
    // No process both compacted and killed in one decision.
    for a in acts {
        if let ActionKind::Compact { pid, .. } = a.kind {
            prop_assert!(!killed.contains(&pid), "pid {pid} compacted and killed");
        }
    }
    for a in acts {
        let ActionKind::Kill { victims, target_bytes, min_class } = &a.kind else { continue };
        prop_assert!(!victims.is_empty());
        let sum: u64 = victims.iter().map(|v| v.freeable_bytes).sum();
        let victim_pids: BTreeSet<u32> = victims.iter().map(|v| v.pid).collect();
        let eligible: Vec<&App> = apps.iter().filter(|x| x.actionable() && x.class >= *min_class).collect();
        for v in victims {
            prop_assert!(v.class >= *min_class, "victim {v:?} more important than allowed {min_class}");
            // No foreground kill while a less important app could be killed instead: either
            // there is none, or all of them together fall short of the target.
            if v.class == Class::Foreground {
                let lower: Vec<&App> = apps.iter().filter(|x| x.actionable() && x.class > Class::Foreground).collect();
                let held: u64 = lower.iter().map(|x| freeable_bytes(x, DEFAULT_ZRAM_RATIO)).sum();
                prop_assert!(
                    lower.is_empty() || held < *target_bytes,
                    "foreground {v:?} killed though less important apps hold {held} of {target_bytes}"
                );
            }
        }
        if victims.len() > 1 {
            // A batch meets its target when the candidates (as the reason counts them) allow…
            if let Some(&held) = a.reason.fields.get("candidate_bytes") {
                let all: u64 = eligible.iter().map(|x| freeable_bytes(x, DEFAULT_ZRAM_RATIO)).sum();
                prop_assert!(held as u64 <= all, "the reason counts {held} but only {all} is eligible");
                if held as u64 >= *target_bytes {
                    prop_assert!(sum >= *target_bytes, "batch frees {sum} of {target_bytes}: {a:?}");
                    // …with no victim that could be dropped.
                    for v in victims {
                        prop_assert!(sum - v.freeable_bytes < *target_bytes, "{v:?} could be spared: {a:?}");
                    }
                }
            }
            prop_assert_eq!(victim_pids.len(), victims.len(), "a victim twice");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn every_preset_keeps_the_invariants(dom in domain(), apps in apps(), ev1 in events(), ev2 in events()) {
        let (total, free, file, some, full) = dom;
        let s = with_psi(snap(total, free, file), some, full);
        for name in NAMES.iter().chain(BASELINES.iter()) {
            let mut e: Engine = engine(name);
            let first = decide(&mut e, 1_000, &s, &apps, &ev1);
            check(&apps, &first)?;
            // The same state and input give the same actions.
            let mut twin = e.clone();
            let a = decide(&mut e, 2_000, &s, &apps, &ev2);
            let b = decide(&mut twin, 2_000, &s, &apps, &ev2);
            prop_assert_eq!(&a, &b, "{} is not deterministic", name);
            check(&apps, &a)?;
        }
    }

    #[test]
    fn batch_selection_meets_targets_minimally(sizes in prop::collection::vec((class(), 1u64..500, 1u64..5000), 0..25), target_mb in 0u64..2000) {
        use memorch_core::engine::victims::{order, select_batch, Candidate, VictimOrder};
        let mut c: Vec<Candidate> = sizes.iter().enumerate().map(|(i, &(class, mb, ms))| Candidate {
            pid: i as u32, app: "a", class, freeable_bytes: mb * MIB, relaunch_ms: ms as f64, p_return: 1.0, idle_ms: 0, oom_badness: 0.0,
        }).collect();
        order(&mut c, VictimOrder::ClassThenCostPerMb);
        let target = target_mb * MIB;
        let b = select_batch(&c, target);
        let sum: u64 = b.iter().map(|v| v.freeable_bytes).sum();
        let all: u64 = c.iter().map(|v| v.freeable_bytes).sum();
        if all >= target {
            prop_assert!(sum >= target);
            for v in &b {
                prop_assert!(sum - v.freeable_bytes < target, "{v:?} is not needed");
            }
        } else {
            prop_assert_eq!(b.len(), c.len(), "short: everything");
        }
        // Class first: a victim of class C only if the less important classes fall short.
        if let Some(top) = b.iter().map(|v| v.class).min() {
            let less: u64 = c.iter().filter(|v| v.class > top).map(|v| v.freeable_bytes).sum();
            prop_assert!(less < target || b.iter().all(|v| v.class > top), "class {top} killed though less important apps hold {less}");
        }
    }
}

proptest! {
    /// The least-expected-cost batch meets its target, keeps class order, and never costs
    /// more than the cost-per-MB batch would have.
    #[test]
    fn least_cost_batches_meet_targets_at_no_more_cost(sizes in prop::collection::vec((class(), 1u64..500, 1u64..5000, 1u64..100), 0..20), target_mb in 0u64..1500) {
        use memorch_core::engine::victims::{order, select_batch, select_least_cost, Candidate, VictimOrder};
        let mut c: Vec<Candidate> = sizes.iter().enumerate().map(|(i, &(class, mb, ms, p))| Candidate {
            pid: i as u32, app: "a", class, freeable_bytes: mb * MIB, relaunch_ms: ms as f64, p_return: p as f64 / 100.0, idle_ms: 0, oom_badness: 0.0,
        }).collect();
        order(&mut c, VictimOrder::LeastExpectedCost);
        let target = target_mb * MIB;
        let b = select_least_cost(&c, target);
        let sum: u64 = b.iter().map(|v| v.freeable_bytes).sum();
        let all: u64 = c.iter().map(|v| v.freeable_bytes).sum();
        if all < target {
            prop_assert_eq!(b.len(), c.len(), "short: everything");
            return Ok(());
        }
        prop_assert!(sum >= target || target == 0);
        if let Some(top) = b.iter().map(|v| v.class).min() {
            let less: u64 = c.iter().filter(|v| v.class > top).map(|v| v.freeable_bytes).sum();
            prop_assert!(less < target, "class {top} killed though less important apps hold {less}");
        }
        // Against the cost-per-MB batch within the same classes.
        let top = b.iter().map(|v| v.class).min();
        let pool: Vec<Candidate> = c.iter().filter(|v| top.is_none_or(|t| v.class >= t)).cloned().collect();
        let mut by_mb = pool.clone();
        order(&mut by_mb, VictimOrder::ClassThenCostPerMb);
        let greedy = select_batch(&by_mb, target);
        if greedy.iter().map(|v| v.freeable_bytes).sum::<u64>() >= target {
            let cost = |v: &[Candidate]| v.iter().map(|x| x.expected_cost_ms()).sum::<f64>();
            prop_assert!(cost(&b) <= cost(&greedy) + 1e-6, "least cost {} > greedy {}", cost(&b), cost(&greedy));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Critically short domains full of small apps, with every swap full and storage swap
    /// grown to its limit (nothing but a kill is left): memorch must batch, and its batches
    /// must meet their target minimally and spare the foreground.
    #[test]
    fn memorch_batches_in_critical_domains(total in 512u64..2048, pct in 0u64..4, sizes in prop::collection::vec((class(), 1u64..40), 5..40)) {
        let apps: Vec<App> = sizes.iter().enumerate().map(|(i, &(c, mb))| app(200 + i as u32, &format!("s{i}"), c, mb)).collect();
        let mut e = engine("memorch");
        let s = swap_exhausted(snap(total, total * pct / 100, 0), e.preset.swap.max_files, total / 8);
        let acts = decide(&mut e, 1_000, &s, &apps, &[]);
        check(&apps, &acts)?;
        let batch = acts.iter().find_map(|a| match &a.kind { ActionKind::Kill { victims, .. } => Some(victims.len()), _ => None });
        let killable: u64 = apps.iter().filter(|a| a.actionable() && a.class >= Class::Service).map(|a| a.anon_bytes).sum();
        if killable >= total * MIB / 10 {
            prop_assert!(batch.is_some(), "critical and killable apps, but no kill: {acts:?}");
        }
    }
}
