//! An app running in a device, as the driver plays the user with it: started with `memorch spawn`, waited for until
//! ready, brought to the front (resumed) and sent back. Its standard output comes as lines (probes read them); its
//! error output goes to a log file of the run, whose tail names what went wrong when a launch or a return fails.

use crate::results::{Visit, COLD, HOT, WARM};
use crate::scenario::{AppDef, Probe};
use memorch_core::Class;
use memorch_linux::{process, SysRoot};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longest an app may take to launch or answer before the run gives up on it.
pub const APP_TIMEOUT: Duration = Duration::from_secs(60);

/// How often waits look after the peer (its service restarts it after 100 ms).
pub const TICK: Duration = Duration::from_millis(100);

/// Lines of output kept for a failure message.
const RECENT_LINES: usize = 12;

pub struct Running {
    pub child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    recent: Arc<Mutex<VecDeque<String>>>,
    pub class: Class,
    /// Its error output.
    pub log: PathBuf,
    /// A synthetic app, which draws frames while in front and reports them when it leaves.
    draws_frames: bool,
}

impl Running {
    /// Start the app's command (see [`app_command`]); `spawn` puts it in the device.
    pub fn start(
        def: &AppDef,
        mut cmd: Command,
        log: &Path,
        spawn: impl FnOnce(Command) -> Result<Child, String>,
    ) -> Result<Running, String> {
        let err = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(err);
        let mut child = spawn(cmd)?;
        let stdin = child.stdin.take().expect("piped");
        let recent = Arc::new(Mutex::new(VecDeque::new()));
        let lines = line_channel(child.stdout.take().expect("piped"), recent.clone());
        Ok(Running {
            child,
            stdin,
            lines,
            recent,
            class: Class::Foreground,
            log: log.to_path_buf(),
            draws_frames: def.command.is_empty(),
        })
    }

    pub fn alive(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_none()
    }

