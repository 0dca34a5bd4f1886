//! A pid the kernel gives to another process between two looks: the new process starts with
//! nothing the engine kept of the old one (its stint in front, its marks, a pending kill of
//! it), and the same process seen again keeps all of it.

mod common;
use common::*;
use memorch_core::engine::{App, Engine, Event};
use memorch_core::Class;

/// `mail` (pid 10) brought to the front, then cached; a kill of pid 10 left pending and the
/// pid marked dry. Returns the engine and the time of the last look.
fn mail_seen_in_front() -> (Engine, u64) {
    let plenty = snap(1024, 700, 0);
    let mut e = engine("memorch");
    let mail = |class| App { age_ms: 60_000, ..app(10, "mail", class, 100) };
    decide(&mut e, 1_000, &plenty, &[mail(Class::Cached)], &[Event::Home]);
    decide(
        &mut e,
        2_000,
        &plenty,
        &[mail(Class::Foreground)],
        &[Event::AppState { pid: 10, class: Class::Foreground }],
    );
    decide(
        &mut e,
        3_000,
        &plenty,
        &[App { age_ms: 62_000, ..mail(Class::Cached) }],
        &[Event::AppState { pid: 10, class: Class::Cached }],
    );
    assert!(e.state.last_front_switch.contains_key(&10), "mail's stint in front is kept while it lives");
    e.state.dry.insert(10, 3_000);
    e.state.pending_kill = Some((vec![10], 3_000));
    (e, 3_000)
}

/// The kept state of pid 10 after a look that finds `app` under it.
fn after_look(app_at_10: App) -> Engine {
    let (mut e, t) = mail_seen_in_front();
    decide(&mut e, t + 1_000, &snap(1024, 700, 0), &[app_at_10], &[Event::Timer]);
    e
}

fn forgotten(e: &Engine) -> bool {
    !e.state.last_front_switch.contains_key(&10)
        && !e.state.last_front_ms.contains_key(&10)
        && !e.state.dry.contains_key(&10)
        && e.state.pending_kill.is_none()
}

#[test]
fn another_program_on_the_same_pid_starts_afresh() {
    let e = after_look(App { age_ms: 300, ..app(10, "game", Class::Cached, 100) });
    assert!(forgotten(&e), "state of the dead 'mail' carried over to 'game' on pid 10: {:?}", e.state);
}

#[test]
fn the_same_program_restarted_on_the_same_pid_starts_afresh() {
    // Younger than it was at the last look: a new process, though its name is the same.
    let e = after_look(App { age_ms: 300, ..app(10, "mail", Class::Cached, 100) });
    assert!(forgotten(&e), "state of the dead 'mail' carried over to the new 'mail' on pid 10: {:?}", e.state);
}

#[test]
fn the_same_process_seen_again_keeps_its_state() {
    let e = after_look(App { age_ms: 63_000, ..app(10, "mail", Class::Cached, 100) });
    assert!(
        e.state.last_front_switch.contains_key(&10) && e.state.last_front_ms.contains_key(&10),
        "mail lost its stint in front: {:?}",
        e.state
    );
    assert!(e.state.dry.contains_key(&10), "mail lost its dry mark");
    assert_eq!(e.state.pending_kill, Some((vec![10], 3_000)), "the pending kill of mail ended while it lives");
}

#[test]
fn an_age_read_a_little_short_is_the_same_process() {
    // Ages come from clock ticks: one read a tick short of the last is no new process.
    let e = after_look(App { age_ms: 61_990, ..app(10, "mail", Class::Cached, 100) });
    assert!(e.state.last_front_switch.contains_key(&10), "a jitter in age was taken for a new process");
}
