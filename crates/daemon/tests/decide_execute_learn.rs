//! decide → execute → account → learn, on a snapshot recorded from a live sandbox (256 MiB,
//! five cached apps, a previous and a foreground one: `memorch status --json`), with the
//! recording fake for the kernel. No root needed: nothing is acted on.

use memorch_core::engine::{Action, ActionKind, App, Engine, Event, Input, Preset, PressureLevel, Step};
use memorch_core::{Class, Snapshot};
use memorch_daemon::config::Manage;
use memorch_daemon::executor::fake::{Call, Recording};
use memorch_daemon::executor::{Executor, Outcome};
use memorch_daemon::metrics;
use memorch_protocol::Counters;

fn recorded() -> Snapshot {
    serde_json::from_str(include_str!("fixtures/sandbox-256mib-7-apps.json")).expect("a snapshot")
}

/// The apps as the daemon sees them: every process with its class, memorch's own processes
/// (the sandbox's exec wrappers) protected.
fn apps(s: &Snapshot) -> Vec<App> {
    s.processes.iter().flatten().map(|p| App { protected: p.name == "memorch", ..App::from_process(p) }).collect()
}

/// The recorded domain with no swap room left: compression cannot help, so kills must come.
fn swap_full(mut s: Snapshot) -> Snapshot {
    s.swap.used_bytes = s.swap.total_bytes;
    s.memory.available_bytes = 2 << 20;
    s.memory.free_bytes = 2 << 20;
    s
}

fn run(
    engine: &mut Engine,
    exec: &mut Executor,
    now_ms: u64,
    snap: &Snapshot,
    events: &[Event],
    counters: &mut Counters,
) -> (Vec<Action>, Vec<Outcome>) {
    let apps = apps(snap);
    let input = Input { now_ms, snapshot: snap, apps: &apps, events };
    let actions = engine.decide(&input);
    let outcomes = exec.execute(&actions, snap.memory.used_bytes, &|_| None);
    for o in &outcomes {
        metrics::account(counters, o);
    }
    engine.learn(&input, &outcomes.iter().map(|o| o.learned()).collect::<Vec<_>>());
    (actions, outcomes)
}

fn fake(refuse: &[u32]) -> (Recording, Executor) {
    let rec = Recording { refuse: refuse.iter().copied().collect(), ..Default::default() };
    let exec = Executor::new(Box::new(rec.clone()), false, Manage::default());
    (rec, exec)
}

fn compacted(actions: &[Action]) -> Vec<u32> {
    actions.iter().filter(|&a| matches!(a.kind, ActionKind::Compact { .. })).map(|a| a.pids()[0]).collect()
}

#[test]
fn only_compactions_carried_out_are_watched_and_counted() {
    let snap = recorded();
    let mut engine = Engine::new(Preset::by_name("memorch").unwrap());
    let decided = engine.clone().decide(&Input { now_ms: 1000, snapshot: &snap, apps: &apps(&snap), events: &[] });
    let pids = compacted(&decided);
    assert!(pids.len() >= 2, "8 % available on the recorded device: the ladder compresses: {decided:?}");
    let all = apps(&snap);
    let class_of = |p: &u32| all.iter().find(|a| a.pid == *p).unwrap().class;
    assert!(pids.iter().all(|p| class_of(p) != Class::Foreground), "never the foreground");
    assert!(
        pids.windows(2).all(|w| class_of(&w[0]) >= class_of(&w[1])),
        "cached apps first: {:?}",
        pids.iter().map(class_of).collect::<Vec<_>>()
    );
    // The kernel refuses the first (it exited meanwhile).
    let (rec, mut exec) = fake(&pids[..1]);
    let mut counters = Counters::default();
    let (_, outcomes) = run(&mut engine, &mut exec, 1000, &snap, &[], &mut counters);
    assert_eq!(
        rec.calls().iter().filter(|c| matches!(c, Call::Compact { .. })).count(),
        pids.len(),
        "every compaction tried"
    );
    assert!(outcomes.iter().any(|o| !o.done && o.result.contains("no process")), "the refusal is the outcome");
    assert!(!engine.state.compacted.contains_key(&pids[0]), "a refused compaction is not watched for refaults");
    assert!(pids[1..].iter().all(|p| engine.state.compacted.contains_key(p)), "those carried out are");
    assert_eq!(counters.actions.get("compact"), Some(&(pids.len() as u64 - 1)), "only what was done is counted");
    assert_eq!(counters.compacted_bytes, outcomes.iter().filter(|o| o.done).map(|o| o.bytes).sum::<u64>());
}

