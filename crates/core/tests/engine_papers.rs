//! The papers' worked examples, replayed on the presets (table-driven where a table fits).

mod common;
use common::*;
use memorch_core::engine::{ActionKind, CompactScope, Engine, Event, Preset, PressureLevel, Step};
use memorch_core::Class;

fn kills(actions: &[memorch_core::engine::Action]) -> Vec<Vec<u32>> {
    actions
        .iter()
        .filter_map(|a| match &a.kind {
            ActionKind::Kill { victims, .. } => Some(victims.iter().map(|v| v.pid).collect()),
            _ => None,
        })
        .collect()
}

fn compactions(actions: &[memorch_core::engine::Action]) -> Vec<(u32, CompactScope, Option<u64>)> {
    actions
        .iter()
        .filter_map(|a| match &a.kind {
            ActionKind::Compact { pid, scope, max_pages, .. } => Some((*pid, *scope, *max_pages)),
            _ => None,
        })
        .collect()
}

/// MOS §II/§IV: "if an application requires 100 MB and current free memory is 50 MB but LMK
/// selects a victim application that uses 30 MB, LMK must be called repeatedly". MOS phase 2
/// kills as many as needed at once.
#[test]
fn mos_kills_two_cached_apps_at_once_where_lmk_needs_repeated_triggers() {
    let apps = vec![
        app(11, "a", Class::Cached, 30),
        app(12, "b", Class::Cached, 30),
        app(13, "c", Class::Cached, 30),
        app(2, "fg", Class::Foreground, 100),
    ];
    let s = snap(1024, 50, 10);
    let launch = [Event::LaunchIntent { app: "game".into(), expected_bytes: Some(100 * MIB) }];
    let mut mos = engine("mos");
    let k = kills(&decide(&mut mos, 1000, &s, &apps, &launch));
    assert_eq!(k.len(), 1, "one decision, one batch");
    assert_eq!(k[0].len(), 2, "two 30 MB apps for the 50 MB shortfall: {k:?}");

    // The classic LMK sees only free memory falling as the launch allocates: one victim a
    // trigger, and the next only after it is gone.
    let mut lmk = engine("lmk-classic");
    let low = snap(1024, 20, 10);
    let first = kills(&decide(&mut lmk, 1000, &low, &apps, &[]));
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].len(), 1, "lowmem_shrink kills one");
    let still_dying = kills(&decide(&mut lmk, 1100, &low, &apps, &[]));
    assert!(still_dying.is_empty(), "deathpending: no kill while the victim lives");
    let rest: Vec<_> = apps.iter().filter(|a| a.pid != first[0][0]).cloned().collect();
    let gone = [Event::VictimGone { pid: first[0][0] }];
    let second = kills(&decide(&mut lmk, 1200, &low, &rest, &gone));
    assert_eq!(second.len(), 1, "a second trigger, a second victim");
}

/// MOS phase 1: at home, page cache first (in doubling steps), then cached apps.
#[test]
fn mos_phase1_reclaims_page_cache_in_doubling_steps_then_app_cache() {
    let apps = vec![app(11, "a", Class::Cached, 30), app(12, "b", Class::Cached, 40)];
    // 2 GiB: threshold 120 MB; free 20 MB: 100 MB to find; 60 MB of cache over a 41 MB floor.
    let s = snap(2048, 20, 60);
    let mut mos = engine("mos");
    let acts = decide(&mut mos, 0, &s, &apps, &[Event::Home]);
    let reclaims: Vec<u64> = acts
        .iter()
        .filter_map(|a| if let ActionKind::Reclaim { bytes } = a.kind { Some(bytes) } else { None })
        .collect();
    assert!(reclaims.len() >= 3, "{reclaims:?}");
    assert!(reclaims.windows(2).take(reclaims.len() - 2).all(|w| w[1] == 2 * w[0]), "sizes double: {reclaims:?}");
    assert_eq!(kills(&acts).len(), 1, "the rest from app cache");
    assert!(acts.iter().all(|a| a.reason.step == Step::Home));
}

/// Thesis §3.3 / fig. 3-11: under slight shortage the optimised comp-cache compresses 32 pages
/// of an empty app; if free memory is still low, the LMK kills. The classic LMK only kills.
#[test]
fn thesis_compresses_empty_apps_before_it_kills() {
    let apps = vec![
        app(11, "empty", Class::Empty, 60),
        app(12, "cached", Class::Cached, 60),
        app(2, "fg", Class::Foreground, 100),
    ];
    // 1 GiB: LMK empty level 32 MB, slight shortage below 48 MB.
    let cases: [(u64, &str, usize, bool); 4] = [
        (40, "thesis", 1, false),
        (40, "lmk-classic", 0, false),
        // Below the empty level the LMK kills the empty app itself: its 32-page step is
        // dropped, as compacting a process about to die is wasted.
        (20, "thesis", 0, true),
        (20, "lmk-classic", 0, true),
    ];
    for (free, preset, n_compact, kill) in cases {
        let mut e = engine(preset);
        let acts = decide(&mut e, 0, &snap(1024, free, 5), &apps, &[]);
        let c = compactions(&acts);
        assert_eq!(c.len(), n_compact, "{preset} at {free} MB: {acts:?}");
        if n_compact > 0 {
            assert_eq!(c[0], (11, CompactScope::Anon, Some(32)), "the empty app, 32 pages");
        }
        assert_eq!(!kills(&acts).is_empty(), kill, "{preset} at {free} MB");
        if kill && n_compact > 0 {
            let ci = acts.iter().position(|a| matches!(a.kind, ActionKind::Compact { .. })).unwrap();
            let ki = acts.iter().position(|a| matches!(a.kind, ActionKind::Kill { .. })).unwrap();
            assert!(ci < ki, "compression comes first");
        }
    }
}

/// Thesis fig. 4-7: at idle (screen off) empty apps are compressed whole; comp-cache leaves it
/// to the kernel.
#[test]
fn thesis_compresses_empty_apps_whole_at_idle() {
    let apps = vec![
        app(11, "empty", Class::Empty, 100),
        app(12, "cached", Class::Cached, 100),
        app(2, "fg", Class::Foreground, 100),
    ];
    let s = snap(1024, 300, 100);
    let mut t = engine("thesis");
    let acts = decide(&mut t, 0, &s, &apps, &[Event::Screen { on: false }]);
    assert_eq!(compactions(&acts), vec![(11, CompactScope::Anon, None)]);
    let mut c = engine("compcache");
    assert!(compactions(&decide(&mut c, 0, &s, &apps, &[Event::Screen { on: false }])).is_empty());
}

