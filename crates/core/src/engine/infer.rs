//! What the user is doing, told by nobody: when no launcher talks to memorch, the engine infers it from what it can see
//! between snapshots, as an activity manager leaves traces (Android's rewrites every app's `oom_score_adj` on each
//! switch): an app coming to the front (its class rises to foreground) is a switch, so the home screen was passed on
//! the way; a new process in front is a launch; no switch and no new process for a while is the device left idle. Once
//! a launcher or session manager speaks over the socket, its word is taken and inference stops.

use super::model::{App, Event};
use crate::Class;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// No switch and no new app for this long: the device is idle (the screen off, or nobody at it), time for the idle
/// step.
pub const IDLE_AFTER_MS: u64 = 60_000;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    /// Each process's class at the last look.
    classes: BTreeMap<u32, Class>,
    /// The app in front at the last look.
    front: Option<u32>,
    /// When the user last did something (a switch, a launch).
    last_activity_ms: u64,
    /// Whether idleness was inferred (and not yet ended).
    idle: bool,
    /// A launcher spoke: inference is off.
    pub told: bool,
    /// A look has seen apps: the ones it found were learned, not taken for a switch.
    #[serde(default)]
    learned: bool,
}

/// Events a launcher or session manager sends; any of them turns inference off.
fn from_launcher(e: &Event) -> bool {
    matches!(
        e,
        Event::AppState { .. }
            | Event::LaunchIntent { .. }
            | Event::Launched { .. }
            | Event::Home
            | Event::Screen { .. }
    )
}

impl Observed {
    /// Forget `pid`'s class and place in front: its pid now belongs to another process.
    pub fn forget(&mut self, pid: u32) {
        self.classes.remove(&pid);
        if self.front == Some(pid) {
            self.front = None;
        }
    }

    /// The events the snapshot's apps imply since the last look (none once told).
    pub fn infer(&mut self, now_ms: u64, apps: &[App], events: &[Event]) -> Vec<Event> {
        if self.told || events.iter().any(from_launcher) {
            self.told = true;
            return Vec::new();
        }
        // Until a look has seen an app, what it finds is learned, not taken for a switch: a daemon started before its
        // apps (a test, a bench, a device booting) would otherwise see the first app in front as a switch and run the
        // home step at start.
        let first_look = !self.learned;
        let mut out = Vec::new();
        let front = apps
            .iter()
            .filter(|a| a.class == Class::Foreground && a.actionable())
            .max_by_key(|a| (self.classes.get(&a.pid) != Some(&Class::Foreground), u64::MAX - a.age_ms))
            .map(|a| a.pid);
        for a in apps.iter().filter(|a| a.actionable()) {
            let before = self.classes.get(&a.pid).copied();
            if before != Some(a.class) && (before.is_some() || a.class == Class::Foreground) && !first_look {
                out.push(Event::AppState { pid: a.pid, class: a.class });
            }
        }
        if !first_look && front.is_some() && front != self.front {
            // Between two apps in front, the user passed the home screen (or recents).
            out.insert(0, Event::Home);
            self.last_activity_ms = now_ms;
        }
        if first_look {
            self.last_activity_ms = now_ms;
        }
        let quiet = now_ms.saturating_sub(self.last_activity_ms) >= IDLE_AFTER_MS;
        if quiet != self.idle {
            self.idle = quiet;
            out.push(Event::Screen { on: !quiet });
        }
        self.front = front;
        self.classes = apps.iter().map(|a| (a.pid, a.class)).collect();
        self.learned |= apps.iter().any(|a| a.actionable());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(pid: u32, class: Class) -> App {
        App {
            pid,
            name: format!("a{pid}"),
            class,
            ppid: 1,
            anon_bytes: 1 << 20,
            file_bytes: 0,
            shmem_bytes: 0,
            swap_bytes: 0,
            pss_bytes: None,
            so_unshared_bytes: None,
            ksm_mergeable: false,
            ksm_merged_bytes: None,
            frozen: None,
            age_ms: 1000,
            protected: false,
        }
    }

    #[test]
    fn a_switch_is_seen_from_classes_and_passes_home() {
        let mut o = Observed::default();
        assert!(
            o.infer(0, &[app(1, Class::Foreground), app(2, Class::Cached)], &[]).is_empty(),
            "the first look only learns"
        );
        // The activity manager rewrote the classes: 2 in front, 1 previous.
        let e = o.infer(1000, &[app(1, Class::Previous), app(2, Class::Foreground)], &[]);
        assert_eq!(e[0], Event::Home);
        assert!(e.contains(&Event::AppState { pid: 2, class: Class::Foreground }));
        assert!(e.contains(&Event::AppState { pid: 1, class: Class::Previous }));
        // A new process in front: a launch (an app state in front, and home before it).
        let e = o.infer(2000, &[app(1, Class::Cached), app(2, Class::Previous), app(3, Class::Foreground)], &[]);
        assert_eq!(e[0], Event::Home);
        assert!(e.contains(&Event::AppState { pid: 3, class: Class::Foreground }));
        assert!(
            o.infer(2500, &[app(1, Class::Cached), app(2, Class::Previous), app(3, Class::Foreground)], &[]).is_empty(),
            "nothing changed"
        );
    }

    /// A daemon that looks before its apps exist (started first, its first look some milliseconds in) learns the apps
    /// it then finds: no switch, no home step at start.
    #[test]
    fn apps_found_after_an_empty_first_look_are_learned_not_a_switch() {
        let mut o = Observed::default();
        assert!(o.infer(3, &[], &[]).is_empty());
        assert!(o.infer(250, &[app(1, Class::Foreground), app(2, Class::Cached)], &[]).is_empty(), "learned");
        assert_eq!(
            o.infer(1000, &[app(1, Class::Previous), app(2, Class::Foreground)], &[])[0],
            Event::Home,
            "then a switch is one"
        );
    }

    #[test]
    fn quiet_is_idle_until_the_user_is_back() {
        let mut o = Observed::default();
        let apps = [app(1, Class::Foreground), app(2, Class::Cached)];
        o.infer(0, &apps, &[]);
        assert!(o.infer(IDLE_AFTER_MS - 1, &apps, &[]).is_empty());
        assert_eq!(o.infer(IDLE_AFTER_MS, &apps, &[]), vec![Event::Screen { on: false }]);
        assert!(o.infer(IDLE_AFTER_MS + 5000, &apps, &[]).is_empty(), "said once");
        let back = o.infer(IDLE_AFTER_MS + 6000, &[app(1, Class::Cached), app(2, Class::Foreground)], &[]);
        assert!(back.contains(&Event::Screen { on: true }) && back.contains(&Event::Home), "{back:?}");
    }

    #[test]
    fn a_launcher_s_word_ends_inference() {
        let mut o = Observed::default();
        o.infer(0, &[app(1, Class::Foreground)], &[]);
        assert!(o.infer(10, &[app(1, Class::Cached), app(2, Class::Foreground)], &[Event::Home]).is_empty());
        assert!(o.told);
        assert!(
            o.infer(IDLE_AFTER_MS * 2, &[app(2, Class::Cached), app(1, Class::Foreground)], &[]).is_empty(),
            "told once, told for good"
        );
    }
}