#[test]
fn a_dry_run_calls_nothing_and_teaches_the_engine_nothing() {
    let snap = swap_full(recorded());
    let mut engine = Engine::new(Preset::by_name("memorch").unwrap());
    let before = engine.state.clone();
    let rec = Recording::default();
    let mut exec = Executor::new(Box::new(rec.clone()), true, Manage::default());
    let mut counters = Counters::default();
    let pressure = [Event::Pressure { level: PressureLevel::Complete }];
    let (actions, outcomes) = run(&mut engine, &mut exec, 1000, &snap, &pressure, &mut counters);
    assert!(actions.iter().any(|a| matches!(a.kind, ActionKind::Kill { .. })), "a kill is decided: {actions:?}");
    assert!(rec.calls().is_empty(), "nothing called in a dry run");
    assert!(outcomes.iter().all(|o| !o.done && o.dry_run));
    assert_eq!(counters, Counters::default(), "nothing counted");
    assert_eq!(engine.state.pending_kill, before.pending_kill, "no kill pending: none was made");
    assert_eq!((&engine.state.compacted, &engine.state.whole), (&before.compacted, &before.whole));
}

#[test]
fn a_refused_kill_is_tried_again_and_a_done_one_waits_for_its_victim() {
    let snap = swap_full(recorded());
    let pressure = [Event::Pressure { level: PressureLevel::Complete }];
    let mut engine = Engine::new(Preset::by_name("memorch").unwrap());
    let victims = |a: &[Action]| {
        a.iter().find_map(|a| match &a.kind {
            ActionKind::Kill { victims, .. } => Some(victims.iter().map(|v| v.pid).collect::<Vec<_>>()),
            _ => None,
        })
    };
    let planned = victims(&engine.clone().decide(&Input {
        now_ms: 1000,
        snapshot: &snap,
        apps: &apps(&snap),
        events: &pressure,
    }))
    .expect("a kill");
    let fg: Vec<u32> = apps(&snap).iter().filter(|a| a.class == Class::Foreground).map(|a| a.pid).collect();
    assert!(planned.iter().all(|p| !fg.contains(p)), "never the foreground while others are left");
    // Every victim refused: no kill happened, so none is pending and the next decision kills.
    let (_, mut exec) = fake(&planned);
    let mut counters = Counters::default();
    run(&mut engine, &mut exec, 1000, &snap, &pressure, &mut counters);
    assert!(engine.state.pending_kill.is_none() && counters.kills.is_empty());
    // Now the kernel lets it happen: the victims are pending until their pidfds say so.
    let (rec, mut exec) = fake(&[]);
    let (actions, _) = run(&mut engine, &mut exec, 1010, &snap, &pressure, &mut counters);
    let killed = victims(&actions).expect("tried again");
    assert_eq!(rec.calls().iter().filter(|c| matches!(c, Call::Kill { .. })).count(), killed.len());
    assert_eq!(engine.state.pending_kill.as_ref().map(|p| p.0.clone()), Some(killed.clone()));
    assert_eq!(counters.kills.values().sum::<u64>(), killed.len() as u64);
    let (again, _) = run(&mut engine, &mut exec, 1020, &snap, &pressure, &mut counters);
    assert!(victims(&again).is_none(), "no second kill while the first victims' memory is not back");
    let gone: Vec<Event> =
        killed.iter().map(|&pid| Event::VictimGone { pid }).chain(pressure.iter().cloned()).collect();
    let (after, _) = run(&mut engine, &mut exec, 1030, &snap, &gone, &mut counters);
    assert!(victims(&after).is_some(), "gone, and memory still short: the engine kills again");
}

#[test]
fn the_app_in_front_swapped_out_is_read_back_and_nothing_is_counted_as_freed() {
    // The recorded domain grown to 1 GiB with memory to spare (as recorded it is below the
    // low band, where nothing is read back): a decision reads back a 64th of it, 16 MiB.
    let mut snap = recorded();
    snap.memory.total_bytes = 1 << 30;
    snap.memory.available_bytes = 200 << 20;
    snap.memory.free_bytes = 200 << 20;
    let mut engine = Engine::new(Preset::from_spec("memorch").unwrap());
    // The recorded foreground app with 32 MiB of it in swap.
    let all: Vec<App> = apps(&snap)
        .into_iter()
        .map(|a| if a.class == Class::Foreground { App { swap_bytes: 32 << 20, ..a } } else { a })
        .collect();
    let front = all.iter().find(|a| a.class == Class::Foreground).expect("the recording has an app in front").pid;
    let input = Input { now_ms: 1000, snapshot: &snap, apps: &all, events: &[] };
    let actions = engine.decide(&input);
    let (rec, mut exec) = fake(&[]);
    let outcomes = exec.execute(&actions, snap.memory.used_bytes, &|_| None);
    let asked: Vec<(u32, u64)> = rec
        .calls()
        .iter()
        .filter_map(|c| match c {
            Call::Prefetch { pid, max_pages } => Some((*pid, *max_pages)),
            _ => None,
        })
        .collect();
    assert_eq!(asked, vec![(front, (16 << 20) / 4096)], "{actions:#?}");
    let o = outcomes.iter().find(|o| matches!(o.action.kind, ActionKind::Prefetch { .. })).unwrap();
    assert!(o.done);
    assert_eq!(o.bytes, 16 << 20, "its bytes are what it read back (the engine learns from them)");
    // A read-back takes memory: none of it is counted as freed.
    let mut counters = Counters::default();
    for o in &outcomes {
        metrics::account(&mut counters, o);
    }
    assert_eq!((counters.compacted_bytes, counters.reclaimed_bytes), (0, 0), "{outcomes:#?}");
    assert_eq!(counters.actions.get("prefetch"), Some(&1), "{:?}", counters.actions);
}

