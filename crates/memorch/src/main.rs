//! The `memorch` command: argument parsing and wiring only; the work is in the libraries.

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
    Status(cmd::status::Args),
    App(cmd::app::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Status(a) => cmd::status::run(a),
        Command::App(a) => cmd::app::run(a),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