/// Thesis §3.3 optimisations 1 and 2: KSM only at idle and only over background apps with a
/// common ancestor; stopped when the screen comes on.
#[test]
fn thesis_runs_ksm_at_idle_over_sibling_background_apps_only() {
    let mut a = app(11, "a", Class::Cached, 50);
    let mut b = app(12, "b", Class::Cached, 50);
    (a.ksm_mergeable, b.ksm_mergeable, a.ppid, b.ppid) = (true, true, 7, 7);
    let lone = {
        let mut l = app(13, "l", Class::Cached, 50);
        l.ksm_mergeable = true;
        l.ppid = 9;
        l
    };
    let s = snap(1024, 500, 100);
    let ksm_on = |acts: &[memorch_core::engine::Action]| {
        acts.iter().find_map(|x| if let ActionKind::Ksm { run, .. } = x.kind { Some(run) } else { None })
    };
    let mut t = engine("thesis");
    assert_eq!(ksm_on(&decide(&mut t, 0, &s, &[a.clone(), b.clone()], &[])), None, "screen on: no KSM");
    assert_eq!(
        ksm_on(&decide(&mut t, 1, &s, &[lone.clone(), a.clone()], &[Event::Screen { on: false }])),
        None,
        "no siblings: no KSM"
    );
    assert_eq!(ksm_on(&decide(&mut t, 2, &s, &[a.clone(), b.clone()], &[])), Some(true));
    assert_eq!(ksm_on(&decide(&mut t, 3, &s, &[a, b], &[Event::Screen { on: true }])), Some(false));
}

/// memorch's KSM must pay for ksmd's CPU (`ksm.min_saving_frac`): every three passes of ksmd
/// over the apps, what it merged of the domain's opted-in apps in them must be 1 % of the
/// domain, or it stops for 30 minutes. Its first passes merging 4 MiB stop it; 40 MiB keep it
/// running until passes that merge nothing more. Stock targeted KSM runs whatever it saves. The
/// machine's own count (`pages_sharing`, here 116 MiB of apps gone and falling as ksmd prunes
/// them) is not what it weighs.
#[test]
fn memorch_stops_ksm_that_does_not_pay_for_its_cpu() {
    // Two siblings opted in, with what KSM has merged of each.
    let apps = |merged_mb: u64| {
        let mut a = app(11, "a", Class::Cached, 50);
        let mut b = app(12, "b", Class::Cached, 50);
        (a.ksm_mergeable, b.ksm_mergeable, a.ppid, b.ppid) = (true, true, 7, 7);
        (a.ksm_merged_bytes, b.ksm_merged_bytes) = (Some((merged_mb << 20) / 2), Some((merged_mb << 20) / 2));
        [a, b]
    };
    // A 1 GiB domain; KSM's machine-wide counters.
    let with_ksm = |full_scans: u64, machine_saved_mb: u64| {
        let mut s = snap(1024, 500, 100);
        s.ksm = memorch_core::Facility::Available(memorch_core::KsmState {
            run: 1,
            full_scans,
            saved_bytes: machine_saved_mb << 20,
            ..Default::default()
        });
        s
    };
    let ksm_run = |acts: &[memorch_core::engine::Action]| {
        acts.iter().find_map(|x| if let ActionKind::Ksm { run, .. } = x.kind { Some(run) } else { None })
    };
    let says = |acts: &[memorch_core::engine::Action], what: &str| {
        acts.iter().any(|x| {
            matches!(x.kind, ActionKind::Ksm { run: false, .. })
                && x.reason.text.contains(what)
                && x.reason.text.contains("not worth")
        })
    };
    let min = 60_000;
    // (preset, MiB merged in the first three passes, stopped then, stopped after three more that merge nothing)
    for (preset, merged_mb, stops_first, stops_later) in [
        ("memorch", 4, true, false),
        ("memorch", 40, false, true),
        ("thesis:ksm.once=false", 4, false, false),
        ("memorch:ksm.min_saving_frac=null", 4, false, false),
    ] {
        let mut e = engine(preset);
        assert_eq!(
            ksm_run(&decide(&mut e, 0, &with_ksm(100, 116), &apps(0), &[Event::Screen { on: false }])),
            Some(true),
            "{preset}: idle, two siblings opted in: KSM runs"
        );
        assert_eq!(
            ksm_run(&decide(&mut e, 1000, &with_ksm(102, 60), &apps(merged_mb / 2), &[])),
            None,
            "{preset}: two passes of ksmd are no verdict"
        );
        // A look that read no app's KSM figure (a decision on pressure) is no verdict: it
        // would read as nothing merged.
        let unread = apps(merged_mb).map(|mut a| {
            a.ksm_merged_bytes = None;
            a
        });
        assert_eq!(
            ksm_run(&decide(&mut e, 1500, &with_ksm(103, 60 + merged_mb), &unread, &[])),
            None,
            "{preset}: no KSM figures, no verdict"
        );
        let first = decide(&mut e, 2000, &with_ksm(103, 60 + merged_mb), &apps(merged_mb), &[]);
        assert_eq!(
            ksm_run(&first),
            stops_first.then_some(false),
            "{preset}: {merged_mb} MiB of the apps merged in three passes"
        );
        if stops_first {
            assert!(says(&first, "merged 4.0 MiB in 3 passes"), "{preset}: the stop says what KSM merged: {first:?}");
        }
        let later = decide(&mut e, 3000, &with_ksm(106, 60 + merged_mb), &apps(merged_mb), &[]);
        assert_eq!(ksm_run(&later), stops_later.then_some(false), "{preset}: three more passes that merged nothing");
        if stops_later {
            assert!(says(&later, "merged 0.0 MiB in 3 passes"), "{preset}: {later:?}");
        }
        // The next idle windows: a stopped KSM stays off for 30 minutes, then is tried again.
        let stopped = stops_first || stops_later;
        decide(&mut e, 4000, &with_ksm(106, 60 + merged_mb), &apps(merged_mb), &[Event::Screen { on: true }]);
        let again = ksm_run(&decide(
            &mut e,
            10 * min,
            &with_ksm(106, 60 + merged_mb),
            &apps(merged_mb),
            &[Event::Screen { on: false }],
        ));
        assert_eq!(again, (!stopped).then_some(true), "{preset}: the next idle window, 10 minutes later");
        if stopped {
            assert_eq!(
                ksm_run(&decide(&mut e, 31 * min, &with_ksm(106, 60 + merged_mb), &apps(merged_mb), &[])),
                Some(true),
                "{preset}: tried again after 30 minutes"
            );
        }
    }
}

