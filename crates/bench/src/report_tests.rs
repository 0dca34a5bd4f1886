//! Tests of report.rs.

use super::*;
use crate::results::{Kill, Visit};

pub fn run(manager: &str, lat: &[(&str, f64)], kills: &[(&str, Class)]) -> RunResult {
    RunResult {
        manager: manager.into(),
        scenario: "t".into(),
        seed: 1,
        ram_mb: 512,
        launcher: Default::default(),
        app_groups: Default::default(),
        swap_disk: Default::default(),
        device: Default::default(),
        visits: lat
            .iter()
            .map(|(k, l)| Visit {
                frames: 10,
                janky_frames: if *k == "warm" { 5 } else { 0 },
                frame_p95_ms: *l / 10.0,
                ..Visit::new("a", k, *l)
            })
            .collect(),
        kills: kills.iter().map(|(by, c)| Kill { app: "a".into(), class: *c, by: (*by).into(), at_ms: 0 }).collect(),
        refault_pages: 10,
        refault_anon_pages: 4,
        refault_file_pages: 6,
        major_faults: 0,
        swap_in_pages: Some(5),
        swap_out_pages: Some(10),
        refault_ratio: Some(0.5),
        refaults_per_eviction: Some(0.25),
        psi_some_s: 1.0,
        psi_full_s: 0.5,
        direct_reclaims: Some(3),
        background_reclaimed_bytes: 0,
        background_reclaim_wakeups: 0,
        background_reclaim_stall_s: None,
        manager_reclaims: 0,
        trim_freed_bytes: 0,
        device_cpu_s: None,
        other_cpu_s: None,
        steal_s: None,
        zram_ratio: Some(2.0),
        ksm_saved_bytes: 0,
        ksmd_cpu_s: None,
        manager_cpu_s: 0.1,
        manager_rss_bytes: 4 << 20,
        manager_pss_bytes: 3 << 20,
        manager_restarts: 0,
        device_costs: None,
        idle_available_bytes: vec![],
        duration_s: 1.0,
        timeline: vec![],
        interrupted: false,
        aborted: None,
        log_dir: String::new(),
    }
}

#[test]
fn summaries_take_medians_spreads_and_quantiles() {
    let mut runs = vec![
        run("memorch", &[("cold", 500.0), ("hot", 1.0), ("warm", 20.0)], &[("memorch", Class::Cached)]),
        run("kernel", &[("cold", 600.0), ("cold", 700.0)], &[("kernel", Class::Foreground)]),
        run("memorch", &[("cold", 400.0), ("hot", 2.0), ("hot", 3.0)], &[]),
    ];
    runs[0].device_cpu_s = Some(2.0);
    let s = summarize(&runs);
    assert_eq!(s[0].manager, "memorch");
    assert_eq!(s[0].runs, 2);
    assert_eq!(s[0].hot, Figure { median: 1.5, min: 1.0, max: 2.0 });
    assert_eq!(s[0].cold_p50_ms, Some(Figure { median: 450.0, min: 400.0, max: 500.0 }));
    assert_eq!(s[0].return_p50_ms.unwrap().max, 2.0, "hot and warm returns of each run");
    assert_eq!(s[0].warm_p50_ms, Some(Figure { median: 20.0, min: 20.0, max: 20.0 }), "one run had a warm return");
    let w = s[0].wait_s;
    assert!(
        (w.min - 0.005).abs() < 1e-9 && (w.max - 0.021).abs() < 1e-9,
        "each run's returns and relaunches, summed, its first launch left out: {w:?}"
    );
    assert_eq!(s[0].kills_by_manager.median, 0.5);
    assert_eq!(s[1].foreground_kills.median, 1.0);
    assert_eq!(s[1].kills_by_kernel.median, 1.0);
    assert_eq!(s[1].return_p50_ms, None, "no return in the kernel's run");
    let jank = s[0].jank_pct.unwrap();
    assert!((jank.max - 5.0 / 30.0 * 100.0).abs() < 1e-9 && jank.min == 0.0, "{jank:?}");
    assert_eq!(s[0].idle_available_mib, None);
    let with_device = s[0].with_device_cpu_s.unwrap();
    assert!(
        (with_device.median - 2.1).abs() < 1e-9 && with_device.max == with_device.min,
        "the run that read its device's CPU"
    );
    assert_eq!(s[1].with_device_cpu_s, None, "no device CPU read");
    assert_eq!((s[0].swap_out_pages.map(|f| f.median), s[0].refault_ratio.map(|f| f.median)), (Some(10.0), Some(0.5)));
    assert_eq!(quantile(vec![1.0, 2.0, 3.0, 4.0], 0.5), Some(2.0));
    assert_eq!(quantile(vec![1.0, 2.0, 3.0, 4.0], 0.95), Some(4.0));
    assert_eq!(quantile(vec![], 0.5), None);
}