/// The memory work no launcher waits for runs at the preset's `work_nice`; the squeezes a
/// launcher waits for at the daemon's own priority; the thread is back at its
/// own afterwards. Raising a thread's priority back needs CAP_SYS_NICE: root.
#[test]
fn the_work_no_launcher_waits_for_runs_at_the_work_priority() {
    if !memorch_linux::testkit::facility(
        "raising a thread's priority back (CAP_SYS_NICE)",
        if unsafe { libc::geteuid() } == 0 { Ok(()) } else { Err("tests that change priorities run as root".into()) },
    ) {
        return;
    }
    // A thread of its own: the test runner's threads keep their priority whatever happens.
    std::thread::spawn(|| {
        let snap = recorded();
        let launch = [Event::LaunchIntent { app: "camera".into(), expected_bytes: Some(96 << 20) }];
        let decide = |preset: &Preset, events: &[Event]| {
            Engine::new(preset.clone()).decide(&Input { now_ms: 1000, snapshot: &snap, apps: &apps(&snap), events })
        };
        let start = memorch_linux::priority::current().unwrap();
        let work = (start + 5).min(19);
        let specs = [
            (format!("memorch:work_nice={work},ahead.launch_waits=true,cost_model=false"), true),
            (format!("memorch:work_nice={work},ahead.launch_waits=false,cost_model=false"), false),
        ];
        for (spec, waited_keep_ours) in specs {
            let preset = Preset::from_spec(&spec).unwrap();
            // A launch's squeezes, then a decision under pressure (8 % available): squeezes of both kinds.
            let mut actions = decide(&preset, &launch);
            actions.extend(decide(&preset, &[]));
            let waited = actions
                .iter()
                .filter(|a| a.reason.step == Step::BeforeLaunch && matches!(a.kind, ActionKind::Compact { .. }))
                .count();
            assert!(
                waited > 0 && waited < compacted(&actions).len(),
                "squeezes a launch waits for and others: {actions:#?}"
            );
            let (rec, mut exec) = fake(&[]);
            exec.set_preset(&preset);
            exec.execute(&actions, snap.memory.used_bytes, &|_| None);
            // Squeezes are carried out in the engine's order (only kills go first).
            let calls: Vec<(Call, i32)> =
                rec.calls_at().into_iter().filter(|(c, _)| matches!(c, Call::Compact { .. })).collect();
            let squeezes: Vec<&Action> =
                actions.iter().filter(|a| matches!(a.kind, ActionKind::Compact { .. })).collect();
            assert_eq!(calls.len(), squeezes.len(), "{spec}: {calls:?}");
            for (a, (call, nice)) in squeezes.iter().zip(&calls) {
                assert!(matches!(call, Call::Compact { pid, .. } if *pid == a.pids()[0]), "{spec}: {call:?} for {a:?}");
                let expect = if a.reason.step == Step::BeforeLaunch && waited_keep_ours { start } else { work };
                assert_eq!(*nice, expect, "{spec}: {:?} '{}' at nice {nice}", a.reason.step, a.reason.text);
            }
            assert_eq!(
                memorch_linux::priority::current().unwrap(),
                start,
                "{spec}: the thread is back at its own priority"
            );
        }
        // No work priority: everything at the daemon's own.
        let preset = Preset::from_spec("memorch:work_nice=null").unwrap();
        let (rec, mut exec) = fake(&[]);
        exec.set_preset(&preset);
        exec.execute(&decide(&preset, &[]), snap.memory.used_bytes, &|_| None);
        let calls = rec.calls_at();
        assert!(!calls.is_empty() && calls.iter().all(|(_, n)| *n == start), "{calls:?}");
    })
    .join()
    .unwrap();
}
