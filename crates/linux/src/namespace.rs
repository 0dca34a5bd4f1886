//! The PID and mount namespace of a virtual device (docs/design.md, "The bench"). Inside it, `/proc` lists only the
//! device's processes and `/proc/meminfo`, `/proc/swaps` and `/proc/pressure/memory` describe the device, so an
//! unmodified peer (earlyoom, nohang) run inside sees, and can kill, nothing else.
//!
//! How: a spawner thread unshares its PID namespace for children, so every process it forks lands in one new namespace;
//! the first is the namespace's init (PID 1: `memorch sandbox ns-init`, which calls [`init_main`]), which also makes a
//! mount namespace of its own and mounts the views there. Later processes are forked by the same thread and join that
//! mount namespace between fork and exec. They stay children of the caller, so `Child` and pidfds work as for any
//! process. When init dies, the kernel kills everything in the namespace: a device can never leak a process, even if
//! memorch is SIGKILLed (init has PDEATHSIG).

use crate::error::{Error, Result};
use std::ffi::CString;
use std::io::{BufRead, BufReader};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

/// What the device's `/proc` shows in place of the machine's.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// A `proc` directory of lxcfs: its `meminfo` and `swaps` are bound over `/proc`'s.
    pub lxcfs_proc: Option<PathBuf>,
    /// The device's v2 `memory.pressure`, bound over `/proc/pressure/memory`.
    pub pressure: Option<PathBuf>,
}

/// The files of lxcfs's `proc` that describe memory.
const LXCFS_FILES: [&str; 2] = ["meminfo", "swaps"];

type Job = (Command, Sender<std::io::Result<Child>>);