/// Thesis §3.3: ksmd does not scan a background app's pages again. From user space: ksmd
/// stops once its passes have gone over the background apps (what it merged stays merged),
/// stays off while no new one comes, and runs again for a new background app.
#[test]
fn thesis_stops_ksm_once_it_has_gone_over_the_background_apps() {
    let sibling = |pid: u32| {
        let mut a = app(pid, "s", Class::Cached, 50);
        (a.ksm_mergeable, a.ppid) = (true, 7);
        a
    };
    let with_scans = |full_scans: u64| {
        let mut s = snap(1024, 500, 100);
        s.ksm = memorch_core::Facility::Available(memorch_core::KsmState { run: 1, full_scans, ..Default::default() });
        s
    };
    let ksm_run = |acts: &[memorch_core::engine::Action]| {
        acts.iter().find_map(|x| if let ActionKind::Ksm { run, .. } = x.kind { Some(run) } else { None })
    };
    let two = [sibling(11), sibling(12)];
    let mut t = engine("thesis");
    assert_eq!(ksm_run(&decide(&mut t, 0, &with_scans(50), &two, &[Event::Screen { on: false }])), Some(true));
    assert_eq!(ksm_run(&decide(&mut t, 1000, &with_scans(52), &two, &[])), None, "two passes: still running");
    let stop = decide(&mut t, 2000, &with_scans(53), &two, &[]);
    assert_eq!(ksm_run(&stop), Some(false), "three passes went over both: stopped");
    assert!(stop.iter().any(|a| a.reason.text.contains("not scanned again")), "{stop:?}");
    assert_eq!(ksm_run(&decide(&mut t, 3000, &with_scans(53), &two, &[])), None, "nothing new: stays off");
    let three = [sibling(11), sibling(12), sibling(13)];
    assert_eq!(ksm_run(&decide(&mut t, 4000, &with_scans(53), &three, &[])), Some(true), "a new background app");
    let mut stock = engine("thesis:ksm.once=false");
    decide(&mut stock, 0, &with_scans(50), &two, &[Event::Screen { on: false }]);
    assert_eq!(ksm_run(&decide(&mut stock, 2000, &with_scans(53), &two, &[])), None, "without once: runs on");
}

/// Thesis fig. 2-18 and §2.6.4: LMK kills in class order, the largest first within a class.
#[test]
fn lmk_kill_order_is_class_then_rss() {
    let mut apps = vec![
        app(1, "fg", Class::Foreground, 200),
        app(2, "visible", Class::Visible, 150),
        app(3, "hidden-small", Class::Previous, 20),
        app(4, "hidden-big", Class::Previous, 90),
        app(5, "provider", Class::Cached, 40),
        app(6, "empty", Class::Empty, 10),
    ];
    let mut e = engine("lmk-classic");
    let s = snap(1024, 5, 0); // below even the foreground level
    let mut order = Vec::new();
    for t in 0..6 {
        let k = kills(&decide(&mut e, t * 2000, &s, &apps, &[]));
        assert_eq!(k.len(), 1);
        order.push(k[0][0]);
        apps.retain(|a| a.pid != k[0][0]);
    }
    assert_eq!(order, vec![6, 5, 4, 3, 2, 1]);
}

/// SWAM §4.3 (EOOM killer): of two equal cached apps, the one cheaper to relaunch dies; of
/// two equally cheap ones the worse by the kernel's badness (the larger); lmkd takes the
/// least recently used, whatever its relaunch costs.
#[test]
fn eoom_kills_the_app_cheaper_to_relaunch() {
    let mut expensive = app(11, "expensive", Class::Cached, 100);
    expensive.age_ms = 60_000;
    let apps = vec![expensive, app(12, "cheap", Class::Cached, 100)];
    let mut swam = engine("swam");
    decide(
        &mut swam,
        0,
        &snap(1024, 500, 100),
        &apps,
        &[
            Event::Launched { app: "expensive".into(), pid: 11, ms: 2500, cold: true },
            Event::Launched { app: "cheap".into(), pid: 12, ms: 600, cold: true },
        ],
    );
    let acts = decide(&mut swam, 10, &snap(1024, 2, 1), &apps, &[Event::Pressure { level: PressureLevel::Complete }]);
    assert_eq!(kills(&acts), vec![vec![12]]);
    // lmkd's LRU takes the one left longest ago (never in front: the older): not cost-aware.
    let mut lmkd = engine("lmkd");
    let acts = decide(&mut lmkd, 10, &snap(1024, 2, 1), &apps, &[Event::Pressure { level: PressureLevel::Complete }]);
    assert_eq!(kills(&acts), vec![vec![11]]);
    // Equal relaunch costs: the kernel's badness, the larger, goes first.
    let mut swam = engine("swam");
    let apps = vec![app(11, "small", Class::Cached, 80), app(12, "large", Class::Cached, 120)];
    decide(
        &mut swam,
        0,
        &snap(1024, 500, 100),
        &apps,
        &[
            Event::Launched { app: "small".into(), pid: 11, ms: 600, cold: true },
            Event::Launched { app: "large".into(), pid: 12, ms: 600, cold: true },
        ],
    );
    let acts = decide(&mut swam, 10, &snap(1024, 2, 1), &apps, &[Event::Pressure { level: PressureLevel::Complete }]);
    assert_eq!(kills(&acts), vec![vec![12]]);
}

