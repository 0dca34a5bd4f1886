//! `memorchd`: the daemon alone, the same command as `memorch run` (which execs it when it
//! is installed beside `memorch`). Its binary holds the daemon's code only, so the code it
//! keeps resident and locked is less (memorch_daemon::cli says why).

use clap::{Args, FromArgMatches};
use memorch_daemon::cli;

fn main() {
    // The options, help and errors of `memorch run`, under its name.
    let command = cli::Args::augment_args(
        clap::Command::new(cli::DAEMON_BINARY).bin_name("memorch run").version(env!("CARGO_PKG_VERSION")),
    );
    let args = cli::Args::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    if let Err(e) = cli::run(args) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
