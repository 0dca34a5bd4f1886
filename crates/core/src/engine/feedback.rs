//! What the engine learns from each input before it decides: app states, launch costs and peaks, pages that came back
//! after a compaction (refault feedback), PSI (aggression), and whether pending kills are done.

use super::costs::Swap;
use super::input::Input;
use super::model::{Event, PAGE};
use super::preset::{Detection, Preset};
use super::state::{Seen, State};
use super::stats::REFAULT_WINDOW_MS;

/// How much younger than at the last look a process may read before its pid is taken for another process's: its age
/// comes from clock ticks and the uptime read at another moment.
pub const AGE_SLACK_MS: u64 = 1_000;

/// Forget what is kept by pid for pids the kernel has given to another process since the last look (another name, or
/// younger), so a new process does not inherit a dead app's stint, squeezes and marks. Gone pids: [`observe`].
pub fn forget_reborn(state: &mut State, input: &Input) {
    let reborn: Vec<u32> = input
        .apps
        .iter()
        .filter(|a| state.seen.get(&a.pid).is_some_and(|s| s.name != a.name || a.age_ms + AGE_SLACK_MS < s.age_ms))
        .map(|a| a.pid)
        .collect();
    for pid in reborn {
        state.forget_pid(pid);
    }
    state.seen = input.apps.iter().map(|a| (a.pid, Seen { name: a.name.clone(), age_ms: a.age_ms })).collect();
}

/// What this input teaches before the decision: what the user did (events), who is alive, what compactions came back,
/// the stall.
pub fn observe(state: &mut State, preset: &Preset, input: &Input) {
    // The apps this input's events bring to the front (or make visible).
    let brought: Vec<u32> = input.events.iter().filter_map(|e| observe_event(state, input, e)).collect();
    if state
        .launch_in_flight
        .as_ref()
        .is_some_and(|(_, since)| input.now_ms.saturating_sub(*since) > super::preset::LAUNCH_IN_FLIGHT_MAX_MS)
    {
        state.launch_in_flight = None;
    }
    observe_deaths(state, input.events);
    for a in input.apps {
        state.stats.entry(&a.name).observe_size(a.pss_bytes.unwrap_or(a.rss_bytes()));
    }
    let mut live: Vec<u32> = input.apps.iter().map(|a| a.pid).collect();
    live.sort_unstable();
    // Marks of apps that are gone are forgotten. Pending kills end when the victims are gone *and their memory is
    // back*, which only their pidfds tell ([`Event::VictimGone`]).
    state.keep_pids(|pid| live.binary_search(&pid).is_ok());
    state.dry.retain(|_, at| input.now_ms.saturating_sub(*at) < super::state::DRY_MS);
    // In front or visible now: brought there by this input's events, or so in its classes.
    state.in_front.retain(|pid| {
        brought.contains(pid) || input.apps.iter().any(|a| a.pid == *pid && a.class <= crate::Class::Visible)
    });
    watch_refaults(state, input);
    if let Some(psi) = input.snapshot.psi.get() {
        state.note_stall(input.now_ms, psi.some.total_us);
    }
    if let (Detection::Bands(b), Some(psi)) = (&preset.detection, input.snapshot.psi.get()) {
        // Senpai/TMO: back off when compaction costs more stall than the target, push on when it costs nothing.
        let some = psi.some.avg10;
        state.aggression = if some > b.psi_some_target_pct {
            (state.aggression * 0.5).max(0.25)
        } else if some < b.psi_some_target_pct / 2.0 {
            (state.aggression * 1.25).min(4.0)
        } else {
            state.aggression
        };
    }
}

/// What one event teaches; the pid it brings to the front (or makes visible), if any.
fn observe_event(state: &mut State, input: &Input, e: &Event) -> Option<u32> {
    match e {
        Event::Screen { on } => {
            if !state.screen_on && *on {
                state.stats.session_begins();
            }
            state.screen_on = *on;
        }
        Event::Launched { app, ms, cold, pid } => {
            if state.launch_in_flight.as_ref().is_some_and(|(a, _)| a == app) {
                state.launch_in_flight = None;
            }
            state.stats.entry(app).observe_launch(*ms, *cold);
            if !*cold {
                learn_return_cost(state, input, app, *pid, *ms);
                state.stats.entry(app).observe_return(*ms as f64);
            }
            // A return reported once it is served, after the class change that brought the app to the front (counted
            // there): one front, not two.
            let front_by_class = input.apps.iter().any(|a| a.pid == *pid && a.class <= crate::Class::Visible);
            if *cold || !front_by_class {
                state.stats.came_to_front(app);
            }
            state.front(*pid, input.now_ms);
            state.in_front.insert(*pid);
            return Some(*pid);
        }
        Event::AppState { pid, class } if *class <= crate::Class::Visible => {
            // A return to an app already running. Away is what the events and inputs before said of it
            // (`State::in_front`), not its class in this input: a launcher's report and an inferred switch reach the
            // engine with the class already changed.
            if state.in_front.insert(*pid) {
                if let Some(a) = input.apps.iter().find(|a| a.pid == *pid) {
                    state.stats.came_to_front(&a.name);
                    state.returning.insert(*pid, a.swap_bytes);
                }
            }
            state.front(*pid, input.now_ms);
            // Back in front, its pages came back with it: it may give again.
            state.dry.remove(pid);
            return Some(*pid);
        }
        Event::AppState { pid, .. } => {
            state.in_front.remove(pid);
        }
        Event::LaunchIntent { app, expected_bytes } => {
            state.launch_in_flight = Some((app.clone(), input.now_ms));
            if let Some(b) = expected_bytes {
                state.stats.entry(app).observe_size(*b);
            }
        }
        _ => {}
    }
    None
}

