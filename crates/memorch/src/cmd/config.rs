//! `memorch config`: the configuration file.

use anyhow::Result;
use memorch_daemon::config::{Config, DEFAULTS};
use std::path::PathBuf;

/// Print the complete default configuration, or check a file.
#[derive(clap::Args)]
pub struct Args {
    /// Print every key with its default and what it means.
    #[arg(long, conflicts_with = "check")]
    defaults: bool,
    /// With --defaults: every key commented out, as the package installs it (the built-in values apply until you
    /// uncomment one).
    #[arg(long, requires = "defaults")]
    commented: bool,
    /// Check a configuration file: every error names the key and the line.
    #[arg(long, value_name = "FILE")]
    check: Option<PathBuf>,
    /// Print JSON: the settings as the daemon reads them (of the file checked, or the defaults).
    #[arg(long, conflicts_with = "commented")]
    json: bool,
}

pub fn run(a: Args) -> Result<()> {
    match a.check {
        Some(p) if a.json => super::print_json(&Config::load(&p)?)?,
        Some(p) => {
            let c = Config::load(&p)?;
            println!("{}: ok (preset {}, domain {})", p.display(), c.preset, c.domain);
        }
        None if a.defaults && a.json => super::print_json(&Config::default())?,
        None if a.commented => print!("{}", commented(DEFAULTS)),
        None if a.defaults => print!("{DEFAULTS}"),
        None => anyhow::bail!("give --defaults to print the default file, or --check FILE"),
    }
    Ok(())
}

/// The file with every key line commented out; comments and table headers stay as they are.
fn commented(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 512);
    for line in text.lines() {
        let t = line.trim_start();
        if !(t.is_empty() || t.starts_with('#') || t.starts_with('[')) {
            out.push_str("# ");
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{commented, DEFAULTS};
    use memorch_daemon::config::Config;

    #[test]
    fn the_commented_defaults_set_nothing_and_keep_every_key() {
        let text = commented(DEFAULTS);
        let parsed = Config::parse(&text, "commented").unwrap();
        assert_eq!(parsed, Config::default());
        let keys = |t: &str| t.lines().filter(|l| l.contains(" = ")).count();
        assert_eq!(keys(&text), keys(DEFAULTS));
        assert!(text.lines().filter(|l| l.contains(" = ")).all(|l| l.trim_start().starts_with('#')));
    }
}
