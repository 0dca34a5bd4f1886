//! Tests of scenario.rs.

use super::*;

#[test]
fn built_in_quick_parses_and_scales() {
    let s = Scenario::load("quick").unwrap();
    assert_eq!(s.name, "quick");
    assert_eq!(s.apps.len(), 8);
    let big = s.scaled(1024);
    assert_eq!(big.apps[0].anon_mb, s.apps[0].anon_mb * 2);
    let order = s.visit_order(1);
    assert_eq!(order.len(), 8 + 14);
    assert_eq!(&order[..8], &s.apps.iter().map(|a| a.name.clone()).collect::<Vec<_>>()[..]);
    assert_eq!(order, s.visit_order(1), "deterministic");
    assert_ne!(order, s.visit_order(2));
    assert!(order.windows(2).all(|w| w[0] != w[1]), "every visit is a switch");
}

#[test]
fn every_built_in_scenario_parses_with_the_papers_figures() {
    for (name, _, _) in BUILT_IN {
        let s = Scenario::load(name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.name, name);
        assert!(!s.visit_order(1).is_empty());
    }
    let mos = Scenario::load("mos26").unwrap();
    assert_eq!(mos.apps.iter().filter(|a| a.background.is_none()).count(), 26, "MOS Table II");
    assert_eq!(mos.visit_order(1).len(), 1 + 52, "the platform, then the list launched twice");
    let swam = Scenario::load("swam40").unwrap();
    assert_eq!(swam.apps.iter().filter(|a| a.visited).count(), 40, "15 foreground + 25 background");
    let netflix = swam.apps.iter().find(|a| a.name == "Netflix").unwrap();
    assert_eq!(netflix.anon_mb + netflix.file_mb + netflix.so_mb, 604, "SWAM: Netflix needs ~604 MB");
    let so: u64 = swam.apps.iter().map(|a| a.so_mb).sum();
    let all: u64 = swam.apps.iter().map(|a| a.anon_mb + a.file_mb + a.so_mb).sum();
    assert!((0.33..0.37).contains(&(so as f64 / all as f64)), "SWAM §3.3: unshared SO pages ~36 % of memory");
    let consumed = swam.apps.iter().find(|a| !a.visited).unwrap();
    assert_eq!(
        (consumed.anon_mb, swam.visit_order(1)[0].as_str()),
        (256, "consumed"),
        "SWAM §5.1: 256 MB consumed first"
    );
    assert_eq!(swam.visit_order(1).iter().filter(|v| *v == "consumed").count(), 1, "and never visited again");
    let thesis = Scenario::load("thesis").unwrap();
    assert_eq!(
        thesis.apps.iter().filter(|a| a.name.starts_with("proc")).map(|a| a.anon_mb + a.file_mb).collect::<Vec<_>>(),
        vec![100; 6]
    );
    assert_eq!(thesis.ram_mb, 835);
}

#[test]
fn bad_scenarios_say_what_is_wrong() {
    assert!(Scenario::load("nope").unwrap_err().contains("built in: quick"));
    let e =
        Scenario::parse("name='x'\nram_mb=512\n[visits]\nsequence=['a']\n[[apps]]\nname='b'\nanon_mb=1\n").unwrap_err();
    assert!(e.contains("'a'"), "{e}");
    let e = Scenario::parse("name='x'\nram_mb=512\nbogus=1\n[visits]\n[[apps]]\nname='b'\nanon_mb=1\n").unwrap_err();
    assert!(e.contains("bogus"), "{e}");
    let e = Scenario::parse("name='x'\nram_mb=512\n[visits]\n[[apps]]\nname='b'\nanon_mb=1\ncommand=['sleep','9']\n")
        .unwrap_err();
    assert!(e.contains("ready"), "{e}");
    let e =
        Scenario::parse("name='x'\nram_mb=512\n[visits]\n[[apps]]\nname='b'\nanon_mb=1\ncommand=['x']\nready='up'\n")
            .unwrap_err();
    assert!(e.contains("line:TEXT"), "{e}");
    let e = Scenario::parse("name='x'\nram_mb=512\n[visits]\n[[apps]]\nname='b'\nanon_mb=1\nbackground='native'\n")
        .unwrap_err();
    assert!(e.contains("perceptible"), "{e}");
}

#[test]
fn placeholders_expand_and_programs_resolve() {
    assert_eq!(expand("{data}/x-{app}.rdb {data}", &[("data", "/d"), ("app", "kv")]), "/d/x-kv.rdb /d");
    assert_eq!(expand("{unknown}", &[("data", "/d")]), "{unknown}");
    let sh = resolve_program("sh", Path::new("/nowhere")).unwrap();
    assert!(sh.is_absolute() && sh.ends_with("sh"));
    assert!(resolve_program("no-such-program-here", Path::new("/")).unwrap_err().contains("scripts/setup"));
    assert_eq!(resolve_program("bin/sh", Path::new("/")).unwrap(), PathBuf::from("/bin/sh"));
    assert!(resolve_program("./nope", Path::new("/tmp")).unwrap_err().contains("/tmp/./nope"));
}