/// What a return's pages cost: the share of the app's swap it read back (the fall of its swap since the return began),
/// and the time that took: the return's `ms` over the app's quickest (from zram, or storage if it was squeezed there
/// since it was last in front).
fn learn_return_cost(state: &mut State, input: &Input, app: &str, pid: u32, ms: u64) {
    let on_storage = state.on_storage.remove(&pid);
    let Some(before) = state.returning.remove(&pid) else { return };
    let Some(now) = input.apps.iter().find(|a| a.pid == pid).map(|a| a.swap_bytes) else { return };
    let quickest = state.stats.get(app).and_then(|s| s.quickest_return_ms);
    // A look no fresher than the return's start (a light look) says nothing of it.
    if now == before {
        return;
    }
    let back = before.saturating_sub(now);
    state.stats.entry(app).observe_return_touch(before, back);
    if let Some(quickest) = quickest {
        let swap = if on_storage { Swap::Storage } else { Swap::Zram };
        state.stats.device.observe_return(swap, ms as f64 - quickest, back / PAGE);
    }
}

/// Victims whose pidfds said they are gone: a pending kill ends with its last victim.
pub fn observe_deaths(state: &mut State, events: &[Event]) {
    for e in events {
        if let Event::VictimGone { pid } = e {
            if let Some((pids, _)) = &mut state.pending_kill {
                pids.retain(|p| p != pid);
                if pids.is_empty() {
                    state.pending_kill = None;
                }
            }
        }
    }
}

/// A compaction whose pages come back above this share within the window was of pages the app still used (the refault
/// study, paper 003: re-faults of 20-37 % are the cost to avoid).
const REFAULT_TARGET: f64 = 0.2;

/// Pages of a compacted app that come back (its swap falls) within the window: the app's refault ratio (stats.rs),
/// which `ctx explain` and the reasons show.
fn watch_refaults(state: &mut State, input: &Input) {
    let target = REFAULT_TARGET;
    let mut done = Vec::new();
    for (pid, c) in state.compacted.iter_mut() {
        let Some(app) = input.apps.iter().find(|a| a.pid == *pid) else {
            done.push(*pid);
            continue;
        };
        c.swap_peak = c.swap_peak.max(app.swap_bytes);
        // What came back: falls of its swap (frees count in too).
        c.came_back = c.came_back.max(c.swap_peak - app.swap_bytes);
        let moved = c.swap_peak.saturating_sub(c.swap_before);
        let soon_back = moved > 0 && c.came_back as f64 > target * moved as f64;
        let expired = input.now_ms.saturating_sub(c.at_ms) >= REFAULT_WINDOW_MS;
        if soon_back || expired {
            state.stats.entry(&c.app).observe_refault(moved, c.came_back.min(moved));
            done.push(*pid);
        }
    }
    for pid in done {
        state.compacted.remove(&pid);
    }
}

impl State {
    /// Everything kept of the process that had `pid`: it is gone, and its pid may be another's. A pending kill of it is
    /// done (its pid was freed, so it was reaped).
    fn forget_pid(&mut self, pid: u32) {
        self.keep_pids(|p| p != pid);
        self.in_front.remove(&pid);
        self.observed.forget(pid);
        observe_deaths(self, &[Event::VictimGone { pid }]);
    }

    /// Keep the marks and watches kept by pid for the pids `keep` holds to only (what is in front, inferred classes and
    /// pending kills follow rules of their own).
    fn keep_pids(&mut self, keep: impl Fn(u32) -> bool) {
        self.compacted.retain(|p, _| keep(*p));
        self.whole.retain(|p, _| keep(*p));
        self.dry.retain(|p, _| keep(*p));
        self.so_done.retain(|p| keep(*p));
        self.ksm_went_over.retain(|p| keep(*p));
        self.last_front_ms.retain(|p, _| keep(*p));
        self.last_front_switch.retain(|p, _| keep(*p));
        self.cached_since.retain(|p, _| keep(*p));
        self.on_screen.retain(|p| keep(*p));
        self.read_back_whole.retain(|p, _| keep(*p));
        self.read_back_dry.retain(|p, _| keep(*p));
        self.returning.retain(|p, _| keep(*p));
        self.on_storage.retain(|p| keep(*p));
    }

    /// `pid` came to the front at `now_ms`.
    fn front(&mut self, pid: u32, now_ms: u64) {
        self.last_front_ms.insert(pid, now_ms);
        self.switches += 1;
        self.last_front_switch.insert(pid, self.switches);
    }
}