/// Android lmkd (`mp_event_psi`): one victim, then wait for it to die; pressure right after
/// a kill and a complete stall may take anything, but only after less important apps.
#[test]
fn lmkd_kills_one_then_waits() {
    let apps =
        vec![app(11, "c1", Class::Cached, 50), app(12, "c2", Class::Cached, 60), app(2, "fg", Class::Foreground, 300)];
    let mut e = engine("lmkd");
    // A 1 GiB domain (low-RAM), free under the high watermark, swap nearly full.
    let mut low = snap(1024, 3, 5);
    low.swap.used_bytes = low.swap.total_bytes - low.swap.total_bytes / 20;
    let k1 = kills(&decide(&mut e, 0, &low, &apps, &[Event::Pressure { level: PressureLevel::Partial }]));
    assert_eq!(k1, vec![vec![12]], "low swap and free low: the least recently used cached app");
    let k2 = kills(&decide(&mut e, 50, &low, &apps, &[Event::Poll]));
    assert!(k2.is_empty(), "waits for the victim (kill timeout 100 ms)");
    let rest = vec![app(11, "c1", Class::Cached, 50), app(2, "fg", Class::Foreground, 300)];
    let k3 = kills(&decide(&mut e, 60, &low, &rest, &[Event::VictimGone { pid: 12 }, Event::Poll]));
    assert_eq!(
        k3,
        vec![vec![11]],
        "free still below the low watermark after a kill: another, cached before the foreground"
    );
}

/// lmkd's reasons, each on its own (AOSP `mp_event_psi`): what it kills for, and what not.
#[test]
fn lmkd_kills_only_for_its_reasons() {
    let apps = || {
        vec![
            app(11, "svc", Class::Service, 50),
            app(12, "prev", Class::Previous, 60),
            app(3, "vis", Class::Visible, 80),
            app(2, "fg", Class::Foreground, 300),
        ]
    };
    let partial = [Event::Pressure { level: PressureLevel::Partial }];
    let with_refaults = |mut s: memorch_core::Snapshot, pages: u64| {
        s.counters.refault_file_pages = Some(pages);
        s
    };
    // Free below the low watermark, swap plentiful, nothing thrashing: lmkd's PSI strategy
    // has no plain low-memory reason.
    let mut e = engine("lmkd");
    assert!(kills(&decide(&mut e, 0, &snap(1024, 3, 100), &apps(), &partial)).is_empty());
    // Thrashing: refaults over the 30 % limit (low-RAM) of the file LRU at the window's start,
    // with free under the high watermark: above perceptible only.
    let mut e = engine("lmkd");
    decide(&mut e, 0, &with_refaults(snap(1024, 300, 100), 1000), &apps(), &partial);
    let k = kills(&decide(&mut e, 500, &with_refaults(snap(1024, 5, 100), 1000 + 12_800), &apps(), &[Event::Poll]));
    assert_eq!(k, vec![vec![12]], "thrashing 50 % > 30 %: the previous app, not the visible one");
    // A complete stall: anything, least important first.
    let mut e = engine("lmkd");
    let k = kills(&decide(
        &mut e,
        0,
        &snap(1024, 300, 100),
        &[app(3, "vis", Class::Visible, 80), app(2, "fg", Class::Foreground, 300)],
        &[Event::Pressure { level: PressureLevel::Complete }],
    ));
    assert_eq!(k, vec![vec![3]], "not responding: the visible app before the foreground");
    // No trigger, no poll, no death: lmkd does not look on a plain tick.
    let mut e = engine("lmkd");
    let mut swap_low = snap(1024, 3, 5);
    swap_low.swap.used_bytes = swap_low.swap.total_bytes;
    assert!(kills(&decide(&mut e, 0, &swap_low, &apps(), &[Event::Timer])).is_empty());
    // Polls with no reclaim and no new refaults since the last look stop early.
    let mut e = engine("lmkd");
    let quiet = with_refaults(snap(1024, 300, 100), 7);
    decide(&mut e, 0, &quiet, &apps(), &[Event::Poll]);
    let mut still = with_refaults(snap(1024, 3, 5), 7);
    still.swap.used_bytes = still.swap.total_bytes;
    still.memory.swap_used_bytes = 0;
    assert!(
        kills(&decide(&mut e, 100, &still, &apps(), &[Event::Poll])).is_empty(),
        "no reclaim, no refaults: bail out"
    );
    // The same look with a direct reclaim counted kills.
    still.counters.direct_reclaims = Some(1);
    let mut e2 = engine("lmkd");
    let mut before = quiet.clone();
    before.counters.direct_reclaims = Some(0);
    decide(&mut e2, 0, &before, &apps(), &[Event::Poll]);
    assert_eq!(kills(&decide(&mut e2, 100, &still, &apps(), &[Event::Poll])), vec![vec![12]]);
}

/// The ladder's step 3 (docs/design.md): a launch larger than available is met before it starts, in one
/// decision: compress within the budget, then kill at once what is still short; the
/// foreground is never touched.
#[test]
fn memorch_secures_a_launch_in_one_decision() {
    let apps = vec![
        app(11, "c1", Class::Cached, 60),
        app(12, "c2", Class::Cached, 80),
        app(13, "c3", Class::Cached, 40),
        app(15, "c4", Class::Cached, 50),
        app(14, "svc", Class::Service, 30),
        app(2, "fg", Class::Foreground, 200),
    ];
    let mut m = engine("memorch");
    // zram nearly full: compression and swapping cannot cover the launch alone.
    let mut s = snap(1024, 40, 20);
    s.swap.used_bytes = s.swap.total_bytes - 100 * MIB;
    let launch = [Event::LaunchIntent { app: "game".into(), expected_bytes: Some(200 * MIB) }];
    let acts = decide(&mut m, 0, &s, &apps, &launch);
    let c = compactions(&acts);
    assert!(!c.is_empty(), "compress first: {acts:?}");
    let k = kills(&acts);
    assert_eq!(k.len(), 1, "one batch: {acts:?}");
    assert!(!k[0].contains(&2), "never the foreground");
    assert!(k[0].iter().all(|p| !c.iter().any(|x| x.0 == *p)), "no app both compressed and killed");
    // Compressing first costs fewer apps than MOS's kills alone for the same launch.
    let mut mos = engine("mos");
    let mos_kills = kills(&decide(&mut mos, 0, &s, &apps, &launch));
    assert!(k[0].len() < mos_kills[0].len(), "memorch kills {:?}, MOS {:?}", k[0], mos_kills[0]);
    let ci = acts.iter().position(|a| matches!(a.kind, ActionKind::Compact { .. })).unwrap();
    let ki = acts.iter().position(|a| matches!(a.kind, ActionKind::Kill { .. })).unwrap();
    assert!(ci < ki);
    // A launch that fits does nothing.
    let mut m2 = engine("memorch");
    let acts = decide(
        &mut m2,
        0,
        &snap(1024, 600, 100),
        &apps,
        &[Event::LaunchIntent { app: "calc".into(), expected_bytes: Some(30 * MIB) }],
    );
    assert!(matches!(acts[0].kind, ActionKind::Nothing), "{acts:?}");
}

