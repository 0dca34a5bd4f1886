//! Tests of campaign.rs.

use super::{run_order, Progress};
use crate::prepare::install_synthetic_files;
use crate::results::RunResult;
use crate::scenario::Scenario;
use std::cell::RefCell;
use std::sync::atomic::AtomicBool;

/// Keeps what the bench would show.
#[derive(Default)]
struct Kept(RefCell<Vec<String>>);
impl Progress for Kept {
    fn prepare(&self, what: &str) {
        self.0.borrow_mut().push(what.to_string());
    }
    fn run_started(&self, _: usize, _: usize, _: &str, _: u64, _: usize) {}
    fn step(&self, _: usize, _: usize, _: &str) {}
    fn run_finished(&self, _: &RunResult) {}
    fn note(&self, msg: &str) {
        self.0.borrow_mut().push(msg.to_string());
    }
}

#[test]
fn the_apps_files_are_installed_before_the_first_run_once_each_and_are_what_their_commands_name() {
    let text = "name = \"t\"\nram_mb = 256\n[visits]\nsequence = [\"a\", \"b\", \"sh\"]\n\
        [[apps]]\nname = \"a\"\nanon_mb = 1\nfile_mb = 2\nso_mb = 1\n\
        [[apps]]\nname = \"b\"\nanon_mb = 1\n\
        [[apps]]\nname = \"sh\"\nanon_mb = 1\ncommand = [\"sh\", \"-c\", \"true\"]\nready = \"line:ok\"\n";
    let scenario = Scenario::parse(text).unwrap();
    let work = std::env::temp_dir().join(format!("memorch-install-test-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let shown = Kept::default();
    // A bench stopped (Ctrl-C) before the files are written writes none and says so.
    let err = install_synthetic_files(&scenario, &work, &AtomicBool::new(true), &|m| shown.prepare(m)).unwrap_err();
    assert!(err.contains("stopped while installing") && err.contains("0 of 2"), "{err}");
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
    let go = AtomicBool::new(false);
    assert_eq!(
        install_synthetic_files(&scenario, &work, &go, &|m| shown.prepare(m)).unwrap(),
        2,
        "a's code file and shared object; b maps none; a real program none"
    );
    let (bin, so) = (work.join("a.bin"), work.join("liba.so"));
    assert_eq!(std::fs::metadata(&bin).unwrap().len(), 2 << 20);
    assert_eq!(std::fs::metadata(&so).unwrap().len(), 1 << 20);
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 2);
    assert!(shown.0.borrow().last().unwrap().contains("2 files, 3 MiB"), "{:?}", shown.0.borrow());
    // A second bench in the same place writes nothing again.
    let written = std::fs::metadata(&bin).unwrap().modified().unwrap();
    install_synthetic_files(&scenario, &work, &go, &|m| shown.prepare(m)).unwrap();
    assert_eq!(std::fs::metadata(&bin).unwrap().modified().unwrap(), written);
    // The app is started on exactly these files.
    let a = scenario.apps.iter().find(|a| a.name == "a").unwrap();
    let cmd = crate::running::app_command(std::path::Path::new("/m"), "d", a, 1, &work, Default::default());
    let args: Vec<String> = cmd.get_args().map(|x| x.to_string_lossy().into_owned()).collect();
    for (flag, path) in [("--file", &bin), ("--so", &so)] {
        let at = args.iter().position(|x| x == flag).unwrap_or_else(|| panic!("{flag} in {args:?}"));
        assert_eq!(args[at + 1], path.to_string_lossy());
    }
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn each_repeat_starts_one_manager_further_and_runs_every_manager_once() {
    let managers: Vec<String> = ["earlyoom", "lmkd", "memorch"].map(String::from).to_vec();
    let order: Vec<(u64, &str)> = run_order(&managers, 4).into_iter().map(|(r, m)| (r, m.as_str())).collect();
    let expected = [
        (0, "earlyoom"),
        (0, "lmkd"),
        (0, "memorch"),
        (1, "lmkd"),
        (1, "memorch"),
        (1, "earlyoom"),
        (2, "memorch"),
        (2, "earlyoom"),
        (2, "lmkd"),
        (3, "earlyoom"),
        (3, "lmkd"),
        (3, "memorch"),
    ];
    assert_eq!(order, expected);
}

#[test]
fn one_manager_or_no_repeat() {
    let one = vec!["memorch".to_string()];
    assert_eq!(run_order(&one, 3).iter().map(|(r, _)| *r).collect::<Vec<_>>(), [0, 1, 2]);
    assert!(run_order(&one, 0).is_empty());
    assert!(run_order(&[], 2).is_empty());
}
