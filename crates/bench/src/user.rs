//! What the user does on the device during a run: visits (a first launch, a return, a relaunch), switching away, going
//! home and idle; and what the launcher tells the manager of each, as an activity manager would.

use crate::device::Device;
use crate::driver::{supervise, Run};
use crate::results::Visit;
use crate::running::{self, Running};
use crate::scenario::{expand, AppDef};
use memorch_core::Class;
use memorch_linux::{process, snapshot, Domain, SysRoot};
use memorch_protocol::Request;
use std::time::{Duration, Instant};

/// A run stops when its first this many launches all failed: the scenario cannot work here (a missing program, a bad
/// path), and every later figure would be a lie.
const FIRST_LAUNCHES: usize = 3;

impl Run<'_> {
    /// Whether `app`, whose resume failed, was killed before it could answer: it exits by SIGKILL within a second (a
    /// crash stays a failed visit). Its death is booked in the class it had when it was chosen, `class_before`, not the
    /// foreground it was moved to.
    pub(crate) fn killed_before_its_resume(&mut self, app: &str, class_before: Class) -> bool {
        let Some(r) = self.running.get_mut(app) else { return false };
        if !memorch_linux::wait::wait_for(Duration::from_secs(1), || !r.alive()) || !r.was_killed() {
            return false;
        }
        r.class = class_before;
        self.reap();
        true
    }

    /// The user leaves the app in front: it reports its frames and becomes previous, the previous one cached (an app
    /// with a background class of its own takes that at once); then home.
    pub(crate) fn switch_away(&mut self) {
        self.reap();
        if let (Some(f), Some(v)) = (self.fg.clone(), self.fg_visit.take()) {
            let (peer, device) = (&mut self.peer, &self.device);
            if let Some(r) = self.running.get_mut(&f) {
                r.end_frames(&mut self.visits[v], &mut || supervise(peer, device));
            }
        }
        if let Some(p) = self.prev.take() {
            self.set_class(&p, Class::Cached);
        }
        if let Some(f) = self.fg.take() {
            match self
                .cfg
                .scenario
                .apps
                .iter()
                .find(|a| a.name == f)
                .and_then(|a| a.background.as_deref())
                .and_then(Class::from_name)
            {
                Some(c) => self.set_class(&f, c),
                None => {
                    self.set_class(&f, Class::Previous);
                    self.prev = Some(f);
                }
            }
        }
        self.tell(Request::Home {});
    }

    /// Home, screen off: the managers' idle work, then what it left free.
    pub(crate) fn idle(&mut self) -> Result<(), String> {
        self.tell(Request::Screen { on: false });
        self.pass_time(self.cfg.scenario.visits.idle_ms);
        self.tell(Request::Screen { on: true });
        let at = self.sample()?;
        self.idle_available.push(at.available_bytes);
        self.timeline.push(at);
        Ok(())
    }

    /// Visit an app: resume it if alive, else launch it; then use it for a while.
    pub(crate) fn visit(&mut self, number: usize, app: &str) -> Result<(), String> {
        let def = self.cfg.scenario.apps.iter().find(|a| a.name == app).expect("validated").clone();
        let def = self.expanded(&def);
        let t = Instant::now();
        let alive = self.running.get_mut(app).is_some_and(|r| r.alive());
        let after_compaction =
            alive && self.daemon.as_ref().zip(self.running.get(app)).is_some_and(|(d, r)| d.take_compacted(r.pid()));
        let (visit, launched) =
            if alive { self.return_to(&def, app, number)? } else { (self.launch(&def, number)?, true) };
        let at_ms = t.duration_since(self.t0).as_millis() as u64;
        if let Some(e) = &visit.error {
            (self.cfg.note)(&format!(
                "{}: visit {} ('{app}') failed: {e}\n  logs: {}",
                self.cfg.manager,
                number + 1,
                self.cfg.log_dir.display()
            ));
        }
        self.visits.push(Visit { at_ms, after_compaction, ..visit });
        self.fg_visit = Some(self.visits.len() - 1);
        if launched {
            // A live app was brought to the front before its resume.
            self.set_class(app, Class::Foreground);
        }
        self.fg = Some(app.to_string());
        // The user uses the app for a while.
        self.pass_time(self.cfg.scenario.use_ms);
        let s = self.sample()?;
        self.timeline.push(s);
        Ok(())
    }

    /// A return to an app alive: moved to the front (and thawed, where the manager froze it) before it is asked to
    /// draw, as an activity manager does; the user waits from the tap. The visit, and whether the app had to be
    /// launched after all (killed as it was tapped).
    fn return_to(&mut self, def: &AppDef, app: &str, number: usize) -> Result<(Visit, bool), String> {
        let class_before = self.running.get(app).map_or(Class::Cached, |r| r.class);
        let tap = Instant::now();
        self.set_class(app, Class::Foreground);
        let to_front = tap.elapsed();
        let (peer, device) = (&mut self.peer, &self.device);
        let r = self.running.get_mut(app).expect("alive");
        let before = ReturnCounters::read(&self.root, &self.domain, device);
        let mut resumed = r.resume(def, number, &mut || supervise(peer, device));
        resumed.latency_ms += to_front.as_secs_f64() * 1000.0;
        resumed.to_front_us = to_front.as_micros() as u64;
        let after = ReturnCounters::read(&self.root, &self.domain, device);
        // A side that could not be read leaves the return's counters at 0 rather than giving it the device's whole
        // count.
        let resumed = match (before, after) {
            (Some(b), Some(a)) => a.since(&b, resumed),
            _ => resumed,
        };
        if resumed.error.is_some() && self.killed_before_its_resume(app, class_before) {
            // A manager killed it at home, as the user tapped it (its SIGKILL was on the way when the bench saw it
            // alive): the tap relaunches it, as on a phone, timed from the tap. Not a failed visit, nor a foreground
            // kill.
            let relaunch = self.launch(def, number)?;
            return Ok((Visit { latency_ms: resumed.latency_ms + relaunch.latency_ms, ..relaunch }, true));
        }
        // As Android's activity manager reports a warm start's time: what a return to this app takes is what a
        // read-back would add to (memorch weighs it).
        if let (None, Some(r)) = (&resumed.error, self.running.get(app)) {
            self.tell_launched(app, r.pid(), resumed.latency_ms, false);
        }
        Ok((resumed, false))
    }

    /// A cold launch: tell the manager, start the app in the device, wait until it is up. Timed from the tap: what the
    /// manager does before it answers the launch (a preset whose launcher waits answers once what it secured for the
    /// launch is done) is in the user's wait.
    pub(crate) fn launch(&mut self, def: &AppDef, number: usize) -> Result<Visit, String> {
        self.reap();
        self.running.remove(&def.name);
        let t = Instant::now();
        self.tell(Request::Launch { app: def.name.clone(), expect_mb: Some(def.anon_mb + def.file_mb + def.so_mb) });
        let trim_socket = self.daemon.as_ref().map(|d| d.socket().to_path_buf());
        // An app the device put in a group of its own needs none of the manager's.
        let start = running::Start {
            app_group: self.app_groups && !self.app_scopes,
            ksm: self.cfg.scenario.ksm,
            trim_socket: trim_socket.as_deref(),
        };
        let domain = if self.app_scopes { self.device.app_scope(&def.name, number)? } else { self.domain_name.clone() };
        let cmd = running::app_command(
            self.cfg.exe,
            &domain,
            def,
            self.cfg.scenario.seed + number as u64,
            self.cfg.work_dir,
            start,
        );
        let log = self.cfg.log_dir.join(format!("{}.{number}.log", def.name));
        let device = &self.device;
        let started = Running::start(def, cmd, &log, |c| device.spawn(c, true));
        let peer = &mut self.peer;
        let (visit, up) = running::cold_visit(def, started, t, &mut || supervise(peer, device));
        self.launches.push(visit.error.clone());
        if let Some(r) = up {
            let pid = r.pid();
            self.running.insert(def.name.clone(), r);
            self.tell_launched(&def.name, pid, visit.latency_ms, true);
        }
        Ok(visit)
    }

    /// The app with `{run}` and `{app}` filled in.
    pub(crate) fn expanded(&self, def: &AppDef) -> AppDef {
        let run = self.cfg.run_dir.to_string_lossy();
        let vars = [("run", run.as_ref()), ("app", def.name.as_str())];
        let e = |s: &String| expand(s, &vars);
        AppDef {
            command: def.command.iter().map(e).collect(),
            ready: def.ready.as_ref().map(e),
            resume: def.resume.as_ref().map(e),
            ..def.clone()
        }
    }

    /// The first launches all failed: the error of the first, to stop the run with.
    pub(crate) fn first_launches_failed(&self) -> Option<String> {
        let n = FIRST_LAUNCHES.min(self.cfg.scenario.apps.len());
        let first = self.launches.get(..n)?;
        first.iter().all(Option::is_some).then(|| {
            format!(
                "the first {n} launches all failed, so the run stopped; the first: {}",
                first[0].clone().unwrap_or_default()
            )
        })
    }

    /// An app's class, as Android's activity manager says it whatever the killer: to memorch's daemon where it manages
    /// the device (it writes `oom_score_adj`, as lmkd does for the activity manager), else to the kernel directly
    /// (`oom_score_adj`, which the kernel's OOM killer and the peers rank by). One writer either way.
    pub(crate) fn set_class(&mut self, app: &str, class: Class) {
        let Some(r) = self.running.get_mut(app) else { return };
        if !r.alive() {
            return;
        }
        r.class = class;
        let pid = r.pid();
        match self.told_daemon() {
            Some(d) => d.tell(&Request::state(pid, class)),
            None => {
                let _ = process::write_oom_score_adj(&self.root, &pid.to_string(), class.oom_score_adj());
            }
        }
    }

    /// Tell memorch's daemon that `app` is up after a launch (`cold`) or a return, and how long the user waited.
    pub(crate) fn tell_launched(&self, app: &str, pid: u32, latency_ms: f64, cold: bool) {
        self.tell(Request::Launched {
            app: app.to_string(),
            pid,
            ms: (latency_ms as u64).clamp(1, memorch_protocol::MAX_LAUNCH_MS),
            cold,
        });
    }

    /// Tell memorch's daemon, if it is the manager and the launcher talks to it.
    pub(crate) fn tell(&self, req: Request) {
        if let Some(d) = self.told_daemon() {
            d.tell(&req);
        }
    }

    /// memorch's daemon where the launcher talks to it; a silent launcher only writes `oom_score_adj`, as on ordinary
    /// Linux.
    fn told_daemon(&self) -> Option<&crate::managed::ManagedDaemon> {
        self.daemon.as_ref().filter(|_| self.cfg.launcher == crate::conditions::Launcher::Full)
    }
}