/// SWAM's slow path ahead of a launch: with zram full, memorch adds a storage swap file in
/// the launch's own decision and kills less than it must without one (none here: the cached
/// apps' anonymous memory can go to the new file).
#[test]
fn memorch_grows_storage_swap_for_a_launch_before_it_kills() {
    let apps = vec![
        app(11, "c1", Class::Cached, 60),
        app(12, "c2", Class::Cached, 80),
        app(13, "c3", Class::Cached, 40),
        app(2, "fg", Class::Foreground, 200),
    ];
    let s = zram_full(snap(1024, 40, 20));
    let launch = [Event::LaunchIntent { app: "game".into(), expected_bytes: Some(150 * MIB) }];
    let acts = decide(&mut engine("memorch"), 0, &s, &apps, &launch);
    assert!(acts.iter().any(|a| matches!(a.kind, ActionKind::SwapGrow { .. })), "a file for the launch: {acts:?}");
    assert!(kills(&acts).is_empty(), "storage swap covers it: {acts:?}");
    let without = decide(&mut Engine::new(Preset::from_spec("memorch:swap_files=off").unwrap()), 0, &s, &apps, &launch);
    assert_eq!(kills(&without).len(), 1, "without storage swap the launch costs a kill: {without:?}");
}

/// Issue 11: a launch whose need zram's room cannot cover, with zram not yet 80 % full, gets a
/// storage file of what is short (whole files' worth, within the preset's room for files)
/// rather than a kill. On `realapps` a launch killed an app for 80 MiB with zram 63 % full.
#[test]
fn memorch_sizes_storage_swap_to_what_a_launch_needs_before_zram_is_full() {
    let apps = vec![
        app(11, "c1", Class::Cached, 200),
        app(12, "c2", Class::Cached, 200),
        app(2, "fg", Class::Foreground, 200),
    ];
    let mut s = snap(1024, 40, 20);
    // zram (256 MiB) 60 % full: below the fill at which SWAM adds a file.
    s.swap.devices[0].used_bytes = s.swap.devices[0].size_bytes * 6 / 10;
    s.swap.used_bytes = s.swap.devices[0].used_bytes;
    let launch = [Event::LaunchIntent { app: "game".into(), expected_bytes: Some(300 * MIB) }];
    let grown = |acts: &[memorch_core::engine::Action]| {
        acts.iter().find_map(|a| if let ActionKind::SwapGrow { bytes } = a.kind { Some(bytes) } else { None })
    };
    let unit = 128 * MIB; // file_frac 0.125 of 1 GiB
    let acts = decide(&mut engine("memorch"), 0, &s, &apps, &launch);
    let bytes = grown(&acts).unwrap_or_else(|| panic!("a file for the launch: {acts:?}"));
    assert!(
        bytes > unit && bytes % unit == 0,
        "whole files' worth of what is short, more than one: {} MiB",
        bytes / MIB
    );
    assert!(kills(&acts).is_empty(), "the file covers the launch: {acts:?}");
    let sparse = decide(&mut engine("memorch:cost_model=off"), 0, &s, &apps, &launch);
    assert_eq!(grown(&sparse), None, "SWAM's rule: no file before zram is 80 % full: {sparse:?}");
    assert_eq!(kills(&sparse).len(), 1, "without it the launch costs a kill: {sparse:?}");
    // An empty file (one a launch was just given) is counted, and what it cannot take either
    // gets a file of its own.
    let mut with_empty = s.clone();
    with_empty.swap.devices.push(memorch_core::SwapDevice {
        path: "/swap/memorch-swap-0.swap".into(),
        kind: "file".into(),
        size_bytes: unit,
        used_bytes: 0,
        priority: -2,
    });
    let acts = decide(&mut engine("memorch"), 0, &with_empty, &apps, &launch);
    let more =
        grown(&acts).unwrap_or_else(|| panic!("an empty file of 128 MiB does not cover the launch: another: {acts:?}"));
    assert!(more < bytes, "only what the empty file cannot take: {} MiB against {} MiB", more / MIB, bytes / MIB);
    assert!(kills(&acts).is_empty(), "{acts:?}");
    // One file short of the preset's files' worth: the new one is the room left, not more.
    let mut nearly = s.clone();
    let files = engine("memorch").preset.swap.max_files - 1;
    for i in 0..files {
        nearly.swap.devices.push(memorch_core::SwapDevice {
            path: format!("/swap/memorch-swap-{i}.swap"),
            kind: "file".into(),
            size_bytes: unit,
            used_bytes: unit,
            priority: -2,
        });
    }
    let acts = decide(&mut engine("memorch"), 0, &nearly, &apps, &launch);
    assert_eq!(grown(&acts), Some(unit), "{acts:?}");
}

/// The `kernel` preset never acts, whatever happens.
#[test]
fn kernel_preset_never_acts() {
    let apps = vec![app(11, "c1", Class::Cached, 60), app(2, "fg", Class::Foreground, 300)];
    let mut k = engine("kernel");
    let acts = decide(
        &mut k,
        0,
        &with_psi(snap(1024, 1, 0), 90.0, 80.0),
        &apps,
        &[
            Event::Pressure { level: PressureLevel::Complete },
            Event::Home,
            Event::Screen { on: false },
            Event::LaunchIntent { app: "x".into(), expected_bytes: Some(500 * MIB) },
        ],
    );
    assert_eq!(acts.len(), 1);
    assert!(matches!(acts[0].kind, ActionKind::Nothing));
}

