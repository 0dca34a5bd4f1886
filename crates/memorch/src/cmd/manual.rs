//! `memorch manual` and `memorch completions`: man pages and shell completions made from the command-line definitions
//! and the documented default config, so they cannot drift from them.

use super::config_page;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Write the man pages: memorch(1), one page per subcommand (memorch-ctl(1), …), memorchd(1) and memorch.toml(5). Read
/// one with `man -l DIR/memorch.1`.
#[derive(clap::Args)]
pub struct ManualArgs {
    /// The directory to write the pages into (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// Print a shell's completion script for memorch. Load it now with
/// `source <(memorch completions bash)`, or install it where the shell looks
/// (the Debian package puts it there).
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct CompletionArgs {
    /// The shell.
    shell: clap_complete::Shell,
}

pub fn manual(a: ManualArgs, cli: clap::Command) -> Result<()> {
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    write_pages(&a.out, cli).with_context(|| format!("cannot write man pages into {}", a.out.display()))?;
    println!(
        "{} man pages in {} (read one: man -l {}/memorch.1)",
        count_pages(&a.out)?,
        a.out.display(),
        a.out.display()
    );
    Ok(())
}

pub fn completions(a: CompletionArgs, mut cli: clap::Command) -> Result<()> {
    clap_complete::generate(a.shell, &mut cli, "memorch", &mut std::io::stdout());
    Ok(())
}

fn write_pages(dir: &Path, cli: clap::Command) -> std::io::Result<()> {
    clap_mangen::generate_to(cli, dir)?;
    let daemon = memorch_daemon::cli::daemon_command();
    clap_mangen::Man::new(daemon).generate_to(dir)?;
    std::fs::write(dir.join("memorch.toml.5"), config_page::render(memorch_daemon::config::DEFAULTS))?;
    Ok(())
}

fn count_pages(dir: &Path) -> std::io::Result<usize> {
    let mut n = 0;
    for e in std::fs::read_dir(dir)? {
        let name = e?.file_name();
        n += usize::from(name.to_string_lossy().starts_with("memorch"));
    }
    Ok(n)
}
