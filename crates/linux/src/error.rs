//! Typed errors of the kernel side. Each names the thing that is wrong (a path, a pid, a domain) so the binary can
//! print one line a person can act on.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: cannot parse {what}: {detail}", path.display())]
    Parse { path: PathBuf, what: &'static str, detail: String },
    #[error(
        "unknown domain '{0}': use 'system' or 'cgroup:PATH' with PATH as /proc/PID/cgroup \
         writes it (e.g. cgroup:/a/b/memorch-phone)"
    )]
    UnknownDomain(String),
    #[error(
        "cgroup {path} exists in no mounted cgroup hierarchy (looked in: {searched}); \
         check the path against /proc/PID/cgroup, or create it first"
    )]
    CgroupNotFound { path: String, searched: String },
    #[error("no cgroup hierarchy is mounted (nothing of type cgroup or cgroup2 in {0}); mount cgroupfs or use --domain system")]
    NoCgroupMounts(String),
    #[error("{0}")]
    Refused(String),
    #[error("{what}: {detail}")]
    Other { what: String, detail: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    pub fn parse(path: impl Into<PathBuf>, what: &'static str, detail: impl Into<String>) -> Self {
        Error::Parse { path: path.into(), what, detail: detail.into() }
    }

    /// Whether this is a file that is not there (a vanished process, a missing facility).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Io { source, .. }
            if source.kind() == std::io::ErrorKind::NotFound
                || source.raw_os_error() == Some(libc::ESRCH))
    }
}