/// memorch under growing pressure: compress first, kill cached before any foreground.
#[test]
fn memorch_compresses_then_kills_cached_never_the_foreground() {
    let apps = vec![
        app(11, "c1", Class::Cached, 100),
        app(12, "c2", Class::Cached, 120),
        app(2, "fg", Class::Foreground, 300),
    ];
    let mut m = engine("memorch");
    // Available memory a little under memorch's low band, whatever its value.
    let low_mb = match &m.preset.detection {
        memorch_core::engine::preset::Detection::Bands(b) => (1024.0 * b.low_available_frac) as u64,
        _ => unreachable!(),
    };
    let mild = decide(&mut m, 0, &snap(1024, low_mb * 2 / 3, low_mb / 6), &apps, &[]);
    assert!(!compactions(&mild).is_empty() && kills(&mild).is_empty(), "low band: compress only: {mild:?}");
    // Critical, zram full and storage swap grown to its limit: nothing but a kill is left.
    let full = swap_exhausted(snap(1024, 20, 10), m.preset.swap.max_files, 128);
    let critical = decide(&mut m, 1000, &full, &apps, &[]);
    let k = kills(&critical);
    assert_eq!(k.len(), 1, "{critical:?}");
    assert!(k[0].iter().all(|&p| p != 2), "cached first: {k:?}");
}

/// Issue 11, act in proportion: what is short is freed, not more. A page compressed into zram
/// saves what compression saves, one swapped to storage all of it: with zram full and a
/// storage swap file with room, memorch moves about what is short (it once moved 2.4 times
/// as much, sized for zram, and every page of it came back as a warm return).
#[test]
fn memorch_moves_what_is_short_at_the_saving_of_where_pages_go() {
    let apps = vec![
        app(11, "c1", Class::Cached, 200),
        app(12, "c2", Class::Cached, 200),
        app(2, "fg", Class::Foreground, 300),
    ];
    let moved_mib = |s: &memorch_core::Snapshot| {
        let acts = decide(&mut engine("memorch"), 0, s, &apps, &[]);
        assert!(kills(&acts).is_empty(), "{acts:?}");
        let under: Vec<_> = acts.iter().filter(|a| a.reason.step == Step::UnderPressure).collect();
        let short = under.iter().find_map(|a| a.reason.fields.get("need_bytes")).copied().expect("a shortfall named")
            / MIB as f64;
        let moved = compactions(&acts)
            .iter()
            .filter(|(_, s, _)| *s == CompactScope::Anon)
            .map(|(_, _, p)| p.unwrap_or(0) * 4096)
            .sum::<u64>() as f64
            / MIB as f64;
        (short, moved)
    };
    // 70 MiB available, ~73 MiB under the low band and its margin.
    let (short, into_zram) = moved_mib(&snap(1024, 60, 10));
    let saving = 1.0 - 1.0 / memorch_core::engine::ladder::DEFAULT_ZRAM_RATIO;
    assert!(
        (into_zram - short / saving).abs() < 2.0,
        "into zram: {short:.1} MiB short at {saving:.2} saved a MiB moves {into_zram:.1} MiB"
    );
    let (short_too, to_storage) = moved_mib(&zram_full_with_file(snap(1024, 60, 10), 256));
    assert!((short_too - short).abs() < 0.5);
    assert!((to_storage - short).abs() < 2.0, "to storage: {short:.1} MiB short moves {to_storage:.1} MiB");
}

/// The ladder's step 5 (docs/design.md): kill only when the ladder above cannot meet the target. With zram
/// room left, memorch compresses at the critical band; with zram full, it grows swap onto
/// storage (SWAM's slow path) instead of killing; with that grown to its limit too, it kills.
#[test]
fn memorch_kills_only_when_swap_cannot_take_more() {
    let apps = vec![
        app(11, "c1", Class::Cached, 100),
        app(12, "c2", Class::Cached, 120),
        app(2, "fg", Class::Foreground, 300),
    ];
    let room = snap(1024, 20, 10); // 256 MiB of zram, empty
    let mut m = engine("memorch");
    let acts = decide(&mut m, 0, &room, &apps, &[]);
    assert!(kills(&acts).is_empty() && !compactions(&acts).is_empty(), "{acts:?}");
    let mut m = engine("memorch");
    let acts = decide(&mut m, 0, &zram_full(snap(1024, 20, 10)), &apps, &[]);
    assert!(
        kills(&acts).is_empty() && acts.iter().any(|a| matches!(a.kind, ActionKind::SwapGrow { .. })),
        "zram full: grow storage swap first: {acts:?}"
    );
    let mut m = engine("memorch");
    let full = swap_exhausted(snap(1024, 20, 10), m.preset.swap.max_files, 128);
    let acts = decide(&mut m, 0, &full, &apps, &[]);
    assert_eq!(kills(&acts).len(), 1, "{acts:?}");
    assert!(!acts.iter().any(|a| matches!(a.kind, ActionKind::SwapGrow { .. })), "no file past the limit: {acts:?}");
}

/// Safety (docs/design.md): after a kill, no further kill until the victim's memory is back (its pidfd
/// says so) or the step's bound passes. A victim missing from the process list may still be
/// freeing its memory: a decision 2 ms later, memory still short, must not kill again (it
/// once killed a device's namespace init that way).
#[test]
fn no_second_kill_until_the_victims_memory_is_back() {
    let apps = vec![
        app(11, "big", Class::Cached, 300),
        app(12, "small", Class::Cached, 20),
        app(2, "fg", Class::Foreground, 100),
    ];
    let mut e = engine("memorch");
    let short = swap_exhausted(snap(1024, 4, 2), Preset::by_name("memorch").unwrap().swap.max_files, 128);
    let first = kills(&decide(&mut e, 1000, &short, &apps, &[Event::Pressure { level: PressureLevel::Complete }]));
    assert_eq!(first.len(), 1, "a kill: {first:?}");
    let rest: Vec<_> = apps.iter().filter(|a| !first[0].contains(&a.pid)).cloned().collect();
    for t in [1002, 1100, 1500] {
        let again = kills(&decide(&mut e, t, &short, &rest, &[Event::Pressure { level: PressureLevel::Complete }]));
        assert!(again.is_empty(), "at {t} ms the victim's memory is not back yet: {again:?}");
    }
    let gone: Vec<Event> = first[0]
        .iter()
        .map(|&pid| Event::VictimGone { pid })
        .chain([Event::Pressure { level: PressureLevel::Complete }])
        .collect();
    let after = kills(&decide(&mut e, 1600, &short, &rest, &gone));
    assert_eq!(after.len(), 1, "once it is back and memory is still short, the next kill: {after:?}");
}