/// The device's counters around a return: what it read back, and what it did to make room.
struct ReturnCounters {
    refault_anon: u64,
    refault_file: u64,
    /// Pages read from and written to its zram; `None` without zram (or unreadable).
    zram_io: Option<(u64, u64)>,
    direct_reclaims: u64,
    free_bytes: u64,
}

impl ReturnCounters {
    fn read(root: &SysRoot, domain: &Domain, device: &Device) -> Option<ReturnCounters> {
        let s = snapshot::cheap(root, domain).ok()?;
        Some(ReturnCounters {
            refault_anon: s.counters.refault_anon_pages.unwrap_or(0),
            refault_file: s.counters.refault_file_pages.unwrap_or(0),
            zram_io: device.zram_io(),
            direct_reclaims: s.counters.direct_reclaims.unwrap_or(0),
            free_bytes: s.memory.free_bytes,
        })
    }

    /// `visit`, served between `before` and `self`, with what the counters say of it.
    fn since(&self, before: &ReturnCounters, visit: Visit) -> Visit {
        let zram =
            self.zram_io.zip(before.zram_io).map(|((r1, w1), (r0, w0))| (r1.saturating_sub(r0), w1.saturating_sub(w0)));
        Visit {
            refaults_anon: self.refault_anon.saturating_sub(before.refault_anon),
            refaults_file: self.refault_file.saturating_sub(before.refault_file),
            zram_reads: zram.map_or(0, |(r, _)| r),
            swapouts: zram.map_or(0, |(_, w)| w),
            direct_reclaims: self.direct_reclaims.saturating_sub(before.direct_reclaims),
            free_kib_at_return: before.free_bytes / 1024,
            ..visit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_return_gets_the_counters_moves_and_the_free_memory_it_began_with() {
        let before = ReturnCounters {
            refault_anon: 100,
            refault_file: 50,
            zram_io: Some((10, 7)),
            direct_reclaims: 3,
            free_bytes: 8 << 20,
        };
        let after = ReturnCounters {
            refault_anon: 600,
            refault_file: 50,
            zram_io: Some((410, 207)),
            direct_reclaims: 9,
            free_bytes: 1 << 20,
        };
        let v = after.since(&before, Visit::new("mail", crate::results::WARM, 12.0));
        assert_eq!(
            (v.refaults_anon, v.refaults_file, v.zram_reads, v.swapouts, v.direct_reclaims),
            (500, 0, 400, 200, 6)
        );
        assert_eq!(v.free_kib_at_return, 8 << 10, "free memory as the return began, not as it ended");
        assert_eq!((v.app.as_str(), v.latency_ms), ("mail", 12.0));
        // A counter that went backwards (a device reset) gives 0, not a wrap.
        let reset = ReturnCounters { zram_io: Some((0, 207)), ..after };
        assert_eq!(reset.since(&before, Visit::new("mail", crate::results::WARM, 1.0)).zram_reads, 0);
        // zram unread on one side: no zram figures, not the device's whole count.
        let unread =
            ReturnCounters { zram_io: None, refault_anon: 600, refault_file: 50, direct_reclaims: 9, free_bytes: 0 };
        let v = unread.since(&before, Visit::new("mail", crate::results::WARM, 1.0));
        assert_eq!((v.zram_reads, v.swapouts, v.refaults_anon), (0, 0, 500));
    }
}
