//! `memorch spawn -- CMD`: start a process in a domain, with a class, optionally mergeable by KSM, the way Android's
//! zygote starts apps.

use super::open_domain;
use anyhow::{Context, Result};
use memorch_core::Class;
use memorch_linux::{cgroup, ksm, process, SysRoot};
use std::os::unix::process::CommandExt;

/// Start CMD in a domain with a class. memorch sets itself up (cgroup, oom_score_adj, KSM)
/// and then becomes CMD (exec), so CMD keeps memorch's pid and nothing runs in between.
///
/// KSM can only be switched on for a process from its start: --ksm calls
/// prctl(PR_SET_MEMORY_MERGE) before exec, and it survives exec.
///
/// Examples:
///   memorch spawn --domain cgroup:/a/phone --class cached --ksm -- memorch app --anon-mb 64
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Where to start it (`system` or `cgroup:PATH`); it joins this cgroup.
    #[arg(long, default_value = "system")]
    domain: String,
    /// foreground, visible, perceptible, service, home, previous, cached or empty.
    #[arg(long, value_parser = parse_class)]
    class: Option<Class>,
    /// Make the process's anonymous memory mergeable by KSM.
    #[arg(long)]
    ksm: bool,
    /// Give it a memory group of its own below the domain's (DOMAIN/app-PID), so memorch can reclaim its coldest pages
    /// first; removed once empty.
    #[arg(long)]
    app_group: bool,
    /// The app group's swappiness (0..=200; 200: reclaim anonymous pages only, keeping its code resident).
    #[arg(long, requires = "app_group", value_parser = clap::value_parser!(u32).range(0..=200))]
    swappiness: Option<u32>,
    /// The command and its arguments.
    #[arg(required = true, last = true)]
    command: Vec<String>,
}

fn parse_class(s: &str) -> Result<Class, String> {
    Class::from_name(s).filter(|c| !c.is_protected()).ok_or_else(|| {
        format!("unknown class '{s}': use foreground, visible, perceptible, service, home, previous, cached or empty")
    })
}

pub fn run(a: Args) -> Result<()> {
    let root = SysRoot::live();
    let domain = open_domain(&root, &a.domain)?;
    // Check everything before changing anything.
    let (program, args) = a.command.split_first().expect("clap requires a command");
    if let Some(dirs) = &domain.cgroup {
        cgroup::join_self(dirs).with_context(|| format!("joining {}", domain.spec))?;
        if a.app_group {
            memorch_linux::appgroup::create_for_self(dirs, a.swappiness)
                .with_context(|| format!("making an app group in {}", domain.spec))?;
        }
    } else if a.app_group {
        anyhow::bail!("--app-group needs a cgroup domain (--domain cgroup:PATH)");
    }
    if let Some(class) = a.class {
        process::write_oom_score_adj(&root, "self", class.oom_score_adj())?;
    }
    if a.ksm {
        ksm::enable_merge_for_self()?;
    }
    let err = std::process::Command::new(program).args(args).exec();
    Err(anyhow::anyhow!("cannot run '{program}': {err}"))
}
