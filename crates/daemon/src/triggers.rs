//! The PSI triggers the daemon waits on, each with its rule run again on the daemon's own reads of the stall (core
//! `stall_trigger.rs` says why: a read of a pressure file can take the kernel's check of an unprivileged trigger, and
//! the trigger then never fires). One pressure event a window per trigger, from the kernel or from a read, whichever
//! comes first.

use memorch_core::engine::stall_trigger::StallTrigger;
use memorch_core::engine::PressureLevel;
use memorch_core::snapshot::Psi;
use memorch_core::Facility;
use memorch_linux::events::{PsiTrigger, StallKind};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Trigger {
    pub kernel: PsiTrigger,
    pub reads: StallTrigger,
}

impl Trigger {
    /// The kernel's trigger as armed (its window rounded up where the kernel asked for it).
    pub fn new(kernel: PsiTrigger) -> Trigger {
        let reads = StallTrigger::new(kernel.stall_us, kernel.window_us);
        Trigger { kernel, reads }
    }

    pub fn level(&self) -> PressureLevel {
        if self.kernel.kind == StallKind::Full {
            PressureLevel::Complete
        } else {
            PressureLevel::Partial
        }
    }
}

/// The domain's triggers, and the clock their windows run on.
#[derive(Debug)]
pub struct Triggers {
    pub list: Vec<Trigger>,
    epoch: Instant,
}

impl Triggers {
    pub fn new(list: Vec<Trigger>) -> Triggers {
        Triggers { list, epoch: Instant::now() }
    }

    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// The kernel's trigger `i` fired: its level, unless a read raised it within its window.
    pub fn kernel_fired(&mut self, i: usize) -> Option<PressureLevel> {
        let now = self.now_us();
        let t = &mut self.list[i];
        t.reads.kernel_fired(now).then(|| t.level())
    }

    /// A read of the domain's PSI: the level of each trigger whose threshold the stall reached within its window with
    /// no event from the kernel (the read raises it).
    pub fn read(&mut self, psi: &Facility<Psi>) -> Vec<PressureLevel> {
        let Some(p) = psi.get() else { return Vec::new() };
        let now = self.now_us();
        let mut raised = Vec::new();
        for t in &mut self.list {
            let total = if t.kernel.kind == StallKind::Full { p.full.total_us } else { p.some.total_us };
            if t.reads.read(now, total) {
                tracing::debug!(kind = ?t.kernel.kind, stall_us = t.kernel.stall_us, window_us = t.kernel.window_us, "stall over a trigger's threshold read with no event from the kernel: raised");
                raised.push(t.level());
            }
        }
        raised
    }

    /// The longest window of the triggers (one cannot fire again sooner), if any is armed.
    pub fn window(&self) -> Option<Duration> {
        self.list.iter().map(|t| t.kernel.window_us).max().map(Duration::from_micros)
    }
}
