//! `memorch report`: the table and report.html again from a bench's results; two managers paired run by run;
//! docs/results.md regenerated from its curated results.

use anyhow::{Context, Result};
use memorch_bench::results::RunResult;
use memorch_bench::{paired, report, summary_md};
use std::path::{Path, PathBuf};

/// Read benches' results again: print the table and write report.html beside the first
/// (or to --html); with --pair, compare two managers run by run, each seed's run of one
/// beside the same seed's run of the other (a manager named NAME@N is NAME's runs in the Nth
/// file, NAME@N-M in files N to M: two builds' runs of one preset); with --summary, write docs/results.md from the
/// curated results its manifest lists.
///
/// Examples:
///   memorch report bench-out/quick-1795394529/results.json
///   memorch report results.json --html /tmp/report.html
///   memorch report --pair memorch,earlyoom a/results.json b/results.json
///   memorch report --pair memorch@1,memorch@2 before/results.json after/results.json
///   memorch report --pair memorch@1-3,memorch@4-6 before-s{40,41,42}/results.json after-s{40,41,42}/results.json
///   memorch report --summary docs/results/summary.toml
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// results.json files written by `memorch bench`.
    #[arg(required_unless_present = "summary")]
    results: Vec<PathBuf>,
    /// Where report.html goes (default: beside the first results).
    #[arg(long)]
    html: Option<PathBuf>,
    /// Two managers, A,B: their runs paired by seed, and A/B over the pairs.
    #[arg(long, value_name = "A,B", conflicts_with = "summary")]
    pair: Option<String>,
    /// A manifest of curated results (docs/results/summary.toml): write the page it names.
    #[arg(long, value_name = "MANIFEST")]
    summary: Option<PathBuf>,
    /// Where --summary writes (default: results.md beside the manifest's directory).
    #[arg(long, requires = "summary")]
    out: Option<PathBuf>,
    /// Print JSON instead of the table: the summaries (or the pairs and their ratios).
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<()> {
    if let Some(manifest) = &a.summary {
        let out = summary(manifest, a.out)?;
        let mut said = super::Said::new(a.json);
        said.say(format!("wrote {}", out.display()), serde_json::json!({"wrote": out}));
        return said.done();
    }
    let files: Vec<Vec<RunResult>> = a.results.iter().map(|p| read(p)).collect::<Result<_>>()?;
    if let Some(pair) = &a.pair {
        let (x, y) = pair.split_once(',').context("--pair takes two managers: A,B")?;
        let (ra, rb) = (select(&files, x)?, select(&files, y)?);
        let pairs = paired::pairs(&ra, &rb);
        if a.json {
            return super::print_json(&pair_json(x, y, &pairs));
        }
        print!("{}", paired::table(x, y, &pairs));
        return Ok(());
    }
    let runs: Vec<RunResult> = files.into_iter().flatten().collect();
    let sums = report::summarize(&runs);
    let first = &a.results[0];
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(first)?)?;
    let name = v["scenario"].as_str().unwrap_or("?");
    let html =
        memorch_bench::html::report(name, v["description"].as_str().unwrap_or(""), &sums, &runs, v["stopped"].as_str());
    let out = a.html.unwrap_or_else(|| first.with_file_name("report.html"));
    std::fs::write(&out, html).with_context(|| format!("writing {}", out.display()))?;
    if a.json {
        return super::print_json(&serde_json::json!({"summaries": sums, "report": out}));
    }
    print!("{}", report::table(&sums));
    println!("\nreport: {}", out.display());
    Ok(())
}

/// The pairs and A/B over them (geometric mean, and in how many pairs A was shorter).
fn pair_json(a: &str, b: &str, pairs: &[paired::Pair]) -> serde_json::Value {
    let ratio = |f: fn(&paired::RunFigures) -> f64| {
        paired::ratio(pairs, f).map(|(g, shorter)| serde_json::json!({"a_over_b": g, "a_shorter_in": shorter}))
    };
    serde_json::json!({
        "a": a,
        "b": b,
        "pairs": pairs,
        "wait": ratio(|r| r.wait_s),
        "p95": ratio(|r| r.p95_ms),
        "p50": ratio(|r| r.p50_ms),
    })
}

fn read(path: &Path) -> Result<Vec<RunResult>> {
    let runs = memorch_bench::results::read_runs(path).map_err(|e| anyhow::anyhow!(e))?;
    anyhow::ensure!(!runs.is_empty(), "{}: no runs in it", path.display());
    Ok(runs)
}

/// The runs `spec` names: NAME in every file, NAME@N in the Nth, or NAME@N-M in the Nth to the Mth (one build's
/// per-seed files).
fn select<'a>(files: &'a [Vec<RunResult>], spec: &str) -> Result<Vec<&'a RunResult>> {
    let (name, range) = match spec.rsplit_once('@') {
        Some((n, r)) => (
            n,
            file_range(r, files.len())
                .with_context(|| format!("{spec}: NAME@N or NAME@N-M names files 1 to {}", files.len()))?,
        ),
        None => (spec, 1..=files.len()),
    };
    let runs: Vec<&RunResult> = files
        .iter()
        .enumerate()
        .filter(|(i, _)| range.contains(&(i + 1)))
        .flat_map(|(_, runs)| runs.iter().filter(|r| r.manager == name))
        .collect();
    anyhow::ensure!(!runs.is_empty(), "no runs of '{name}' in the files given");
    Ok(runs)
}

/// `N` or `N-M` as files N to M, if within the `count` files given.
fn file_range(text: &str, count: usize) -> Option<std::ops::RangeInclusive<usize>> {
    let (first, last) = text.split_once('-').unwrap_or((text, text));
    let (first, last) = (first.parse::<usize>().ok()?, last.parse::<usize>().ok()?);
    (1 <= first && first <= last && last <= count).then_some(first..=last)
}

fn summary(manifest: &Path, out: Option<PathBuf>) -> Result<PathBuf> {
    let text = std::fs::read_to_string(manifest).with_context(|| format!("reading {}", manifest.display()))?;
    let m: summary_md::Manifest = toml::from_str(&text).with_context(|| format!("{}", manifest.display()))?;
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let stamp = format!(
        "Generated by `memorch report --summary {}` (memorch {}); edit the manifest, not this page.",
        manifest.display(),
        env!("MEMORCH_COMMIT")
    );
    let page = summary_md::render(&m, dir, &stamp).map_err(|e| anyhow::anyhow!(e))?;
    let out = out.unwrap_or_else(|| dir.parent().unwrap_or(Path::new(".")).join("results.md"));
    std::fs::write(&out, page).with_context(|| format!("writing {}", out.display()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::file_range;

    #[test]
    fn a_file_range_is_one_file_or_several_within_those_given() {
        assert_eq!(file_range("2", 3), Some(2..=2));
        assert_eq!(file_range("1-3", 6), Some(1..=3));
        assert_eq!(file_range("4-6", 6), Some(4..=6));
        for bad in ["0", "4", "3-2", "2-7", "x", "1-", ""] {
            assert_eq!(file_range(bad, 3), None, "{bad}");
        }
    }
}
