//! What clients of the control socket ask, and the answers: every request authorised and answered, status and
//! explanations built from what the daemon last saw.

use crate::access;
use crate::daemon::Daemon;
use crate::metrics;
use memorch_core::engine::Event;
use memorch_core::Class;
use memorch_linux::process;
use memorch_protocol::{Answer, Decided, Explanation, MarginsInfo, Metrics, Request, Status, ZramInfo};
use std::time::Instant;

impl Daemon {
    /// One request line from client `i`; returns whether it calls for a decision now.
    pub(crate) fn on_line(&mut self, i: usize, line: Result<String, String>, woke: Instant) -> bool {
        self.counters.requests += 1;
        let peer = self.server.clients[i].peer;
        let req = line.and_then(|l| memorch_protocol::parse(&l)).and_then(|r| {
            let root = &self.root;
            access::authorize(&r, peer, &self.cfg.control.uids, |pid| process::owner_uid(root, pid).ok()).map(|_| r)
        });
        self.server.clients[i].judged(req.is_ok());
        let (answer, decide) = match req {
            Ok(r) => self.handle(r, i, woke),
            Err(e) => (Answer::err(e), false),
        };
        if !answer.ok {
            self.counters.bad_requests += 1;
        }
        self.server.clients[i].send(answer.line().as_bytes());
        decide
    }

    fn handle(&mut self, req: Request, client: usize, woke: Instant) -> (Answer, bool) {
        match req {
            Request::State { pid, class } => (self.set_class(pid, Class::from_name(&class).expect("validated")), false),
            Request::Launch { app, expect_mb } => {
                self.events.push(Event::LaunchIntent { app, expected_bytes: expect_mb.map(|mb| mb << 20) });
                if self.engine.preset.ahead.as_ref().is_some_and(|a| !a.launch_waits) {
                    // Answered at once: the app starts while what it needs is secured beside it (the decision follows
                    // the answer, in this same wake).
                    return (Answer::with(&Decided { decided: false }), true);
                }
                // Decide now and answer with what was done, so a launcher can wait for it.
                let before = self.counters.decisions;
                self.decide(woke, "request");
                (Answer::with(&Decided { decided: self.counters.decisions > before }), false)
            }
            Request::Launched { app, pid, ms, cold } => {
                // Its name is the launcher's from now on: what its statistics are kept under.
                self.looks.view.tell_name(pid, app.clone());
                self.events.push(Event::Launched { app, pid, ms, cold });
                (Answer::ok(None), false)
            }
            Request::Home {} => {
                self.events.push(Event::Home);
                // Decided (and carried out) before the answer, as a launch intent is: what the home step frees (MOS
                // phase 1) is decided and signalled before the user's next app comes back. (Answered first, a MOS
                // phase-1 kill once landed on the app being resumed; a victim may still be dying when the answer goes:
                // the bench relaunches an app that dies as it is tapped.)
                self.decide(woke, "request");
                (Answer::ok(None), false)
            }
            Request::Screen { on } => {
                self.events.push(Event::Screen { on });
                (Answer::ok(None), true)
            }
            Request::Status {} => (Answer::with(&self.status()), false),
            Request::Explain { pid } => (self.explain(pid), false),
            Request::Events {} => {
                self.server.clients[client].subscribed = true;
                (Answer::ok(None), false)
            }
            Request::Trim {} => {
                self.server.clients[client].trim = true;
                (Answer::ok(None), false)
            }
            Request::Margins {} => (self.margins(), false),
            Request::Metrics {} => (
                Answer::with(&Metrics {
                    text: metrics::prometheus(&self.counters, self.looks.snap.as_ref(), &self.engine.preset.name),
                }),
                false,
            ),
        }
    }

    /// A process's class, as an activity manager says it: written to its `oom_score_adj` (the daemon is the one writer
    /// of it where it runs) and remembered.
    fn set_class(&mut self, pid: u32, class: Class) -> Answer {
        if !self.domain.contains(&self.root, pid).unwrap_or(false) {
            return Answer::err(format!("pid {pid} is not in domain {}", self.domain.spec));
        }
        if !self.exec.dry_run {
            if let Err(e) = process::write_oom_score_adj(&self.root, &pid.to_string(), class.oom_score_adj()) {
                return Answer::err(e.to_string());
            }
        }
        // Brought back (or made visible): thawed before the launcher hears back, so the app runs when it is resumed.
        if class < Class::Cached {
            if let Some(Err(e)) = self.exec.thaw_now(pid) {
                return Answer::err(format!("pid {pid} could not be thawed: {e}"));
            }
        }
        self.looks.view.tell_class(pid, class);
        self.events.push(Event::AppState { pid, class });
        Answer::ok(None)
    }

    /// The margins the engine decides on, and where available memory stands against them.
    fn margins(&self) -> Answer {
        let Some(snap) = &self.looks.snap else { return Answer::err("no snapshot yet: ask again in a moment") };
        let m = memorch_core::engine::margins::Margins::of(&self.engine.preset, snap.memory.total_bytes);
        let available = snap.memory.available_bytes;
        Answer::with(&MarginsInfo {
            critical_kib: m.critical_bytes / 1024,
            moderate_kib: m.moderate_bytes / 1024,
            available_kib: available / 1024,
            reclaim_target_kib: m.reclaim_target(available) / 1024,
        })
    }

    fn status(&self) -> Status {
        let (cpu_seconds, rss_bytes) = metrics::self_usage();
        Status {
            preset: self.engine.preset.name.clone(),
            domain: self.domain.spec.to_string(),
            dry_run: self.exec.dry_run,
            uptime_ms: self.now_ms(),
            counters: self.counters.clone(),
            memory: self.looks.snap.as_ref().map(|s| s.memory.clone()),
            psi: self.looks.snap.as_ref().map(|s| s.psi.clone()),
            apps: self.looks.apps.len(),
            zram: self.zram.first().map(|z| ZramInfo {
                device: z.setup.device.clone(),
                algorithm: z.setup.algorithm.clone(),
                disksize_bytes: z.setup.disksize_bytes,
            }),
            swap_files: self.exec.actuators.swap_files(),
            pending_kills: self.exec.reaping.len(),
            cpu_seconds,
            rss_bytes,
            device_costs: self.engine.state.stats.device.clone(),
        }
    }

    /// Where a process stands in the ladder, and why: the engine's own explanation.
    fn explain(&self, pid: u32) -> Answer {
        let (Some(snap), Some(app)) = (&self.looks.snap, self.looks.apps.iter().find(|a| a.pid == pid)) else {
            return Answer::err(format!("pid {pid} was not in domain {} at the last full snapshot", self.domain.spec));
        };
        let st = self.engine.explain(snap, &self.looks.apps, pid).expect("an app of the snapshot");
        Answer::with(&Explanation {
            pid,
            app: app.name.clone(),
            class: app.class,
            protected: st.protected,
            kill_rank: st.kill_rank,
            candidates: st.candidates,
            freeable_bytes: st.freeable_bytes,
            relaunch_ms: st.relaunch_ms,
            cost_ms_per_mb: st.cost_ms_per_mb,
            stats: self.engine.state.stats.get(&app.name).cloned(),
            last_action: self.last_reasons.get(&pid).cloned(),
            summary: st.summary,
        })
    }
}