    /// Whether it has exited by SIGKILL (a manager's or the kernel's kill, not a crash).
    pub fn was_killed(&mut self) -> bool {
        self.child.try_wait().ok().flatten().and_then(|st| std::os::unix::process::ExitStatusExt::signal(&st))
            == Some(libc::SIGKILL)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Ask it to exit (synthetic apps read `exit`).
    pub fn ask_exit(&mut self) {
        let _ = writeln!(self.stdin, "exit");
    }

    /// What it said last: the tail of its error output and of its output, and how it ended.
    pub fn tail(&mut self) -> String {
        let status = match self.child.try_wait() {
            Ok(Some(st)) => format!("it exited ({st})"),
            _ => "it is still running".to_string(),
        };
        let err = std::fs::read_to_string(&self.log).unwrap_or_default();
        let err: Vec<&str> = err.lines().rev().take(RECENT_LINES).collect::<Vec<_>>().into_iter().rev().collect();
        let out: Vec<String> = self.recent.lock().map(|r| r.iter().cloned().collect()).unwrap_or_default();
        let mut s = status;
        if !err.is_empty() {
            s.push_str(&format!("; its error output ends:\n    {}", err.join("\n    ")));
        }
        if !out.is_empty() {
            s.push_str(&format!("; its output ends:\n    {}", out.join("\n    ")));
        }
        if err.is_empty() && out.is_empty() {
            s.push_str("; it printed nothing");
        }
        s
    }

    /// The next line of its output, looking after the peer while waiting.
    fn next_line(&self, timeout: Duration, tick: &mut dyn FnMut()) -> Option<String> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.lines.recv_timeout(TICK.min(deadline.saturating_duration_since(Instant::now()))) {
                Ok(l) => return Some(l),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
                Err(_) if Instant::now() >= deadline => return None,
                Err(_) => tick(),
            }
        }
    }

    /// Wait until a just-started app is up: a synthetic app says `ready`; a real program passes its scenario's probe.
    /// `Err` says why not.
    pub fn wait_ready(&mut self, def: &AppDef, tick: &mut dyn FnMut()) -> Result<(), String> {
        let deadline = Instant::now() + APP_TIMEOUT;
        let left = || deadline.saturating_duration_since(Instant::now());
        let found = match def.ready.as_deref().and_then(Probe::parse) {
            None => matches!(self.next_line(APP_TIMEOUT, tick), Some(l) if l.starts_with("ready")),
            Some(Probe::Line(text)) => std::iter::from_fn(|| self.next_line(left(), tick)).any(|l| l.contains(&text)),
            Some(Probe::Shell(cmd)) => loop {
                if !self.alive() || Instant::now() >= deadline {
                    break false;
                }
                if shell(&cmd, self.pid(), 0).is_ok_and(|st| st.success()) {
                    break true;
                }
                // The probe's polling interval, as a launcher checks a starting app.
                std::thread::sleep(TICK);
                tick();
            },
        };
        if found && self.alive() {
            return Ok(());
        }
        let why = if self.alive() {
            format!("was not ready within {APP_TIMEOUT:?}")
        } else {
            "died while launching".to_string()
        };
        Err(format!("'{}' {why}: {}", def.name, self.tail()))
    }

    /// Bring it to the front: hot if nothing was read back, warm if pages were. `visit` is the visit's number (a real
    /// program's resume action may vary with it).
    pub fn resume(&mut self, def: &AppDef, visit: usize, tick: &mut dyn FnMut()) -> Visit {
        let t = Instant::now();
        let failed = |r: &mut Running, what: &str| {
            Visit::failed(&def.name, t.elapsed().as_secs_f64() * 1000.0, format!("'{}' {what}: {}", def.name, r.tail()))
        };
        if def.command.is_empty() {
            let _ = writeln!(self.stdin, "resume");
            // A `frames` line that came after its `back` gave up waiting (an app stalled over 10 s) is not the answer:
            // skip it, within the same deadline.
            let deadline = t + APP_TIMEOUT;
            let answer =
                std::iter::from_fn(|| self.next_line(deadline.saturating_duration_since(Instant::now()), tick))
                    .find(|l| !l.starts_with("frames"));
            return match answer {
                Some(l) if l.starts_with("resumed") => {
                    let faults = field(&l, "major_faults").unwrap_or(0);
                    Visit::new(
                        &def.name,
                        if faults > 0 { WARM } else { HOT },
                        field(&l, "us").unwrap_or(0) as f64 / 1000.0,
                    )
                }
                _ => failed(self, "did not answer its resume"),
            };
        }
        let root = SysRoot::live();
        let faults = |pid| process::read_stat(&root, pid).map_or(0, |s| s.major_faults);
        let f0 = faults(self.pid());
        let ok = match def.resume.as_deref().and_then(Probe::parse) {
            None => true,
            Some(Probe::Line(text)) => {
                let text = text.replace("{visit}", &visit.to_string());
                writeln!(self.stdin, "{text}").is_ok() && self.next_line(APP_TIMEOUT, tick).is_some()
            }
            Some(Probe::Shell(cmd)) => shell(&cmd, self.pid(), visit).is_ok_and(|st| st.success()),
        };
        if !ok || !self.alive() {
            return failed(self, "did not complete its resume");
        }
        let kind = if faults(self.pid()) > f0 { WARM } else { HOT };
        Visit::new(&def.name, kind, t.elapsed().as_secs_f64() * 1000.0)
    }

    /// It leaves the front: a synthetic app reports the frames it drew (a real program has nothing to say).
    pub fn end_frames(&mut self, v: &mut Visit, tick: &mut dyn FnMut()) {
        if !self.draws_frames || !self.alive() || writeln!(self.stdin, "back").is_err() {
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Some(l) = self.next_line(deadline.saturating_duration_since(Instant::now()), tick) {
            if l.starts_with("frames") {
                v.frames = field(&l, "n").unwrap_or(0) as u32;
                v.janky_frames = field(&l, "janky").unwrap_or(0) as u32;
                v.frame_p95_ms = field(&l, "p95_us").unwrap_or(0) as f64 / 1000.0;
                return;
            }
        }
    }
}