#[test]
fn the_p95_after_first_launches_leaves_out_each_apps_first_launch_only() {
    let mut r = run("memorch", &[], &[]);
    let visit = |app: &str, kind: &str, ms: f64| Visit::new(app, kind, ms);
    r.visits = vec![
        visit("kv", "failed", 9000.0),
        // kv's first launch: its first visit failed, so this one starts it.
        visit("kv", "cold", 3000.0),
        visit("maps", "cold", 4000.0),
        visit("kv", "hot", 90.0),
        visit("maps", "warm", 50.0),
        // A relaunch after a kill: the manager's doing, so it counts.
        visit("maps", "cold", 2500.0),
    ];
    let s = &summarize(&[r])[0];
    assert_eq!(s.latency_p95_ms.map(|f| f.median), Some(4000.0), "all served visits: a first launch");
    assert_eq!(
        s.after_first_p95_ms.map(|f| f.median),
        Some(2500.0),
        "the relaunch, not the first launches or the failed visit"
    );
    let mut only_first = run("kernel", &[], &[]);
    only_first.visits = vec![visit("kv", "cold", 3000.0), visit("maps", "cold", 4000.0)];
    assert_eq!(summarize(&[only_first])[0].after_first_p95_ms, None, "no visit after the first launches");
}

#[test]
fn p50_every_return_hot_puts_warm_returns_and_relaunches_at_the_apps_hot_median() {
    let visit = |app: &str, kind: &str, ms: f64| Visit::new(app, kind, ms);
    let mut keeper = run("memorch", &[], &[]);
    keeper.visits = vec![
        visit("mail", "cold", 500.0),
        visit("mail", "warm", 40.0),
        visit("mail", "warm", 60.0),
        visit("mail", "warm", 70.0),
        visit("chat", "cold", 900.0),
        visit("chat", "warm", 80.0),
    ];
    let mut killer = run("lmkd", &[], &[]);
    killer.visits = vec![
        visit("mail", "cold", 450.0),
        visit("mail", "hot", 2.0),
        visit("mail", "hot", 4.0),
        visit("mail", "cold", 300.0),
        visit("mail", "failed", 1.0),
    ];
    // Never hot in the bench: nothing says what its hot return takes.
    let mut never_hot = run("kernel", &[], &[]);
    never_hot.visits = vec![visit("kv", "cold", 900.0), visit("kv", "warm", 80.0), visit("kv", "warm", 100.0)];
    let s = summarize(&[keeper, killer, never_hot]);
    // memorch: p50 70 as measured; 500, 3, 3, 3, 900, 80 with mail's warm returns at its hot median over the bench
    // (lmkd's 2 and 4), chat never hot.
    assert_eq!(s[0].latency_p50_ms.map(|f| f.median), Some(70.0));
    assert_eq!(s[0].p50_every_return_hot_ms.map(|f| f.median), Some(3.0));
    // lmkd: 450, 2, 4, 300 measured (p50 4); the relaunch at mail's hot median, the failed visit left out.
    assert_eq!(s[1].latency_p50_ms.map(|f| f.median), Some(4.0));
    assert_eq!(s[1].p50_every_return_hot_ms.map(|f| f.median), Some(3.0), "the relaunch as a hot return");
    assert_eq!(s[2].p50_every_return_hot_ms, s[2].latency_p50_ms, "kv's warm returns as measured");
    // The wait: memorch's returns 40+60+70+80 ms, had they been hot 3×3 (mail) + 80 (chat, never hot); lmkd's 2+4+300,
    // had the relaunch been hot 2+4+3.
    let ms = |f: Figure| (f.median * 1000.0).round();
    assert_eq!((ms(s[0].wait_s), ms(s[0].wait_if_hot_s)), (250.0, 89.0));
    assert_eq!((ms(s[1].wait_s), ms(s[1].wait_if_hot_s)), (306.0, 9.0));
}

#[test]
fn the_table_shows_spreads_failures_and_never_an_empty_run_as_a_result() {
    let mut empty = run("lmkd", &[("failed", 5.0), ("failed", 6.0)], &[]);
    empty.aborted = Some("the first 3 launches all failed".into());
    let runs = vec![
        run("memorch", &[("cold", 500.0), ("hot", 1.0), ("failed", 3.0)], &[]),
        run("memorch", &[("cold", 400.0), ("hot", 2.0)], &[]),
        empty,
    ];
    let t = table(&summarize(&runs));
    assert!(t.contains("hot/warm/cold/failed"), "{t}");
    let memorch: Vec<&str> = t.lines().filter(|l| l.starts_with("memorch")).collect();
    assert!(memorch[0].contains("1/0/1/0.50"), "medians, the failed one included: {t}");
    assert!(t.contains("1–1/0–0/1–1/0–1") && t.contains("400–500"), "the spread line: {t}");
    let lmkd = t.lines().find(|l| l.starts_with("lmkd")).unwrap();
    assert!(lmkd.contains("no visit served") && !lmkd.contains("0/0/0"), "{lmkd}");
    assert!(
        t.contains("memorch: 1 failed visits") && t.contains("lmkd: 2 failed visits (median 2), 1 runs stopped"),
        "{t}"
    );
}

#[test]
fn overlapping_ranges_are_not_significant() {
    let a = Figure { median: 5.0, min: 4.0, max: 6.0 };
    assert!(a.overlaps(&Figure { median: 7.0, min: 6.0, max: 8.0 }));
    assert!(!a.overlaps(&Figure { median: 9.0, min: 7.0, max: 11.0 }));
}
