//! The domain memorch manages: the whole machine, or one cgroup (docs/design.md, "Words").

use crate::cgroup::{self, CgroupDirs};
use crate::error::{Error, Result};
use crate::root::SysRoot;
use crate::{meminfo, process, psi};
use std::path::PathBuf;
use std::str::FromStr;

/// A domain as the user names it on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainSpec {
    /// The whole machine.
    System,
    /// A cgroup path as `/proc/PID/cgroup` writes it.
    Cgroup(String),
}

impl FromStr for DomainSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        if s == "system" {
            return Ok(DomainSpec::System);
        }
        match s.split_once(':') {
            Some(("cgroup", path)) => {
                cgroup::validate_path(path)?;
                Ok(DomainSpec::Cgroup(path.to_string()))
            }
            _ => Err(Error::UnknownDomain(s.to_string())),
        }
    }
}

impl std::fmt::Display for DomainSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DomainSpec::System => f.write_str("system"),
            DomainSpec::Cgroup(p) => write!(f, "cgroup:{p}"),
        }
    }
}

/// A domain found on the machine, ready to be read.
#[derive(Debug, Clone)]
pub struct Domain {
    pub spec: DomainSpec,
    /// The machine's RAM: the ceiling of any cgroup limit.
    pub ram_bytes: u64,
    /// The cgroup's directories in each hierarchy; `None` for `system`.
    pub cgroup: Option<CgroupDirs>,
    /// Where the domain's PSI is read.
    pub psi_file: Option<PathBuf>,
}

impl Domain {
    /// Find the domain; a cgroup that exists in no hierarchy is an error that says so.
    pub fn open(root: &SysRoot, spec: &DomainSpec) -> Result<Domain> {
        let ram_bytes = meminfo::mem_total_bytes(root)?;
        match spec {
            DomainSpec::System => {
                Ok(Domain { spec: spec.clone(), ram_bytes, cgroup: None, psi_file: Some(psi::system_file(root)) })
            }
            DomainSpec::Cgroup(path) => {
                let dirs = cgroup::locate(root, path)?;
                let psi_file = dirs.v2.as_ref().map(|d| d.join("memory.pressure"));
                Ok(Domain { spec: spec.clone(), ram_bytes, cgroup: Some(dirs), psi_file })
            }
        }
    }

    /// Every process of the domain (for `system`, every pid in /proc).
    pub fn pids(&self, root: &SysRoot) -> Result<Vec<u32>> {
        match &self.cgroup {
            None => process::all_pids(root),
            Some(dirs) => cgroup::pids(dirs),
        }
    }

    /// Whether a process belongs to the domain now: its `/proc/PID/cgroup` puts it in the group or below, in the memory
    /// hierarchy or the v2 one (one small read, not a walk of the group's subtree).
    pub fn contains(&self, root: &SysRoot, pid: u32) -> Result<bool> {
        match &self.cgroup {
            None => Ok(root.path(format!("/proc/{pid}")).exists()),
            Some(dirs) => {
                let text = match root.read(format!("/proc/{pid}/cgroup")) {
                    Ok(t) => t,
                    Err(e) if e.is_not_found() => return Ok(false),
                    Err(e) => return Err(e),
                };
                Ok(cgroup_lines_within(&text, &dirs.path))
            }
        }
    }
}

/// Whether a `/proc/PID/cgroup` text puts the process at `path` or below, in the memory hierarchy or in v2.
fn cgroup_lines_within(text: &str, path: &str) -> bool {
    text.lines().any(|line| {
        let mut it = line.splitn(3, ':');
        let (_, ctrls, p) = (it.next(), it.next().unwrap_or("-"), it.next().unwrap_or(""));
        let relevant = ctrls.is_empty() || ctrls.split(',').any(|c| c == "memory");
        relevant && (p == path || path == "/" || p.strip_prefix(path).is_some_and(|rest| rest.starts_with('/')))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_membership_from_proc_cgroup() {
        let text = "4:memory:/a/phone/app1\n1:cpu:/\n0::/\n";
        assert!(cgroup_lines_within(text, "/a/phone"));
        assert!(cgroup_lines_within(text, "/a/phone/app1"));
        assert!(!cgroup_lines_within(text, "/a/ph"), "a prefix of a name is not a parent");
        assert!(!cgroup_lines_within(text, "/b"));
        assert!(cgroup_lines_within("0::/x/y\n", "/x"), "v2 line");
        assert!(!cgroup_lines_within("3:cpu:/x/y\n", "/x"), "other controllers do not count");
    }

    #[test]
    fn parses_domain_specs() {
        assert_eq!("system".parse::<DomainSpec>().unwrap(), DomainSpec::System);
        assert_eq!("cgroup:/a/b".parse::<DomainSpec>().unwrap(), DomainSpec::Cgroup("/a/b".into()));
        let e = "docker:/x".parse::<DomainSpec>().unwrap_err().to_string();
        assert!(e.contains("unknown domain 'docker:/x'"), "{e}");
        assert!("cgroup:relative".parse::<DomainSpec>().is_err());
        assert_eq!(DomainSpec::Cgroup("/a".into()).to_string(), "cgroup:/a");
    }
}
