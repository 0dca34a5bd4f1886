//! `memorchd`: the daemon alone, the same command as `memorch run` (which execs it when it is installed beside
//! `memorch`). Its binary holds the daemon's code only, so the code it keeps resident and locked is less
//! (memorch_daemon::cli says why).

use clap::FromArgMatches;
use memorch_daemon::cli;

fn main() {
    let args = cli::Args::from_arg_matches(&cli::daemon_command().get_matches()).unwrap_or_else(|e| e.exit());
    if let Err(e) = cli::run(args) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
