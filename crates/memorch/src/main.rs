//! The `memorch` command: argument parsing and wiring only; the work is in the libraries.

mod args;
mod cmd;
mod human;

use clap::{Parser, Subcommand};

/// memorch keeps more apps alive on less RAM: it compresses idle apps into zram, merges
/// duplicate pages with KSM, reclaims ahead of launches, and kills only when nothing else is
/// left, choosing the victim that costs the user least.
#[derive(Parser)]
#[command(name = "memorch", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Run(cmd::run::Args),
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
}

fn main() {
    // Rust ignores SIGPIPE, so `memorch status | head` would panic on the closed pipe; a
    // command-line tool should end quietly instead, as other tools do.
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => cmd::run::run(a),
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
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