pub struct DeviceNamespace {
    init: Child,
    mnt: OwnedFd,
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl DeviceNamespace {
    /// Start the namespace with `init` as its PID 1. `init` must run [`init_main`] (it is `memorch sandbox ns-init …`),
    /// and may have been prepared to join a cgroup first: lxcfs describes the memory cgroup of the namespace's init.
    pub fn create(mut init: Command) -> Result<DeviceNamespace> {
        let (tx, rx) = channel::<Job>();
        let (ready_tx, ready_rx) = channel::<std::io::Result<()>>();
        let thread = std::thread::Builder::new()
            .name("device-ns".into())
            .spawn(move || {
                // SAFETY: unshare only changes this thread's namespace for its children; this thread never creates
                // threads (the kernel refuses that after it).
                if unsafe { libc::unshare(libc::CLONE_NEWPID) } != 0 {
                    let _ = ready_tx.send(Err(std::io::Error::last_os_error()));
                    return;
                }
                let _ = ready_tx.send(Ok(()));
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .map_err(|e| other("start the device namespace's thread", e))?;
        ready_rx
            .recv()
            .map_err(|e| other("start the device namespace's thread", e))?
            .map_err(|e| other("unshare a PID namespace (needs CAP_SYS_ADMIN)", e))?;
        // SAFETY: prctl and unshare between fork and exec.
        unsafe {
            init.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::unshare(libc::CLONE_NEWNS) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        init.stdin(Stdio::null()).stdout(Stdio::piped());
        let mut init = spawn_on(&tx, init)?;
        let mnt = match wait_ready(&mut init) {
            Ok(m) => m,
            Err(e) => {
                let _ = init.kill();
                let _ = init.wait();
                return Err(e);
            }
        };
        Ok(DeviceNamespace { init, mnt, jobs: Some(tx), thread: Some(thread) })
    }

    /// The init's pid, as this process sees it.
    pub fn init_pid(&self) -> u32 {
        self.init.id()
    }

    /// Start `cmd` inside the namespace (PID and mount). Prepare it for a cgroup first if it should be charged to the
    /// device.
    pub fn spawn(&self, mut cmd: Command) -> Result<Child> {
        join_mounts_on_exec(&mut cmd, &self.mnt);
        spawn_on(self.jobs.as_ref().expect("until drop"), cmd)
    }
}

/// Start `cmd` inside the namespace whose init is `init_pid` (a device another process holds, as `memorch sandbox exec`
/// does). This thread's later children all land in that namespace, and the kernel then refuses it new threads: call it
/// from a process's last step.
pub fn spawn_inside(init_pid: u32, mut cmd: Command) -> Result<Child> {
    let cmdline = std::fs::read(format!("/proc/{init_pid}/cmdline")).unwrap_or_default();
    if !String::from_utf8_lossy(&cmdline).split('\0').any(|a| a == "ns-init") {
        return Err(Error::Refused(format!("pid {init_pid} is not a device namespace's init (the device is gone?)")));
    }
    let open = |kind: &str| -> Result<OwnedFd> {
        let p = PathBuf::from(format!("/proc/{init_pid}/ns/{kind}"));
        Ok(std::fs::File::open(&p).map_err(|e| Error::io(&p, e))?.into())
    };
    let (pid_ns, mnt) = (open("pid")?, open("mnt")?);
    // SAFETY: setns on this thread: its children are born in the namespace.
    if unsafe { libc::setns(pid_ns.as_raw_fd(), libc::CLONE_NEWPID) } != 0 {
        return Err(other("enter the device's PID namespace", std::io::Error::last_os_error()));
    }
    join_mounts_on_exec(&mut cmd, &mnt);
    let child = cmd.spawn().map_err(|e| other(&format!("start {:?} in the device namespace", cmd.get_program()), e))?;
    drop(mnt);
    Ok(child)
}

/// Make `cmd` join the mount namespace `mnt` between fork and exec (`mnt` must stay open until it is spawned), in the
/// working directory it was given (or the caller's).
///
/// Joining a mount namespace moves the process to its root, and std changes directory *before* the pre-exec hooks run:
/// without changing back here, every relative path a device's process was given would name the wrong file.
fn join_mounts_on_exec(cmd: &mut Command, mnt: &OwnedFd) {
    let fd = mnt.as_raw_fd();
    let cwd = cmd.get_current_dir().map(Path::to_path_buf).or_else(|| std::env::current_dir().ok());
    let cwd = cwd.and_then(|d| CString::new(d.into_os_string().into_encoded_bytes()).ok());
    // SAFETY: setns and chdir between fork and exec, on an fd open until then and a path allocated before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setns(fd, libc::CLONE_NEWNS) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(dir) = &cwd {
                if libc::chdir(dir.as_ptr()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

fn spawn_on(jobs: &Sender<Job>, cmd: Command) -> Result<Child> {
    let what = format!("start {:?} in the device namespace", cmd.get_program());
    let (tx, rx) = channel();
    jobs.send((cmd, tx)).map_err(|e| other(&what, e))?;
    rx.recv().map_err(|e| other(&what, e))?.map_err(|e| other(&what, e))
}

/// Wait for init's "ready" (its mounts are in place), then open its mount namespace.
fn wait_ready(init: &mut Child) -> Result<OwnedFd> {
    let mut line = String::new();
    let out = init.stdout.take().expect("piped");
    let _ = BufReader::new(out).read_line(&mut line);
    if line.trim() != "ready" {
        return Err(Error::Other {
            what: "start the device namespace's init".into(),
            detail: format!("it said {:?} instead of \"ready\" (its error output says why)", line.trim()),
        });
    }
    let path = PathBuf::from(format!("/proc/{}/ns/mnt", init.id()));
    Ok(std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?.into())
}

fn other(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Other { what: what.into(), detail: e.to_string() }
}

impl Drop for DeviceNamespace {
    fn drop(&mut self) {
        // Killing init makes the kernel kill every process of the namespace. Init exits only once they are all reaped,
        // and those that are the caller's children are its to reap: wait a bounded time, not forever, should one still
        // be unreaped.
        let _ = self.init.kill();
        if !crate::wait::wait_for(std::time::Duration::from_secs(10), || self.init.try_wait().ok().flatten().is_some())
        {
            eprintln!(
                "memorch: the device namespace's init (pid {}) waits for processes not yet reaped",
                self.init.id()
            );
        }
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// PID 1 of a device namespace: mount the device's views in a private mount namespace, say "ready" on stdout, then reap
/// orphans until killed. Signals from inside the namespace cannot kill it (the kernel protects an init without
/// handlers), so a peer's kill spree cannot end the device.
pub fn init_main(view: &View) -> Result<std::convert::Infallible> {
    if std::process::id() != 1 {
        return Err(Error::Refused(
            "ns-init runs only as PID 1 of a new namespace (memorch bench and sandbox start it)".into(),
        ));
    }
    mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE)?;
    mount(Some("proc"), "/proc", Some("proc"), libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC)?;
    if let Some(dir) = &view.lxcfs_proc {
        for f in LXCFS_FILES {
            bind(&dir.join(f), &Path::new("/proc").join(f))?;
        }
    }
    if let Some(p) = &view.pressure {
        bind(p, Path::new("/proc/pressure/memory"))?;
    }
    // SAFETY: setting a signal disposition; SIG_IGN for SIGCHLD makes the kernel reap orphans that end up here.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
    println!("ready");
    loop {
        // SAFETY: pause only waits for a signal.
        unsafe { libc::pause() };
    }
}

fn bind(from: &Path, to: &Path) -> Result<()> {
    mount(Some(from.to_str().unwrap_or_default()), to.to_str().unwrap_or_default(), None, libc::MS_BIND)
}

fn mount(source: Option<&str>, target: &str, fstype: Option<&str>, flags: libc::c_ulong) -> Result<()> {
    let c = |s: &str| CString::new(s).expect("no NUL in mount arguments");
    let (src, tgt, fs) = (source.map(c), c(target), fstype.map(c));
    let ptr = |o: &Option<CString>| o.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: valid C strings or null, as mount(2) takes them.
    if unsafe { libc::mount(ptr(&src), tgt.as_ptr(), ptr(&fs), flags, std::ptr::null()) } != 0 {
        return Err(Error::Other {
            what: format!("mount {} on {target}", source.unwrap_or("(none)")),
            detail: std::io::Error::last_os_error().to_string(),
        });
    }
    Ok(())
}