impl Drop for Running {
    /// Reap it: a zombie of ours would keep its namespace's init from ever exiting.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A cold launch measured: the visit, and the app if it came up.
pub fn cold_visit(
    def: &AppDef,
    started: Result<Running, String>,
    t: Instant,
    tick: &mut dyn FnMut(),
) -> (Visit, Option<Running>) {
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;
    match started {
        Err(e) => (Visit::failed(&def.name, ms(t), e), None),
        Ok(mut r) => match r.wait_ready(def, tick) {
            Ok(()) => (Visit::new(&def.name, COLD, ms(t)), Some(r)),
            Err(e) => (Visit::failed(&def.name, ms(t), e), None),
        },
    }
}

/// How an app is started, beyond its definition.
#[derive(Debug, Clone, Copy, Default)]
pub struct Start<'a> {
    /// A memory group of its own (the manager gives apps one).
    pub app_group: bool,
    /// KSM merging on (the scenario says apps opt in).
    pub ksm: bool,
    /// The managing daemon's socket, where an app with a cache listens for trim notices.
    pub trim_socket: Option<&'a Path>,
}

/// How an app starts: `memorch spawn` (its class, as the activity manager sets it) of the synthetic app or of the
/// scenario's real program (its command already expanded). `work`: where the synthetic app's code file and shared
/// object live.
pub fn app_command(exe: &Path, domain: &str, a: &AppDef, seed: u64, work: &Path, start: Start) -> Command {
    let mut c = Command::new(exe);
    c.args(["spawn", "--domain", domain, "--class", "foreground"]);
    if start.app_group {
        c.arg("--app-group");
    }
    if start.ksm {
        c.arg("--ksm");
    }
    c.arg("--");
    if !a.command.is_empty() {
        c.args(&a.command);
        return c;
    }
    c.arg(exe).arg("app");
    c.args([
        "--name",
        &a.name,
        "--anon-mb",
        &a.anon_mb.to_string(),
        "--content",
        &a.content,
        "--seed",
        &seed.to_string(),
    ]);
    c.args(["--init-ms", &a.init_ms.to_string(), "--working-set", &a.working_set.to_string(), "--front"]);
    for f in installed_files(a, work) {
        c.arg(f.flag).arg(f.path).args([f.mb_flag, &f.mb.to_string()]);
    }
    if a.background_ms > 0 {
        c.args(["--background-ms", &a.background_ms.to_string()]);
    }
    if a.cache_mb > 0 {
        c.args(["--cache-mb", &a.cache_mb.to_string()]);
        if let Some(s) = start.trim_socket {
            c.arg("--trim-socket").arg(s);
        }
    }
    c
}

/// A file a synthetic app maps: its code file (`--file`, read-only) or its shared object (`--so`, relocated), as the
/// app's flags name them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledFile {
    pub flag: &'static str,
    pub mb_flag: &'static str,
    pub path: PathBuf,
    pub mb: u64,
}

/// The files a synthetic app maps, in `work` (none for a real program): what the bench installs before its first run
/// and the app's command names.
pub fn installed_files(a: &AppDef, work: &Path) -> Vec<InstalledFile> {
    if !a.command.is_empty() {
        return Vec::new();
    }
    let mut files = Vec::new();
    if a.file_mb > 0 {
        files.push(InstalledFile {
            flag: "--file",
            mb_flag: "--file-mb",
            path: work.join(format!("{}.bin", a.name)),
            mb: a.file_mb,
        });
    }
    if a.so_mb > 0 {
        files.push(InstalledFile {
            flag: "--so",
            mb_flag: "--so-mb",
            path: work.join(format!("lib{}.so", a.name)),
            mb: a.so_mb,
        });
    }
    files
}

/// Run a `cmd:` probe: `$MEMORCH_APP_PID` is the app's pid, `$MEMORCH_VISIT` the visit's number.
fn shell(cmd: &str, pid: u32, visit: usize) -> std::io::Result<std::process::ExitStatus> {
    Command::new("sh")
        .args(["-c", cmd])
        .env("MEMORCH_APP_PID", pid.to_string())
        .env("MEMORCH_VISIT", visit.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
}

/// Lines of a child's output, on a channel (so waits can time out), the last few kept.
fn line_channel(out: std::process::ChildStdout, recent: Arc<Mutex<VecDeque<String>>>) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if let Ok(mut r) = recent.lock() {
                if r.len() == RECENT_LINES {
                    r.pop_front();
                }
                r.push_back(l.clone());
            }
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

/// `key=N` in a line of words.
pub fn field(line: &str, key: &str) -> Option<u64> {
    line.split_whitespace().find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}
