//! Tests of scoreboard.rs.

use super::*;
use crate::report::tests::run;
use memorch_core::Class;

fn standing(wait: f64, best: f64, kills: f64, fewest: f64) -> Standing {
    Standing {
        wait_s: wait,
        wait_if_hot_s: 0.0,
        best_wait_s: best,
        best_wait_by: "earlyoom".into(),
        kills,
        fewest_kills: fewest,
        foreground_kills: 0.0,
        p95_ms: Some(10.0),
        best_p95_ms: Some(10.0),
        p50_ms: None,
        best_p50_ms: None,
        cpu_s: 0.0,
        with_device_cpu_ratio: None,
    }
}

#[test]
fn the_bar_is_a_wait_under_085_of_the_best_and_no_more_kills() {
    assert!(standing(8.5, 10.0, 0.0, 0.0).misses().is_empty());
    assert_eq!(standing(8.6, 10.0, 0.0, 0.0).misses(), ["wait"]);
    // Where the others kill at most once, any kill misses; above that, the fewest is the bar.
    assert_eq!(standing(5.0, 10.0, 1.0, 1.0).misses(), ["kills"]);
    assert!(standing(5.0, 10.0, 3.0, 3.0).misses().is_empty());
    assert_eq!(standing(5.0, 10.0, 4.0, 3.0).misses(), ["kills"]);
    let front = Standing { foreground_kills: 1.0, p95_ms: Some(11.0), ..standing(5.0, 10.0, 0.0, 0.0) };
    assert_eq!(front.misses(), ["kill in front", "p95"]);
}

#[test]
fn a_standing_compares_the_candidate_with_the_best_of_the_others() {
    let with_device = |r: RunResult, device_cpu_s: f64| RunResult { device_cpu_s: Some(device_cpu_s), ..r };
    let runs = vec![
        with_device(
            run("kernel", &[("cold", 100.0), ("cold", 300.0), ("hot", 5.0)], &[("kernel", Class::Cached)]),
            4.0,
        ),
        with_device(run("earlyoom", &[("cold", 100.0), ("warm", 80.0), ("hot", 5.0)], &[]), 5.0),
        with_device(run("memorch", &[("cold", 100.0), ("warm", 40.0), ("hot", 2.0)], &[]), 4.9),
    ];
    let s = Standing::of(&summarize(&runs), "memorch").unwrap();
    assert_eq!(s.best_wait_by, "earlyoom");
    assert_eq!(((s.wait_s * 1000.0).round(), (s.best_wait_s * 1000.0).round()), (42.0, 85.0));
    assert_eq!((s.kills, s.fewest_kills), (0.0, 0.0));
    assert_eq!((s.p95_ms, s.best_p95_ms), (Some(40.0), Some(80.0)));
    // 4.9 s of the device's and 0.1 of memorch's against the kernel's 4.0 and 0.1, the lowest.
    assert_eq!(s.with_device_cpu_ratio.map(|r| (r * 100.0).round()), Some(122.0));
    assert!(Standing::of(&summarize(&runs), "lmkd").is_none(), "no runs of the candidate");
    let page = render(&[(CELLS[0], runs)], "memorch");
    assert!(
        page.contains("| realapps | 512 MiB, full/own | 0.04") && page.contains("0.49×") && page.contains("(1.22×)"),
        "{page}"
    );
    assert!(page.contains("### realapps") && page.contains("| `earlyoom` |"), "{page}");
}

#[test]
fn a_cell_is_complete_only_with_every_run_of_its_conditions() {
    let dir = std::env::temp_dir().join(format!("memorch-scoreboard-{}", std::process::id()));
    let cell = CELLS[1];
    let managers = ["kernel".to_string(), "memorch".to_string()];
    let write = |runs: &[RunResult]| {
        std::fs::create_dir_all(dir.join(cell.name)).unwrap();
        let json = serde_json::json!({ "runs": runs });
        std::fs::write(dir.join(cell.name).join("results.json"), json.to_string()).unwrap();
    };
    assert!(complete_runs(&dir, &cell, &managers, 1).is_none(), "nothing yet");
    let silent = |m: &str| RunResult { launcher: Launcher::Silent, app_groups: AppGroups::None, ..run(m, &[], &[]) };
    write(&[silent("kernel"), silent("memorch")]);
    assert_eq!(complete_runs(&dir, &cell, &managers, 1).map(|r| r.len()), Some(2));
    assert!(complete_runs(&dir, &cell, &managers, 2).is_none(), "a repeat short");
    write(&[silent("kernel"), run("memorch", &[], &[])]);
    assert!(complete_runs(&dir, &cell, &managers, 1).is_none(), "a run under other conditions");
    write(&[silent("kernel"), RunResult { interrupted: true, ..silent("memorch") }]);
    assert!(complete_runs(&dir, &cell, &managers, 1).is_none(), "a run cut short");
    std::fs::remove_dir_all(&dir).unwrap();
}