/// The engine learns what was done, not what it decided: a kill that was not carried out
/// (refused, a dry run) leaves no kill pending, so the next decision kills as if it had not
/// been tried; one that was carried out makes the next wait for its victim.
#[test]
fn an_undone_kill_leaves_no_mark() {
    let apps = vec![
        app(11, "big", Class::Cached, 300),
        app(12, "small", Class::Cached, 20),
        app(2, "fg", Class::Foreground, 100),
    ];
    let short = swap_exhausted(snap(1024, 4, 2), Preset::by_name("memorch").unwrap().swap.max_files, 128);
    let pressure = [Event::Pressure { level: PressureLevel::Complete }];
    let mut e = engine("memorch");
    let first = kills(&decide_undone(&mut e, 1000, &short, &apps, &pressure));
    assert_eq!(first.len(), 1);
    assert!(
        e.state.pending_kill.is_none() && e.state.compacted.is_empty() && e.state.whole.is_empty(),
        "nothing done, nothing marked"
    );
    let again = kills(&decide_undone(&mut e, 1002, &short, &apps, &pressure));
    assert_eq!(again, first, "the same kill is proposed again");
    let mut done = engine("memorch");
    let k = kills(&decide(&mut done, 1000, &short, &apps, &pressure));
    assert_eq!(done.state.pending_kill.as_ref().map(|p| p.0.clone()), Some(k[0].clone()));
    assert!(kills(&decide(&mut done, 1002, &short, &apps, &pressure)).is_empty(), "a kill carried out is waited for");
}

/// Issue 11: a step is confirmed by the memory it actually moved. An app whose compaction
/// gave far less than asked (nothing cold left) is passed over by the next decisions, which
/// take from the others, until it has been in front again.
#[test]
fn an_app_that_gave_little_is_passed_over_until_it_returns() {
    use memorch_core::engine::{Input, Outcome};
    let apps =
        vec![app(11, "a", Class::Cached, 200), app(12, "b", Class::Cached, 200), app(2, "fg", Class::Foreground, 100)];
    // More short than one app's share: both give.
    let s = snap(1024, 10, 10);
    let mut e = engine("memorch");
    let input = Input { now_ms: 0, snapshot: &s, apps: &apps, events: &[] };
    let acts = e.decide(&input);
    let first = compactions(&acts);
    assert!(first.len() >= 2, "{first:?}");
    let stingy = first[0].0;
    // The kernel found almost nothing cold to take from it; the others gave as asked.
    let gave = |a: &memorch_core::engine::Action| {
        matches!(a.kind, ActionKind::Compact { pid, .. } if pid == stingy).then_some(4096)
    };
    let outcomes: Vec<Outcome> =
        acts.iter().map(|a| Outcome { action: a, done: true, failed: false, bytes: gave(a), cpu_us: None }).collect();
    e.learn(&input, &outcomes);
    let next = compactions(&decide(&mut e, 1000, &s, &apps, &[]));
    assert!(
        !next.is_empty() && next.iter().all(|c| c.0 != stingy),
        "{stingy} gave little, the others give now: {next:?}"
    );
    let back = [Event::AppState { pid: stingy, class: Class::Foreground }];
    decide(&mut e, 2000, &snap(1024, 400, 10), &apps, &back);
    let after = compactions(&decide(&mut e, 3000, &s, &apps, &[]));
    assert!(after.iter().any(|c| c.0 == stingy), "back from the front, it may give again: {after:?}");
}

/// A poll between full looks (lmkd's polling after a trigger) takes kill decisions only: its
/// apps are the last full look's, good enough to choose a victim by, not to size a compaction.
#[test]
fn a_poll_takes_kill_decisions_only() {
    let apps = vec![
        app(11, "c1", Class::Cached, 200),
        app(12, "c2", Class::Cached, 150),
        app(13, "e1", Class::Empty, 100),
        app(2, "fg", Class::Foreground, 100),
    ];
    // Short for each: below memorch's low band; in the thesis's slight shortage, above the
    // LMK's levels; a partial stall for SWAM.
    for (name, short) in [
        ("memorch", snap(1024, 10, 10)),
        ("thesis", snap(1024, 40, 40)),
        ("swam", with_psi(snap(1024, 10, 10), 30.0, 0.0)),
    ] {
        let on_tick = decide(&mut engine(name), 0, &short, &apps, &[Event::Timer]);
        assert!(!compactions(&on_tick).is_empty(), "{name} compresses on a full look: {on_tick:?}");
        let on_poll = decide(&mut engine(name), 0, &short, &apps, &[Event::Poll]);
        assert!(compactions(&on_poll).is_empty(), "{name} compressed on a poll: {on_poll:?}");
    }
    // memorch kills on a poll once nothing but a kill is left.
    let k = kills(&decide(&mut engine("memorch"), 0, &swap_exhausted(snap(1024, 5, 5), 4, 16), &apps, &[Event::Poll]));
    assert_eq!(k.len(), 1, "one batch");
}

/// MOS §II: Android 4.4's activity manager keeps a fixed number of cached apps and kills the
/// least recently used beyond it, whatever memory is free; MOS itself does not.
#[test]
fn android_4_4_kills_cached_apps_beyond_its_count_with_memory_to_spare() {
    let apps: Vec<_> = (0..26u32)
        .map(|i| {
            let mut a = app(100 + i, &format!("app{i}"), Class::Cached, 20);
            a.age_ms = 1_000_000 - 1000 * i as u64; // app0 the oldest
            a
        })
        .collect();
    let plenty = snap(2048, 1500, 100);
    let k = kills(&decide(&mut engine("android-4.4"), 0, &plenty, &apps, &[Event::Timer]));
    assert_eq!(k, vec![vec![100, 101]], "26 cached, 24 kept: the two least recently used");
    assert!(
        kills(&decide(&mut engine("mos"), 0, &plenty, &apps, &[Event::Timer])).is_empty(),
        "MOS kills by memory, not by count"
    );
}

