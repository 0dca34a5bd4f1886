//! docs/results.md from a small curated set of results (`memorch report --summary MANIFEST`): the manifest names each
//! section's results.json, its command, the claim it tests and the words that read it; every figure comes from the
//! files, so the page is regenerated, never edited.

use crate::report::{num, summarize, Summary};
use crate::results::RunResult;
use serde::Deserialize;
use std::fmt::Write;
use std::path::Path;

/// The manifest (`docs/results/summary.toml`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub title: String,
    pub intro: String,
    /// The papers' claims against this bench, one row each.
    #[serde(default)]
    pub claims: Vec<Claim>,
    /// The scoreboard (`memorch bench --scoreboard`), first after the claims.
    #[serde(default)]
    pub scoreboard: Option<Scoreboard>,
    pub sections: Vec<Section>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scoreboard {
    /// The scoreboard's directory, relative to the manifest: a results.json a cell.
    pub dir: String,
    pub measured: String,
    pub command: String,
    #[serde(default)]
    pub notes: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub paper: String,
    pub claim: String,
    pub baseline: String,
    pub here: String,
    pub holds: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    pub title: String,
    /// The results.json files, relative to the manifest; their runs pooled.
    pub results: Vec<String>,
    /// The commit and day it was measured by, where the file does not say.
    pub measured: String,
    pub command: String,
    /// The table's columns ([`crate::md_table::COLUMNS`] names them).
    pub columns: Vec<String>,
    /// The managers shown, in this order (default: every one, as they ran).
    #[serde(default)]
    pub managers: Vec<String>,
    /// With a subject, a line of its ratios to the best other manager.
    #[serde(default)]
    pub subject: Option<String>,
    #[serde(default)]
    pub notes: String,
}

/// The page: title, intro, the claims, the scoreboard, then each section with its table.
pub fn render(m: &Manifest, dir: &Path, stamp: &str) -> Result<String, String> {
    let mut o = format!("# {}\n\n<!-- {stamp} -->\n\n{}\n", m.title, m.intro.trim());
    if !m.claims.is_empty() {
        o.push_str("\n| paper | its claim | its baseline here | here | holds? |\n|---|---|---|---|---|\n");
        for c in &m.claims {
            let _ = writeln!(o, "| {} | {} | {} | {} | {} |", c.paper, c.claim, c.baseline, c.here, c.holds);
        }
    }
    if let Some(b) = &m.scoreboard {
        o.push_str(&scoreboard(b, dir)?);
    }
    for s in &m.sections {
        o.push_str(&section(s, dir)?);
    }
    Ok(o)
}

/// The scoreboard's cells that have results (a cell not measured yet is said to be missing).
pub fn scoreboard_cells(dir: &Path) -> (Vec<(crate::scoreboard::Cell, Vec<RunResult>)>, Vec<&'static str>) {
    let (mut have, mut missing) = (Vec::new(), Vec::new());
    for c in crate::scoreboard::CELLS {
        match crate::results::read_runs(&dir.join(c.name).join("results.json")) {
            Ok(runs) => have.push((c, runs)),
            Err(_) => missing.push(c.name),
        }
    }
    (have, missing)
}

fn scoreboard(b: &Scoreboard, dir: &Path) -> Result<String, String> {
    let (cells, missing) = scoreboard_cells(&dir.join(&b.dir));
    let seeds: std::collections::BTreeSet<u64> = cells.iter().flat_map(|(_, r)| r.iter().map(|r| r.seed)).collect();
    let mut o = format!("\n## The scoreboard\n\n```sh\n{}\n```\n\n", b.command);
    let seeds: Vec<String> = seeds.iter().map(|s| s.to_string()).collect();
    let _ = writeln!(
        o,
        "Measured by {}; seeds {}; files in [{}](results/{}).\n",
        b.measured,
        seeds.join(", "),
        b.dir,
        b.dir
    );
    o.push_str(&crate::scoreboard::render(&cells, "memorch").replace("\n### ", "\n#### "));
    if !missing.is_empty() {
        let _ = writeln!(o, "\nNot measured yet: {}.", missing.join(", "));
    }
    if !b.notes.trim().is_empty() {
        let _ = write!(o, "\n{}\n", b.notes.trim());
    }
    Ok(o)
}

fn section(s: &Section, dir: &Path) -> Result<String, String> {
    let mut runs = Vec::new();
    for f in &s.results {
        runs.extend(crate::results::read_runs(&dir.join(f))?);
    }
    let mut sums = summarize(&runs);
    if !s.managers.is_empty() {
        sums = s.managers.iter().filter_map(|m| sums.iter().find(|x| &x.manager == m).cloned()).collect();
    }
    let seeds: std::collections::BTreeSet<u64> = runs.iter().map(|r| r.seed).collect();
    let mut o = format!("\n## {}\n\n```sh\n{}\n```\n\n", s.title, s.command);
    let files: Vec<String> = s.results.iter().map(|f| format!("[{f}](results/{f})")).collect();
    let _ = writeln!(
        o,
        "Measured by {}; seeds {}; medians of each manager's runs ({}).\n",
        s.measured,
        seeds.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "),
        files.join(", ")
    );
    o.push_str(&crate::md_table::table(&sums, &s.columns)?);
    if let Some(subject) = &s.subject {
        o.push_str(&ratios(&sums, subject)?);
    }
    if !s.notes.trim().is_empty() {
        let _ = write!(o, "\n{}\n", s.notes.trim());
    }
    Ok(o)
}

/// The subject's wait, p95 and p50 as ratios to the best (lowest) other manager's, and its kills beside the fewest.
fn ratios(sums: &[Summary], subject: &str) -> Result<String, String> {
    let s =
        crate::scoreboard::Standing::of(sums, subject).ok_or_else(|| format!("no runs of '{subject}' and another"))?;
    let ratio = crate::scoreboard::ratio;
    Ok(format!(
        "\n`{subject}` against the best other: wait {} `{}`'s; p95 {}; p50 {}; kills {} against the fewest other's {}.\n",
        ratio(Some(s.wait_s), Some(s.best_wait_s)),
        s.best_wait_by,
        ratio(s.p95_ms, s.best_p95_ms),
        ratio(s.p50_ms, s.best_p50_ms),
        num(s.kills),
        num(s.fewest_kills)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::run;

    #[test]
    fn a_section_shows_its_columns_and_the_subjects_ratios_to_the_best_other() {
        let runs = vec![
            run("kernel", &[("a", 100.0), ("a", 300.0)], &[("b", memorch_core::Class::Cached)]),
            run("memorch", &[("a", 50.0), ("a", 150.0)], &[]),
        ];
        let sums = summarize(&runs);
        let t = crate::md_table::table(&sums, &["wait s".into(), "p50 ms".into()]).unwrap();
        assert!(t.contains("| `memorch` | 1 | 0.15 | 50 |"), "the first launch left out of the wait: {t}");
        assert!(crate::md_table::table(&sums, &["bogus".into()]).unwrap_err().contains("give one of"));
        let r = ratios(&sums, "memorch").unwrap();
        assert!(r.contains("wait 0.50× `kernel`'s") && r.contains("kills 0 against the fewest other's 1"), "{r}");
    }
}
