//! `memorch presets` and `memorch presets show NAME`.

use anyhow::Result;
use memorch_core::engine::preset::Preset;
use memorch_core::engine::spec::SWITCHES;

/// The presets: each paper's system as the same engine, so their claims can be re-run side
/// by side. `memorch` is the default.
///
/// Anywhere a preset is named (`memorch run --preset`, `memorch bench --managers`), a variant
/// may be given as PRESET:key=value,…: a step switched off or on (`memorch:home=off`), or a
/// parameter changed (`memorch:compaction.step_pages=64`). `presets show NAME` lists both.
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(subcommand)]
    show: Option<Show>,
}

#[derive(clap::Subcommand)]
enum Show {
    /// Every step switch and parameter of a preset (or of a variant, PRESET:key=value,…),
    /// its value and where it comes from.
    Show {
        name: String,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(a: Args) -> Result<()> {
    match a.show {
        None => {
            let all = Preset::all();
            let width = all.iter().map(|p| p.name.len()).max().unwrap_or(0);
            for (i, p) in all.iter().enumerate() {
                if i == memorch_core::engine::preset::NAMES.len() {
                    println!("\nthe papers' baselines, to re-run their comparisons:");
                }
                println!("{:<width$} {}", p.name, p.summary);
            }
            println!("\n'memorch presets show NAME' lists every parameter; docs/presets.md explains them.");
        }
        Some(Show::Show { name, json }) => {
            let p = Preset::from_spec(&name).map_err(|e| anyhow::anyhow!(e))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&p)?);
                return Ok(());
            }
            println!("# {}: {}", p.name, p.summary);
            println!("\n# Steps ({}:STEP=off leaves one out; '-' = this preset has no such step)", p.base_name());
            let key_width = SWITCHES.iter().map(|s| s.key.len()).max().unwrap_or(0);
            for s in &SWITCHES {
                let state = (s.get)(&p).map_or("-", |on| if on { "on" } else { "off" });
                println!("{:<key_width$} {state:<4} # {}", s.key, s.what);
            }
            println!("\n# Parameters ({}:KEY=VALUE changes one)", p.base_name());
            let rows = p.parameters();
            let width = rows.iter().map(|(k, v)| k.len() + v.len() + 3).max().unwrap_or(0).min(60);
            for (k, val) in rows {
                let line = format!("{k} = {val}");
                println!("{line:<width$}  # {}", p.source(&k));
            }
        }
    }
    Ok(())
}
