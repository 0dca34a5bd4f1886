//! The PSI triggers the daemon waits on, each with its rule run again on the daemon's own
//! reads of the stall (core `stall_trigger.rs` says why: a read of a pressure file can take
//! the kernel's check of an unprivileged trigger, and the trigger then never fires). One
//! pressure event a window per trigger, from the kernel or from a read, whichever comes first.

use crate::daemon::Daemon;
use memorch_core::engine::stall_trigger::StallTrigger;
use memorch_core::engine::{Event, PressureLevel};
use memorch_core::snapshot::Psi;
use memorch_core::Facility;
use memorch_linux::events::{PsiTrigger, StallKind};

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

impl Daemon {
    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    fn raise(&mut self, level: PressureLevel) {
        if !self.events.contains(&Event::Pressure { level }) {
            self.events.push(Event::Pressure { level });
        }
        self.counters.pressure_events += 1;
    }

    /// The kernel's trigger `i` fired: an event, unless a read raised it within its window.
    pub(crate) fn kernel_trigger_fired(&mut self, i: usize) -> bool {
        let now = self.now_us();
        let t = &mut self.triggers[i];
        let (new, level) = (t.reads.kernel_fired(now), t.level());
        if new {
            self.raise(level);
        }
        new
    }

    /// A read of the domain's PSI: each trigger whose threshold the stall reached within its
    /// window, with no event from the kernel, raises the event itself. Whether one did.
    pub(crate) fn stall_read(&mut self, psi: &Facility<Psi>) -> bool {
        let Some(p) = psi.get() else { return false };
        let now = self.now_us();
        let mut raised = Vec::new();
        for t in &mut self.triggers {
            let total = if t.kernel.kind == StallKind::Full { p.full.total_us } else { p.some.total_us };
            if t.reads.read(now, total) {
                tracing::debug!(kind = ?t.kernel.kind, stall_us = t.kernel.stall_us, window_us = t.kernel.window_us, "stall over a trigger's threshold read with no event from the kernel: raised");
                raised.push(t.level());
            }
        }
        for level in &raised {
            self.raise(*level);
            self.counters.pressure_from_reads += 1;
        }
        !raised.is_empty()
    }
}