/// SWAM's ISOP eraser removes a storage swap file that holds nothing, but not while zram is
/// full: that file is the one the last shortage added, and the next would add it again
/// (realapps: added, then removed 40 ms later at idle, then added again 5 s on).
#[test]
fn an_empty_swap_file_goes_at_idle_only_when_zram_has_room() {
    let shrinks = |acts: &[memorch_core::engine::Action]| {
        acts.iter().filter(|a| matches!(a.kind, ActionKind::SwapShrink)).count()
    };
    let apps = vec![app(11, "c1", Class::Cached, 50), app(2, "fg", Class::Foreground, 100)];
    let mut empty_file = snap(1024, 600, 100);
    empty_file.swap.devices.push(memorch_core::SwapDevice {
        path: "/swap/memorch-swap-0.swap".into(),
        kind: "file".into(),
        size_bytes: 128 * MIB,
        used_bytes: 0,
        priority: -2,
    });
    empty_file.swap.total_bytes += 128 * MIB;
    for preset in ["memorch", "swam"] {
        let idle = [Event::Screen { on: false }];
        let full = decide(&mut engine(preset), 0, &zram_full_with_file(snap(1024, 600, 100), 128), &apps, &idle);
        assert_eq!(shrinks(&full), 0, "{preset}: zram full: the file stays: {full:?}");
        let room = decide(&mut engine(preset), 0, &empty_file, &apps, &idle);
        assert_eq!(shrinks(&room), 1, "{preset}: zram has room: the empty file goes: {room:?}");
    }
}

/// A file added for a launch stays while the launch fills it, even where zram looks roomy: in
/// a domain without zram the new, empty file was the only swap, and the eraser removed it at
/// the next look (the daemon's live tests). After [`FILE_HOLD_MS`] an empty one goes.
#[test]
fn a_swap_file_added_for_a_launch_is_not_erased_while_the_launch_fills_it() {
    use memorch_core::engine::ladder::FILE_HOLD_MS;
    let shrinks = |acts: &[memorch_core::engine::Action]| {
        acts.iter().filter(|a| matches!(a.kind, ActionKind::SwapShrink)).count()
    };
    let apps = vec![
        app(11, "c1", Class::Cached, 200),
        app(12, "c2", Class::Cached, 200),
        app(2, "fg", Class::Foreground, 200),
    ];
    let mut before = snap(1024, 40, 20);
    before.swap.devices[0].used_bytes = before.swap.devices[0].size_bytes * 6 / 10;
    before.swap.used_bytes = before.swap.devices[0].used_bytes;
    let mut m = engine("memorch");
    let launch = [Event::LaunchIntent { app: "game".into(), expected_bytes: Some(300 * MIB) }];
    let acts = decide(&mut m, 0, &before, &apps, &launch);
    assert!(acts.iter().any(|a| matches!(a.kind, ActionKind::SwapGrow { .. })), "{acts:?}");
    // The file is there and empty, and zram has room.
    let mut after = snap(1024, 600, 100);
    after.swap.devices.push(memorch_core::SwapDevice {
        path: "/swap/memorch-swap-0.swap".into(),
        kind: "file".into(),
        size_bytes: 256 * MIB,
        used_bytes: 0,
        priority: -2,
    });
    after.swap.total_bytes += 256 * MIB;
    let soon = decide(&mut m, 1_000, &after, &apps, &[]);
    assert_eq!(shrinks(&soon), 0, "a second after it was added, the file stays: {soon:?}");
    let later = decide(&mut m, FILE_HOLD_MS + 1_000, &after, &apps, &[]);
    assert_eq!(shrinks(&later), 1, "still empty long after: it goes: {later:?}");
}

/// `shrink::MAX_SHARE`: one decision takes at most that share of an app's anonymous
/// memory (0.8 as shipped), whatever is short; the rest of the shortfall falls on the next app.
#[test]
fn one_decision_takes_at_most_the_share_of_an_app() {
    // 1024 MiB: low band 123 MiB; 70 MiB available and a storage file with room: the
    // shortfall is larger than the share of either 60 MiB app.
    let short = zram_full_with_file(snap(1024, 60, 10), 2048);
    let apps = vec![
        app(11, "one", Class::Cached, 60),
        app(12, "two", Class::Cached, 60),
        app(2, "fg", Class::Foreground, 300),
    ];
    let taken = |spec: &str| -> Vec<u64> {
        let acts = decide(&mut engine(spec), 0, &short, &apps, &[]);
        [11, 12]
            .iter()
            .map(|pid| {
                compactions(&acts)
                    .iter()
                    .filter(|c| c.0 == *pid && c.1 == CompactScope::Anon)
                    .map(|c| c.2.unwrap_or(0) * 4096)
                    .sum()
            })
            .collect()
    };
    let kib = |v: &[u64]| v.iter().map(|b| b / 1024).collect::<Vec<_>>();
    let t = taken("memorch");
    let most = (60.0 * memorch_core::engine::ladder::shrink::MAX_SHARE * MIB as f64) as u64;
    assert!(t.iter().all(|b| *b <= most), "at most the share of each app: {:?} KiB", kib(&t));
    assert!(
        t.iter().all(|b| *b > 0) && t.iter().sum::<u64>() > most,
        "the rest falls on the other app: {:?} KiB",
        kib(&t)
    );
    assert!(t.iter().any(|b| *b > most - 4 * MIB), "the first app gives its share: {:?} KiB", kib(&t));
}

/// memorch's home step brings free memory to the launch threshold, but a need of less than
/// one compaction step is the wobble of a v1 group's usage (the charges each CPU keeps in
/// stock), not memory taken: chasing it reclaimed ~1 MiB at every tick of an idle screen and
/// freed nothing the next look saw. A need of a step or more is met as before.
#[test]
fn memorch_at_home_leaves_a_need_under_one_step_alone() {
    let apps = vec![app(11, "c1", Class::Cached, 100), app(2, "fg", Class::Foreground, 100)];
    let reclaims = |acts: &[memorch_core::engine::Action]| {
        acts.iter().filter(|a| matches!(a.kind, ActionKind::Reclaim { .. })).count()
    };
    // 1024 MiB: the launch threshold is 60 MiB.
    let mut wobble = snap(1024, 59, 300);
    wobble.memory.free_bytes += MIB / 2;
    wobble.memory.available_bytes += MIB / 2;
    wobble.memory.used_bytes -= MIB / 2;
    let acts = decide(&mut engine("memorch"), 0, &wobble, &apps, &[Event::Home]);
    assert_eq!(reclaims(&acts), 0, "half a MiB short: nothing: {acts:?}");
    let short = decide(&mut engine("memorch"), 0, &snap(1024, 50, 300), &apps, &[Event::Home]);
    assert_eq!(reclaims(&short), 1, "10 MiB short: page cache first: {short:?}");
    let mos = decide(&mut engine("mos"), 0, &wobble, &apps, &[Event::Home]);
    assert!(reclaims(&mos) >= 1, "MOS reclaims whatever is short, as its paper does: {mos:?}");
}
