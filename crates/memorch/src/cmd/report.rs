//! `memorch report RESULTS.json`: the table and report.html again, from a bench's results.

use anyhow::{Context, Result};
use memorch_bench::report;
use memorch_bench::results::RunResult;
use std::path::PathBuf;

/// Summarise a bench's results.json again: print the table and write report.html beside it
/// (or to --html), e.g. after a newer memorch changed how reports look, or to compare runs
/// of several benches put in one file.
///
/// Examples:
///   memorch report bench-out/quick-1795394529/results.json
///   memorch report results.json --html /tmp/report.html
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A results.json written by `memorch bench`.
    results: PathBuf,
    /// Where report.html goes (default: beside the results).
    #[arg(long)]
    html: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<()> {
    let text = std::fs::read_to_string(&a.results).with_context(|| format!("reading {}", a.results.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", a.results.display()))?;
    let runs: Vec<RunResult> = serde_json::from_value(v["runs"].clone())
        .with_context(|| format!("{}: its runs are not a memorch bench's", a.results.display()))?;
    anyhow::ensure!(!runs.is_empty(), "{}: no runs in it", a.results.display());
    let sums = report::summarize(&runs);
    let name = v["scenario"].as_str().unwrap_or("?");
    let html =
        memorch_bench::html::report(name, v["description"].as_str().unwrap_or(""), &sums, &runs, v["stopped"].as_str());
    let out = a.html.unwrap_or_else(|| a.results.with_file_name("report.html"));
    std::fs::write(&out, html).with_context(|| format!("writing {}", out.display()))?;
    print!("{}", report::table(&sums));
    println!("\nreport: {}", out.display());
    Ok(())
}
