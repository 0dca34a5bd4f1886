//! Where an app stands in the ladder, and why (`memorch ctl explain`): the same victim order and zram ratio the engine
//! decides with, so an explanation never disagrees with a decision.

use super::decide::Engine;
use super::ladder::zram_ratio;
use super::model::App;
use super::victims::{self, Candidate};
use crate::Snapshot;

#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// Never acted on (memorch, its ancestors, a namespace's init, a protected name, a system process).
    pub protected: bool,
    /// Its place in the kill order, 1 first; `None` if it may not be killed.
    pub kill_rank: Option<usize>,
    pub candidates: usize,
    pub freeable_bytes: u64,
    pub relaunch_ms: f64,
    pub cost_ms_per_mb: f64,
    pub summary: String,
}

impl Engine {
    /// `pid`'s standing among `apps` (the last full snapshot's), or `None` if it is not one.
    pub fn explain(&self, snapshot: &Snapshot, apps: &[App], pid: u32) -> Option<Standing> {
        let app = apps.iter().find(|a| a.pid == pid)?;
        let ratio = zram_ratio(snapshot);
        let stats = &self.state.stats;
        let mut order: Vec<Candidate> =
            apps.iter().filter(|a| a.actionable()).map(|a| Candidate::new(a, stats, ratio)).collect();
        victims::order(&mut order, self.preset.kill.order);
        let kill_rank = order.iter().position(|c| c.pid == pid).map(|r| r + 1);
        let me = Candidate::new(app, stats, ratio);
        let summary = if app.protected {
            "protected: memorch, an ancestor of it, the init of a PID namespace, or a name in [apps] protected"
                .to_string()
        } else if app.class.is_protected() {
            "a system process (oom_score_adj < 0): never acted on".to_string()
        } else {
            match kill_rank {
                Some(r) => format!(
                    "{r} of {} in the kill order (least important class first, then {:?})",
                    order.len(),
                    self.preset.kill.order
                ),
                None => "not a candidate".into(),
            }
        };
        Some(Standing {
            protected: !app.actionable(),
            kill_rank,
            candidates: order.len(),
            freeable_bytes: me.freeable_bytes,
            relaunch_ms: me.relaunch_ms,
            cost_ms_per_mb: me.cost_per_mb(),
            summary,
        })
    }
}
