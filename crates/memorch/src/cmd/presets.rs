//! `memorch presets` and `memorch presets show NAME`.

use anyhow::Result;
use memorch_core::engine::preset::{Preset, NAMES};
use serde_json::Value;

/// The presets: each paper's system as the same engine, so their claims can be re-run side
/// by side. `memorch` is the default.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    show: Option<Show>,
}

#[derive(clap::Subcommand)]
enum Show {
    /// Every parameter of a preset, its value and where it comes from.
    Show {
        name: String,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(a: Args) -> Result<()> {
    match a.show {
        None => {
            for p in Preset::all() {
                println!("{:<12} {}", p.name, p.summary);
            }
            println!("\n'memorch presets show NAME' lists every parameter; docs/presets.md explains them.");
        }
        Some(Show::Show { name, json }) => {
            let p = Preset::by_name(&name).ok_or_else(|| anyhow::anyhow!("no preset '{name}': choose one of {}", NAMES.join(", ")))?;
            let v = serde_json::to_value(&p)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&v)?);
                return Ok(());
            }
            println!("# {}: {}", p.name, p.summary);
            let mut rows = Vec::new();
            flatten("", &v, &mut rows);
            let width = rows.iter().map(|(k, v)| k.len() + v.len() + 3).max().unwrap_or(0).min(60);
            for (k, val) in rows.into_iter().filter(|(k, _)| k != "name" && k != "summary") {
                let line = format!("{k} = {val}");
                println!("{line:<width$}  # {}", p.source(&k));
            }
        }
    }
    Ok(())
}

/// `{"a":{"b":1}}` → `a.b = 1`.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, x, out);
            }
        }
        other => out.push((prefix.to_string(), other.to_string())),
    }
}
