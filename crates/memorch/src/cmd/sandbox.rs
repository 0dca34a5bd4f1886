//! `memorch sandbox`: virtual devices by hand (docs/design.md, "The bench").

use crate::human::bytes;
use anyhow::{Context, Result};
use memorch_bench::device::{Device, DeviceRecord};
use memorch_linux::events::SignalFd;
use memorch_linux::lxcfs::Lxcfs;
use memorch_linux::{cgroup, snapshot, Domain, DomainSpec, SysRoot};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Virtual devices: a memory limit (the device's RAM), a v2 group at the same path for its
/// own pressure, zram as its swap, and a balloon that takes zram's pool out of the limit.
/// A keeper process holds each device until `destroy`.
///
/// Examples:
///   memorch sandbox create phone --ram 1024 --zram 512
///   memorch sandbox exec phone -- memorch app --anon-mb 100
///   memorch run --domain cgroup:$(memorch sandbox list --path phone)
///   memorch sandbox destroy phone
#[derive(clap::Subcommand)]
#[command(verbatim_doc_comment)]
pub enum Cmd {
    /// Make a device.
    Create {
        /// The device's name (letters, digits, - and _).
        name: String,
        /// RAM in MiB.
        #[arg(long, value_parser = clap::value_parser!(u64).range(64..))]
        ram: u64,
        /// zram swap in MiB (0 = none).
        #[arg(long, default_value_t = 0)]
        zram: u64,
        /// The zram compression algorithm.
        #[arg(long, default_value = "lz4")]
        algorithm: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run a command inside a device: in its cgroups and its PID and mount namespace, where /proc shows only the
    /// device's processes and (with lxcfs) its memory. Waits for the command and exits with its status.
    Exec {
        /// The device.
        name: String,
        /// The command and its arguments.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// The devices, their memory and processes.
    List {
        /// Print only this device's cgroup path (for --domain cgroup:PATH).
        #[arg(long, value_name = "NAME")]
        path: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Kill everything inside a device and remove it, its zram and its groups.
    Destroy {
        /// The device.
        name: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// (internal) hold a device until SIGTERM.
    #[command(hide = true)]
    Keep { name: String, ram: u64, zram: u64, algorithm: String },
    /// (internal) PID 1 of a device's namespace.
    #[command(hide = true)]
    NsInit {
        #[arg(long)]
        lxcfs_proc: Option<std::path::PathBuf>,
        #[arg(long)]
        pressure: Option<std::path::PathBuf>,
    },
}

fn valid_name(name: &str) -> Result<()> {
    anyhow::ensure!(
        !name.is_empty()
            && name.len() <= 40
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "sandbox name '{name}': use 1 to 40 letters, digits, '-' or '_'"
    );
    Ok(())
}

pub fn run(c: Cmd) -> Result<()> {
    match c {
        Cmd::Create { name, ram, zram, algorithm, json } => create(&name, ram, zram, &algorithm, json),
        Cmd::Keep { name, ram, zram, algorithm } => keep(&name, ram, zram, &algorithm),
        Cmd::Exec { name, command } => exec(&name, &command),
        Cmd::NsInit { lxcfs_proc, pressure } => {
            match memorch_linux::namespace::init_main(&memorch_linux::namespace::View { lxcfs_proc, pressure })? {}
        }
        Cmd::List { path: Some(name), json } => {
            let rec = DeviceRecord::load(&name).map_err(|e| anyhow::anyhow!(e))?;
            let mut said = super::Said::new(json);
            said.say(&rec.path, serde_json::json!({"name": name, "path": rec.path}));
            said.done()
        }
        Cmd::List { path: None, json } => list(json),
        Cmd::Destroy { name, json } => {
            destroy(&name)?;
            let mut said = super::Said::new(json);
            said.say(format!("sandbox {name} destroyed"), serde_json::json!({"destroyed": name}));
            said.done()
        }
    }
}

fn create(name: &str, ram: u64, zram: u64, algorithm: &str, json: bool) -> Result<()> {
    valid_name(name)?;
    anyhow::ensure!(DeviceRecord::load(name).is_err(), "sandbox '{name}' exists: destroy it first");
    anyhow::ensure!(zram <= 4 * ram, "--zram {zram}: at most 4 × --ram");
    std::fs::create_dir_all(memorch_bench::device::RECORD_DIR)?;
    let log = std::path::Path::new(memorch_bench::device::RECORD_DIR).join(format!("{name}.log"));
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(["sandbox", "keep", name, &ram.to_string(), &zram.to_string(), algorithm]);
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(std::fs::File::create(&log)?);
    // SAFETY: setsid in the child, so the keeper outlives this command and its terminal.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut keeper = cmd.spawn().context("starting the sandbox keeper")?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(rec) = DeviceRecord::load(name) {
            if json {
                return super::print_json(&rec);
            }
            println!(
                "sandbox {name}: {} RAM{}, cgroup {} (use --domain cgroup:{})",
                bytes(rec.ram_bytes),
                rec.zram_device.as_ref().map_or(String::new(), |d| format!(", zram {d}")),
                rec.path,
                rec.path
            );
            if !rec.meminfo_virtual {
                println!("  note: /proc/meminfo inside shows the machine's memory (lxcfs is not installed: apt-get install lxcfs)");
            }
            return Ok(());
        }
        if let Some(st) = keeper.try_wait()? {
            anyhow::bail!(
                "sandbox '{name}' could not be made ({st}): {}",
                std::fs::read_to_string(&log).unwrap_or_default().trim()
            );
        }
        anyhow::ensure!(Instant::now() < deadline, "sandbox '{name}': the keeper did not report within 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The keeper: hold a device until SIGTERM.
fn keep(name: &str, ram: u64, zram: u64, algorithm: &str) -> Result<()> {
    let signals = SignalFd::new(&[libc::SIGTERM, libc::SIGINT, libc::SIGHUP]).map_err(|e| anyhow::anyhow!(e))?;
    let mut device = Device::create(name, ram << 20, zram << 20, algorithm).map_err(|e| anyhow::anyhow!(e))?;
    // Without lxcfs the namespace still hides the machine's processes; only meminfo stays the machine's.
    let lxcfs = match Lxcfs::start() {
        Ok(l) => Some(l),
        Err(e) => {
            eprintln!("sandbox {name}: /proc/meminfo inside shows the machine's memory: {e}");
            None
        }
    };
    device.enter_namespace(&std::env::current_exe()?, lxcfs.as_ref()).map_err(|e| anyhow::anyhow!(e))?;
    let rec = DeviceRecord {
        name: name.to_string(),
        path: device.sandbox.path.clone(),
        ram_bytes: ram << 20,
        zram_device: device.zram.as_ref().map(|z| z.setup.device.clone()),
        keeper_pid: std::process::id(),
        ns_init_pid: device.ns_init_pid(),
        meminfo_virtual: lxcfs.is_some(),
    };
    memorch_linux::state::write_json_atomic(&DeviceRecord::file(name), &rec)?;
    let mut pfd = libc::pollfd { fd: signals.fd(), events: libc::POLLIN, revents: 0 };
    loop {
        // SAFETY: polling our signalfd.
        if unsafe { libc::poll(&mut pfd, 1, -1) } > 0 {
            if let Some(s) = signals.read() {
                if s != libc::SIGHUP {
                    break;
                }
            }
        }
    }
    let _ = std::fs::remove_file(DeviceRecord::file(name));
    drop(device);
    drop(lxcfs);
    // The log only matters when creation fails; a clean end leaves nothing.
    let _ = std::fs::remove_file(std::path::Path::new(memorch_bench::device::RECORD_DIR).join(format!("{name}.log")));
    Ok(())
}

/// Run a command inside a device; its exit status is ours. A relative program path is made absolute here, from the
/// caller's working directory (which the command keeps inside too).
fn exec(name: &str, command: &[String]) -> Result<()> {
    let rec = DeviceRecord::load(name).map_err(|e| anyhow::anyhow!(e))?;
    let root = SysRoot::live();
    let dirs = cgroup::locate(&root, &rec.path)?;
    cgroup::join_self(&dirs).with_context(|| format!("joining sandbox {name}"))?;
    let (program, args) = command.split_first().expect("clap requires a command");
    let program = if program.contains('/') {
        std::path::absolute(program)?.to_string_lossy().into_owned()
    } else {
        program.clone()
    };
    let mut cmd = Command::new(&program);
    cmd.args(args);
    let Some(init) = rec.ns_init_pid else {
        let err = cmd.exec();
        anyhow::bail!("cannot run '{program}': {err}");
    };
    let status = memorch_linux::namespace::spawn_inside(init, cmd)
        .with_context(|| format!("entering sandbox {name}'s namespace"))?
        .wait()?;
    std::process::exit(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)));
}

fn list(json: bool) -> Result<()> {
    let root = SysRoot::live();
    let all = DeviceRecord::all();
    let mut said = super::Said::new(json);
    if all.is_empty() && !json {
        println!("no sandboxes (memorch sandbox create NAME --ram MB)");
    }
    for r in all {
        let domain = Domain::open(&root, &DomainSpec::Cgroup(r.path.clone()));
        let (used, procs) = match &domain {
            Ok(d) => (
                snapshot::cheap(&root, d).map(|s| s.memory.used_bytes).unwrap_or(0),
                d.pids(&root).map(|p| p.len()).unwrap_or(0),
            ),
            Err(_) => (0, 0),
        };
        let text = format!(
            "{:<16} RAM {:>10}  used {:>10}  {:>3} processes  zram {:<6}  keeper {}  {}",
            r.name,
            bytes(r.ram_bytes),
            bytes(used),
            procs,
            r.zram_device.as_deref().unwrap_or("-"),
            r.keeper_pid,
            r.path
        );
        said.say(text, serde_json::json!({"device": r, "used_bytes": used, "processes": procs}));
    }
    said.done()
}

fn destroy(name: &str) -> Result<()> {
    let rec = DeviceRecord::load(name).map_err(|e| anyhow::anyhow!(e))?;
    // Only the keeper this record names, and only while it is that keeper.
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", rec.keeper_pid)).unwrap_or_default();
    let is_keeper = String::from_utf8_lossy(&cmdline)
        .split('\0')
        .collect::<Vec<_>>()
        .windows(3)
        .any(|w| w == ["sandbox", "keep", name]);
    if !is_keeper {
        let _ = std::fs::remove_file(DeviceRecord::file(name));
        anyhow::bail!(
            "sandbox '{name}': its keeper (pid {}) is gone; record removed. Left-overs, if any: cgroup {}",
            rec.keeper_pid,
            rec.path
        );
    }
    let pidfd = memorch_linux::pidfd::Pidfd::open(rec.keeper_pid)?;
    pidfd.send_signal(libc::SIGTERM)?;
    anyhow::ensure!(pidfd.wait_exit(Duration::from_secs(30)), "sandbox '{name}': the keeper did not stop within 30 s");
    Ok(())
}
