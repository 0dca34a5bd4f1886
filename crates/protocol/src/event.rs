//! Events: after `{"cmd":"events"}`, one line per action, per victim about to be killed and gone, and per trim notice;
//! after `{"cmd":"trim"}`, trim notices only.

use memorch_core::engine::margins::TrimLevel;
use memorch_core::engine::Action;
use memorch_core::Class;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Action(ActionEvent),
    /// A kill is about to happen (sent before the signal, while the pre-kill hook runs).
    PreKill(PreKill),
    VictimGone(VictimGone),
    Trim(TrimNotice),
}

/// An app about to be killed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreKill {
    pub pid: u32,
    pub app: String,
    pub class: Class,
    pub reason: String,
    /// How long the kill waits for the pre-kill hook, at most.
    pub wait_ms: u64,
}

/// Give memory back: Android's `onTrimMemory`, the freedesktop `LowMemoryWarning`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrimNotice {
    pub level: TrimLevel,
    /// Only this process is meant (`hidden`); else every listener.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub available_bytes: u64,
    /// What would take the domain clear of the moderate margin.
    pub reclaim_target_bytes: u64,
}

/// An action of a decision and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionEvent {
    #[serde(flatten)]
    pub action: Action,
    /// Carried out (not dry run, not failed).
    pub done: bool,
    pub dry_run: bool,
    /// What it did, in words (or why it failed).
    pub result: String,
    /// Bytes moved, reclaimed or (for a kill) resident in the victims.
    pub bytes: u64,
    /// What woke the decision: pressure, request, timer, start.
    pub cause: String,
    /// Microseconds from that wake-up to the action, to the snapshot, to the decision.
    pub wake_to_act_us: Option<u64>,
    pub snapshot_done_us: u64,
    pub decided_us: u64,
}

impl ActionEvent {
    /// The pids of a kill carried out.
    pub fn killed(&self) -> Vec<u32> {
        match &self.action.kind {
            memorch_core::engine::ActionKind::Kill { victims, .. } if self.done => {
                victims.iter().map(|v| v.pid).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The pid whose anonymous pages a compaction carried out moved (some bytes at least).
    pub fn compacted_anon(&self) -> Option<u32> {
        use memorch_core::engine::{ActionKind, CompactScope};
        match &self.action.kind {
            ActionKind::Compact { pid, scope: CompactScope::Anon | CompactScope::All, .. }
                if self.done && self.bytes > 0 =>
            {
                Some(*pid)
            }
            _ => None,
        }
    }
}

/// A victim's pidfd said it is gone: what came back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VictimGone {
    pub pid: u32,
    pub app: String,
    pub regained_bytes: u64,
    pub ms: u64,
    /// Why it was killed (the kill's reason).
    #[serde(default)]
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use memorch_core::engine::{ActionKind, Reason, Step};

    /// Every action a subscriber may be sent reads back as the event it was: an action whose own field shared a key
    /// with the event's (`bytes`, in `reclaim` and `swap_grow`) made a line with the key twice, which the client
    /// skipped as no event.
    #[test]
    fn every_action_event_reads_back_as_sent() {
        let kinds = [
            ActionKind::Reclaim { bytes: 7 << 20 },
            ActionKind::SwapGrow { bytes: 128 << 20 },
            ActionKind::SwapShrink,
            ActionKind::SwapDropCold { path: "/var/lib/memorch/swap/memorch-swap-3.swap".into() },
            ActionKind::Compact {
                pid: 5,
                app: "a".into(),
                scope: memorch_core::engine::CompactScope::Anon,
                max_pages: Some(3),
                to_storage: false,
            },
            ActionKind::Compact {
                pid: 5,
                app: "a".into(),
                scope: memorch_core::engine::CompactScope::Anon,
                max_pages: Some(3),
                to_storage: true,
            },
            ActionKind::Prefetch { pid: 5, app: "a".into(), max_pages: 3 },
            ActionKind::Ksm { run: true, pages_to_scan: 100 },
            ActionKind::Freeze { pid: 5 },
            ActionKind::Thaw { pid: 5 },
            ActionKind::Trim { level: TrimLevel::Moderate, pid: Some(5) },
            ActionKind::Kill {
                victims: vec![memorch_core::engine::Victim {
                    pid: 5,
                    app: "a".into(),
                    class: Class::Cached,
                    freeable_bytes: 9,
                }],
                target_bytes: 8,
                min_class: Class::Cached,
            },
            ActionKind::Nothing,
        ];
        for kind in kinds {
            let e = Event::Action(ActionEvent {
                action: Action { kind, reason: Reason::new(Step::AdaptiveSwap, "why") },
                done: true,
                dry_run: false,
                result: "done".into(),
                bytes: 1 << 20,
                cause: "timer".into(),
                wake_to_act_us: Some(3),
                snapshot_done_us: 1,
                decided_us: 2,
            });
            let line = serde_json::to_string(&e).unwrap();
            let back: Event = serde_json::from_str(&line).unwrap_or_else(|err| panic!("{line}: {err}"));
            assert_eq!(back, e, "{line}");
        }
    }
}
