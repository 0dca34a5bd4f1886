//! `memorch presets` and `memorch presets show NAME`.

use anyhow::Result;
use memorch_core::engine::preset::{Preset, NAMES};
use memorch_core::engine::spec::SWITCHES;

/// The presets: each paper's system as the same engine, so their claims can be re-run side
/// by side. `memorch` is the default. Each is a TOML file (presets/ in the source, embedded
/// in the binary); `presets show NAME` prints it, each key with what it does and its source.
///
/// Anywhere a preset is named (`memorch run --preset`, `memorch bench --managers`), give
///   NAME                  a shipped preset
///   NAME:key=value,…      a variant: a step switched off or on (`memorch:ahead=off`), or a
///                         key changed (`memorch:swap.zram_pct=25`)
///   file:PATH             your own file, in the shipped files' form (start from
///                         `memorch presets show memorch > mine.toml`)
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// List them as JSON: each preset's name, summary and whether it is a paper's baseline.
    #[arg(long)]
    json: bool,
    #[command(subcommand)]
    show: Option<Show>,
}

#[derive(clap::Subcommand)]
enum Show {
    /// Print a preset's file (NAME, a variant NAME:key=value,…, or file:PATH), with the step switches a variant may
    /// name.
    Show {
        /// The preset, variant or file:PATH.
        name: String,
        /// The preset as the engine reads it, every key with its value, as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(a: Args) -> Result<()> {
    match a.show {
        None if a.json => {
            let all = Preset::all();
            let rows: Vec<_> = all
                .iter()
                .enumerate()
                .map(|(i, p)| serde_json::json!({"name": p.name, "summary": p.summary, "baseline": i >= NAMES.len()}))
                .collect();
            super::print_json(&rows)?;
        }
        None => list(),
        Some(Show::Show { name, json }) => {
            let p = memorch_daemon::preset_file::load(&name).map_err(|e| anyhow::anyhow!(e))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&p)?);
                return Ok(());
            }
            print!("{}", memorch_daemon::preset_file::text(&name).map_err(|e| anyhow::anyhow!(e))?);
            println!("\n# Steps a variant may switch ({}:STEP=off; '-': this preset has no such step):", p.base_name());
            for s in &SWITCHES {
                let state = (s.get)(&p).map_or("-", |on| if on { "on" } else { "off" });
                println!("#   {:<12} {state:<4} {}", s.key, s.what);
            }
        }
    }
    Ok(())
}

fn list() {
    let all = Preset::all();
    let width = all.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for (i, p) in all.iter().enumerate() {
        if i == NAMES.len() {
            println!("\nthe papers' baselines, to re-run their comparisons:");
        }
        println!("{:<width$} {}", p.name, p.summary);
    }
    println!("\n'memorch presets show NAME' prints a preset's file; docs/presets.md explains the keys.");
}
