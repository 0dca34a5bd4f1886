//! What the device around the apps is like, beyond its manager: whether its launcher talks to memorch (a phone's
//! activity manager speaking the protocol) or only writes `oom_score_adj` (ordinary Linux), whether each app has a
//! memory group of its own or all share one, and what storage swap files are on.

use serde::{Deserialize, Serialize};

/// What the launcher tells the manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Launcher {
    /// Every class, launch intent and launch time, over memorch's socket.
    #[default]
    Full,
    /// Nothing: it writes each app's `oom_score_adj` as an activity manager does, and the daemon infers the rest from
    /// what it sees.
    Silent,
}

/// How apps are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AppGroups {
    /// As the manager's preset asks (memorch's launcher gives each app a group of its own).
    #[default]
    Own,
    /// Every app in the device's one group, as on a desktop without per-app scopes.
    None,
}

/// The disk under storage swap files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SwapDisk {
    /// The machine's own disk, where the run's files are.
    #[default]
    Machine,
    /// A phone's eMMC flash: a throttled loop device (memorch_linux::slow_disk::EMMC).
    Emmc,
}

impl std::str::FromStr for SwapDisk {
    type Err = String;
    fn from_str(s: &str) -> Result<SwapDisk, String> {
        match s {
            "machine" => Ok(SwapDisk::Machine),
            "emmc" => Ok(SwapDisk::Emmc),
            _ => {
                Err(format!("'{s}' is not a swap disk: machine (this machine's) or emmc (throttled to a phone's eMMC)"))
            }
        }
    }
}

impl std::fmt::Display for SwapDisk {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(if *self == SwapDisk::Machine { "machine" } else { "emmc" })
    }
}

impl std::str::FromStr for Launcher {
    type Err = String;
    fn from_str(s: &str) -> Result<Launcher, String> {
        match s {
            "full" => Ok(Launcher::Full),
            "silent" => Ok(Launcher::Silent),
            _ => {
                Err(format!("'{s}' is not a launcher: full (tells memorch everything) or silent (oom_score_adj only)"))
            }
        }
    }
}

impl std::str::FromStr for AppGroups {
    type Err = String;
    fn from_str(s: &str) -> Result<AppGroups, String> {
        match s {
            "own" => Ok(AppGroups::Own),
            "none" => Ok(AppGroups::None),
            _ => Err(format!(
                "'{s}' is not an app grouping: own (a group per app, as the preset asks) or none (one shared group)"
            )),
        }
    }
}

impl std::fmt::Display for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(if *self == Launcher::Full { "full" } else { "silent" })
    }
}

impl std::fmt::Display for AppGroups {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(if *self == AppGroups::Own { "own" } else { "none" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_a_wrong_one_says_the_choices() {
        for l in [Launcher::Full, Launcher::Silent] {
            assert_eq!(l.to_string().parse::<Launcher>(), Ok(l));
        }
        for g in [AppGroups::Own, AppGroups::None] {
            assert_eq!(g.to_string().parse::<AppGroups>(), Ok(g));
        }
        for d in [SwapDisk::Machine, SwapDisk::Emmc] {
            assert_eq!(d.to_string().parse::<SwapDisk>(), Ok(d));
        }
        assert!("nvme".parse::<SwapDisk>().unwrap_err().contains("emmc"));
        assert!("quiet".parse::<Launcher>().unwrap_err().contains("full"));
        assert!("each".parse::<AppGroups>().unwrap_err().contains("none"));
    }
}
