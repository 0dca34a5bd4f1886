//! Telling others before and after harm (issue 14): trim notices to the apps that listen on the socket and as the
//! freedesktop `LowMemoryWarning` D-Bus signal, the pre-kill hook (a command the kill waits for, within a bound) and
//! the post-kill command. What apps give back after a notice is measured here (their RSS and swap), not taken from
//! them.

use crate::bus::SystemBus;
use crate::config::Notify;
use memorch_core::engine::margins::TrimLevel;
use memorch_core::engine::{App, Victim};
use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long after a notice what an app gives back is counted.
const TRIM_WATCH: Duration = Duration::from_secs(30);

/// What a notified app held, and the most it gave back since.
struct Watched {
    before: u64,
    at: Instant,
    best: u64,
}

#[derive(Default)]
pub struct Notifier {
    /// The low-memory-monitor's name, held while trim notices are on.
    bus: SystemBus,
    /// Post-kill commands still running (reaped as they end).
    post_kill: Vec<Child>,
    watched: BTreeMap<u32, Watched>,
}

impl Notifier {
    /// Hold the bus name while trim notices are on, release it when they go off (bus.rs).
    pub fn follow_bus(&mut self, cfg: &Notify, notices: bool) -> Result<(), String> {
        self.bus.follow(cfg, notices)
    }

    /// Send the D-Bus signal for a level (`hidden` has none).
    pub fn dbus(&self, level: TrimLevel) {
        self.bus.signal(level);
    }

    /// Watch what these apps give back from now on.
    pub fn watch(&mut self, apps: &[App], pids: &[u32]) {
        let now = Instant::now();
        for a in apps.iter().filter(|a| pids.contains(&a.pid)) {
            self.watched.insert(a.pid, Watched { before: a.rss_bytes() + a.swap_bytes, at: now, best: 0 });
        }
    }

    /// What watched apps gave back since the last look (bytes newly freed), from the apps of a decision; watches end
    /// after [`TRIM_WATCH`] or with the app.
    pub fn freed_since(&mut self, apps: &[App]) -> u64 {
        let mut more = 0;
        self.watched.retain(|pid, w| {
            let Some(a) = apps.iter().find(|a| a.pid == *pid) else { return false };
            let freed = w.before.saturating_sub(a.rss_bytes() + a.swap_bytes);
            if freed > w.best {
                more += freed - w.best;
                w.best = freed;
            }
            w.at.elapsed() < TRIM_WATCH
        });
        more
    }

    /// Run the pre-kill hook for each victim and wait for them all, at most the configured bound from now; hooks still
    /// running then are killed (they are ours). The wait it took.
    pub fn pre_kill(&mut self, cfg: &Notify, victims: &[Victim], reason: &str) -> Duration {
        let t0 = Instant::now();
        if cfg.pre_kill.is_empty() {
            return Duration::ZERO;
        }
        let deadline = t0 + Duration::from_millis(cfg.pre_kill_wait_ms);
        let hooks: Vec<Child> = victims
            .iter()
            .filter_map(|v| {
                let env = [
                    ("MEMORCH_PID", v.pid.to_string()),
                    ("MEMORCH_APP", v.app.clone()),
                    ("MEMORCH_CLASS", v.class.name().to_string()),
                    ("MEMORCH_REASON", reason.to_string()),
                ];
                spawn(&cfg.pre_kill, &env)
                    .inspect_err(|e| tracing::warn!(error = %e, hook = %cfg.pre_kill, "pre-kill hook not started"))
                    .ok()
            })
            .collect();
        for mut h in hooks {
            let left = deadline.saturating_duration_since(Instant::now());
            let ended = memorch_linux::pidfd::Pidfd::open(h.id()).map_or(true, |p| p.wait_exit(left));
            if !ended {
                tracing::warn!(hook = %cfg.pre_kill, wait_ms = cfg.pre_kill_wait_ms, "pre-kill hook still running at its bound: killed, the kill goes ahead");
            }
            // Its whole process group, ended or not: what the shell left running in the background (`cmd &`) goes with
            // it. SAFETY: a signal to the group of a child we started in a group of its own.
            unsafe { libc::kill(-(h.id() as i32), libc::SIGKILL) };
            match h.wait() {
                Ok(st) if !st.success() && ended => {
                    tracing::warn!(hook = %cfg.pre_kill, status = %st, "pre-kill hook failed (127: its program was not found)")
                }
                _ => {}
            }
        }
        self.end_strays();
        t0.elapsed()
    }

    /// Kill what hooks left running in a session of their own (`setsid cmd &`): with the daemon their subreaper
    /// (`machine::adopt_orphans`), a hook's orphans become its children, and every child that is not a post-kill
    /// command still running is one.
    fn end_strays(&mut self) {
        self.post_kill.retain_mut(|c| c.try_wait().ok().flatten().is_none());
        let me = std::process::id();
        // Each round ends one generation: a stray's own children come to the daemon next.
        for _ in 0..8 {
            let known: Vec<u32> = self.post_kill.iter().map(Child::id).collect();
            let strays = memorch_linux::process::children_of(me);
            let strays: Vec<u32> = strays.into_iter().filter(|p| !known.contains(p)).collect();
            if strays.is_empty() {
                return;
            }
            for pid in strays {
                let fd = memorch_linux::pidfd::Pidfd::open(pid);
                // SAFETY: a process that is the daemon's own child, left by a hook.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                if let Ok(fd) = fd {
                    fd.wait_exit(Duration::from_secs(1));
                }
                // SAFETY: reaping our own child, without blocking.
                unsafe { libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG) };
                tracing::warn!(pid, "killed what a hook left running");
            }
        }
    }

    /// Run the post-kill command (not waited for).
    pub fn post_kill(&mut self, cfg: &Notify, gone: &memorch_protocol::VictimGone) {
        self.post_kill.retain_mut(|c| c.try_wait().ok().flatten().is_none());
        if cfg.post_kill.is_empty() {
            return;
        }
        let env = [
            ("MEMORCH_PID", gone.pid.to_string()),
            ("MEMORCH_APP", gone.app.clone()),
            ("MEMORCH_REASON", gone.reason.clone()),
            ("MEMORCH_REGAINED_BYTES", gone.regained_bytes.to_string()),
        ];
        match spawn(&cfg.post_kill, &env) {
            Ok(c) => self.post_kill.push(c),
            Err(e) => tracing::warn!(error = %e, hook = %cfg.post_kill, "post-kill command not started"),
        }
    }
}

/// `sh -c CMD` in a process group of its own (so a hook past its bound is killed whole).
fn spawn(cmd: &str, env: &[(&str, String)]) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new("/bin/sh");
    c.arg("-c").arg(cmd).stdin(Stdio::null()).stdout(Stdio::null()).process_group(0);
    // At the apps' priority, not the daemon's raised one. SAFETY: setpriority between fork and exec, on the child
    // itself.
    unsafe {
        c.pre_exec(|| {
            libc::setpriority(libc::PRIO_PROCESS, 0, 0);
            Ok(())
        });
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.spawn()
}
