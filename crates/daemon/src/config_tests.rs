//! Tests of config.rs.

use super::*;

#[test]
fn defaults_parse_and_match_the_struct_defaults() {
    let c = Config::parse(DEFAULTS, "defaults").unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(c.preset, "memorch");
    assert_eq!(c.loop_.tick_ms, 1000);
    assert_eq!(c.loop_, LoopConfig::default());
    assert_eq!(c.manage, Manage::default());
    assert_eq!(Config::parse("", "empty").unwrap(), c, "every key optional");
}

#[test]
fn unknown_key_is_named_with_its_line() {
    let e = Config::parse("preset = \"lmkd\"\n\n[loop]\ntick_msec = 5\n", "m.toml").unwrap_err().to_string();
    assert!(e.contains("m.toml") && e.contains("line 4") && e.contains("tick_msec"), "{e}");
}

#[test]
fn wrong_type_is_named_with_its_line() {
    let e = Config::parse("dry_run = \"yes\"\n", "m.toml").unwrap_err().to_string();
    assert!(e.contains("line 1") && e.contains("dry_run"), "{e}");
}

#[test]
fn out_of_range_is_named_with_its_line() {
    let e = Config::parse("[loop]\n# comment\ntick_ms = 5\n", "m.toml").unwrap_err().to_string();
    assert!(e.contains("line 3") && e.contains("loop.tick_ms = 5") && e.contains("100..=60000"), "{e}");
    let e = Config::parse("preset = \"fancy\"\n", "m.toml").unwrap_err().to_string();
    assert!(e.contains("line 1") && e.contains("lmk-classic"), "{e}");
    let e = Config::parse("domain = \"cgroup:nope\"\n", "m.toml").unwrap_err().to_string();
    assert!(e.contains("domain") && e.contains("must start with '/'"), "{e}");
    let e = Config::parse("[[apps.rules]]\nname = \"x\"\nclass = \"vip\"\n", "m.toml").unwrap_err().to_string();
    assert!(e.contains("line 3") && e.contains("\"vip\""), "{e}");
}

#[test]
fn a_config_that_is_no_text_file_is_refused_without_reading_it_whole() {
    let e = Config::load(std::path::Path::new("/dev/zero")).unwrap_err().to_string();
    assert!(e.starts_with("/dev/zero: ") && e.contains("larger than 1024 KiB"), "{e}");
    let e = Config::load(std::path::Path::new("/nonexistent/memorch.toml")).unwrap_err().to_string();
    assert!(e.contains("No such file"), "{e}");
}

#[test]
fn a_hook_named_by_a_path_that_cannot_run_is_refused() {
    let with = |hook: &str| Config::parse(&format!("[notify]\npre_kill = '{hook}'\n"), "t.toml");
    let e = with("/nonexistent/hook --now").unwrap_err().to_string();
    assert!(e.contains("notify.pre_kill") && e.contains("/nonexistent/hook") && e.contains("line 2"), "{e}");
    let text = std::env::temp_dir().join(format!("memorch-not-a-hook-{}", std::process::id()));
    std::fs::write(&text, "echo").unwrap();
    let e = with(text.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("not an executable file"), "{e}");
    std::fs::remove_file(&text).unwrap();
    assert!(with("/bin/sh -c true").is_ok());
    assert!(with("logger memorch kills $MEMORCH_APP").is_ok(), "a program the shell finds on its PATH");
}

#[test]
fn paths_must_be_given_and_absolute() {
    let e = Config::parse("socket = \"\"\n", "m.toml").unwrap_err().to_string();
    assert!(e.contains("line 1") && e.contains("socket") && e.contains("give a path"), "{e}");
    let e = Config::parse("state_dir = \"var/lib\"\n", "m.toml").unwrap_err().to_string();
    assert!(e.contains("absolute"), "{e}");
    let e = Config::parse("[manage]\nswap_file_dir = \"\"\n", "m.toml").unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("swap_file_dir"), "{e}");
}

#[test]
fn overrides_stay_on_top_and_changes_are_listed() {
    let file = Config::parse("preset = \"lmkd\"\ndry_run = false\n[loop]\ntick_ms = 500\n", "m").unwrap();
    let o = Overrides { preset: Some("mos".into()), dry_run: true, ..Default::default() };
    let mut c = file.clone();
    o.apply(&mut c);
    assert_eq!((c.preset.as_str(), c.dry_run), ("mos", true));
    let changes = c.changes_from(&Config::default());
    assert!(changes.contains(&("loop.tick_ms".into(), "1000".into(), "500".into())), "{changes:?}");
    assert!(changes.iter().any(|(k, _, new)| k == "preset" && new == "\"mos\""), "{changes:?}");
    assert!(Config::default().changes_from(&Config::default()).is_empty());
}

#[test]
fn rules_give_classes() {
    let c = Config::parse("[[apps.rules]]\nname = \"launcher\"\nclass = \"home\"\n", "m").unwrap();
    assert_eq!(c.rule_class("launcher"), Some(Class::Home));
    assert_eq!(c.rule_class("other"), None);
}
