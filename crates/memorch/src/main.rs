//! The `memorch` command: argument parsing and wiring only; the work is in the libraries.

mod args;
mod cmd;
mod human;

use clap::{Parser, Subcommand};

/// memorch keeps more apps alive on less RAM: it compresses idle apps into zram, merges duplicate pages with KSM,
/// reclaims ahead of launches, and kills only when nothing else is left, choosing the victim that costs the user least.
#[derive(Parser)]
#[command(name = "memorch", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Run(memorch_daemon::cli::Args),
    Ctl(cmd::ctl::Args),
    Status(cmd::status::Args),
    /// Set up, show and tear down zram swap.
    #[command(subcommand)]
    Zram(cmd::zram::Command),
    /// Add, list and remove storage swap files.
    #[command(subcommand)]
    Swapfile(cmd::swapfile::Command),
    Compact(cmd::compact::Args),
    Readback(cmd::readback::Args),
    /// KSM status and tuning.
    #[command(subcommand)]
    Ksm(cmd::ksm::Command),
    Spawn(cmd::spawn::Args),
    Kill(cmd::kill::Args),
    Reclaim(cmd::reclaim::Args),
    /// Freeze a cgroup (v2 cgroup.freeze): its processes stop, their memory stays.
    Freeze(cmd::freeze::Args),
    /// Thaw a frozen cgroup.
    Thaw(cmd::freeze::Args),
    /// Virtual devices: create, exec, list, destroy.
    #[command(subcommand)]
    Sandbox(cmd::sandbox::Cmd),
    Bench(cmd::bench::Args),
    Report(cmd::report::Args),
    Presets(cmd::presets::Args),
    Config(cmd::config::Args),
    App(cmd::app::Args),
    Manual(cmd::manual::ManualArgs),
    Completions(cmd::manual::CompletionArgs),
}

fn main() {
    // Rust ignores SIGPIPE, so `memorch status | head` would panic on the closed pipe; a command-line tool should end
    // quietly instead, as other tools do. SAFETY: setting a signal disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    exec_daemon_binary();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => memorch_daemon::cli::run(a),
        Command::Ctl(a) => cmd::ctl::run(a),
        Command::Status(a) => cmd::status::run(a),
        Command::Zram(c) => cmd::zram::run(c),
        Command::Swapfile(c) => cmd::swapfile::run(c),
        Command::Compact(a) => cmd::compact::run(a),
        Command::Readback(a) => cmd::readback::run(a),
        Command::Ksm(c) => cmd::ksm::run(c),
        Command::Spawn(a) => cmd::spawn::run(a),
        Command::Kill(a) => cmd::kill::run(a),
        Command::Reclaim(a) => cmd::reclaim::run(a),
        Command::Freeze(a) => cmd::freeze::run(a, true),
        Command::Thaw(a) => cmd::freeze::run(a, false),
        Command::Sandbox(c) => cmd::sandbox::run(c),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Presets(a) => cmd::presets::run(a),
        Command::Config(a) => cmd::config::run(a),
        Command::App(a) => cmd::app::run(a),
        Command::Manual(a) => cmd::manual::manual(a, <Cli as clap::CommandFactory>::command()),
        Command::Completions(a) => cmd::manual::completions(a, <Cli as clap::CommandFactory>::command()),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// `memorch run` becomes `memorchd` (the same command, the daemon's code alone) when that is installed beside this
/// binary: the daemon keeps resident, and locks, the code it runs, and the kernel maps code in whole folios, so the
/// daemon's own binary keeps less of it (memorch_daemon::cli). Exec keeps the pid, so whoever started `memorch run`
/// still has the daemon. Where it is missing, or cannot be started, the daemon runs in this process.
fn exec_daemon_binary() {
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(std::ffi::OsStr::new("run")) {
        return;
    }
    let Some(daemon) = std::env::current_exe()
        .ok()
        .map(|exe| exe.with_file_name(memorch_daemon::cli::DAEMON_BINARY))
        .filter(|d| d.is_file())
    else {
        return;
    };
    let err = std::process::Command::new(&daemon).args(args).exec();
    eprintln!("memorch: could not start {} ({err}); running the daemon in this process", daemon.display());
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    fn missing(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            if a.get_help().is_none() && a.get_long_help().is_none() {
                out.push(format!("{path} {}", a.get_id()));
            }
        }
        if cmd.get_about().is_none() && cmd.get_long_about().is_none() {
            out.push(format!("{path} (the command itself)"));
        }
        for s in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
            missing(s, &format!("{path} {}", s.get_name()), out);
        }
    }

    /// Leaves that print for people without `--json` (or an ancestor's).
    fn without_json(cmd: &clap::Command, path: &str, inherited: bool, out: &mut Vec<String>) {
        let has = inherited || cmd.get_arguments().any(|a| a.get_id() == "json");
        let subs: Vec<_> = cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help").collect();
        if subs.is_empty() && !has {
            out.push(path.to_string());
        }
        for s in subs {
            without_json(s, &format!("{path} {}", s.get_name()), has, out);
        }
    }

    #[test]
    fn every_command_that_prints_for_people_has_json() {
        // The daemon logs (--log-format json); spawn and sandbox exec become the command; app is the synthetic app;
        // manual writes files; completions print a shell script.
        let exempt = ["run", "spawn", "sandbox exec", "app", "manual", "completions"];
        let mut out = Vec::new();
        without_json(&Cli::command(), "", false, &mut out);
        out.retain(|c| !exempt.contains(&c.trim()));
        assert!(out.is_empty(), "without --json:\n{}", out.join("\n"));
    }

    #[test]
    fn every_command_and_option_has_a_help_line() {
        let mut cmd = Cli::command();
        cmd.build();
        let mut out = Vec::new();
        missing(&cmd, "memorch", &mut out);
        assert!(out.is_empty(), "without a help line:\n{}", out.join("\n"));
    }
}
