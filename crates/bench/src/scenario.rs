//! Scenarios (`scenarios/*.toml`, docs/bench.md): the apps of a virtual device and the
//! order in which a user visits them. Built-in ones are compiled in; a path reads a file.

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The device RAM the app sizes are for.
    pub ram_mb: u64,
    #[serde(default = "default_zram_pct")]
    pub zram_pct: f64,
    #[serde(default = "default_alg")]
    pub zram_algorithm: String,
    /// Time in an app on each visit.
    #[serde(default = "default_use_ms")]
    pub use_ms: u64,
    #[serde(default)]
    pub seed: u64,
    pub visits: Visits,
    pub apps: Vec<AppDef>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Visits {
    /// Visit these apps in this order; if empty, launch every app once (if `launch_all`)
    /// then `revisits` visits drawn by Zipf popularity.
    #[serde(default)]
    pub sequence: Vec<String>,
    #[serde(default = "yes")]
    pub launch_all: bool,
    #[serde(default)]
    pub revisits: usize,
    #[serde(default = "default_zipf")]
    pub zipf_s: f64,
    /// After every this many visits, the user goes home and the screen is off for `idle_ms`
    /// (0: never). A sequence may also name [`IDLE`] where it wants one.
    #[serde(default)]
    pub idle_every: usize,
    #[serde(default = "default_idle_ms")]
    pub idle_ms: u64,
}

/// A step of a visit order that is not an app: home, screen off, for `visits.idle_ms`.
pub const IDLE: &str = "(idle)";

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppDef {
    pub name: String,
    pub anon_mb: u64,
    #[serde(default)]
    pub file_mb: u64,
    #[serde(default = "default_content")]
    pub content: String,
    #[serde(default)]
    pub init_ms: u64,
    #[serde(default = "default_ws")]
    pub working_set: f64,
    /// The class it takes once the user leaves it (a class name: `perceptible` for a system
    /// service, `empty` for a process with nothing of the user's), instead of previous and
    /// then cached as an app the user switched away from.
    #[serde(default)]
    pub background: Option<String>,
    /// A real program instead of the synthetic app: its argv. Sizes above then only guide
    /// the manager's launch estimate.
    #[serde(default)]
    pub command: Vec<String>,
    /// When a real program is up: `line:TEXT` (a line of its output holds TEXT) or
    /// `cmd:SHELL` (a shell command that exits 0; $MEMORCH_APP_PID is the program's pid).
    #[serde(default)]
    pub ready: Option<String>,
    /// What bringing a real program to the front does: `line:TEXT` (write TEXT to its input
    /// and wait for a line of output) or `cmd:SHELL` (as for ready). The visit's latency is
    /// its duration; without it a visit only finds the program alive.
    #[serde(default)]
    pub resume: Option<String>,
}

fn default_zram_pct() -> f64 {
    50.0
}
fn default_alg() -> String {
    "lz4".into()
}
fn default_use_ms() -> u64 {
    300
}
fn yes() -> bool {
    true
}
fn default_zipf() -> f64 {
    1.0
}
fn default_content() -> String {
    "mixed".into()
}
fn default_ws() -> f64 {
    0.3
}
fn default_idle_ms() -> u64 {
    10_000
}

/// `line:TEXT` or `cmd:SHELL`, as `ready` and `resume` take them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    Line(String),
    Shell(String),
}

impl Probe {
    pub fn parse(s: &str) -> Option<Probe> {
        if let Some(t) = s.strip_prefix("line:") {
            return Some(Probe::Line(t.to_string()));
        }
        s.strip_prefix("cmd:").filter(|c| !c.trim().is_empty()).map(|c| Probe::Shell(c.to_string()))
    }
}

/// The scenarios shipped with memorch.
pub const BUILT_IN: [(&str, &str); 5] = [
    ("quick", include_str!("../../../scenarios/quick.toml")),
    ("mos26", include_str!("../../../scenarios/mos26.toml")),
    ("thesis", include_str!("../../../scenarios/thesis.toml")),
    ("swam40", include_str!("../../../scenarios/swam40.toml")),
    ("sessions", include_str!("../../../scenarios/sessions.toml")),
];

impl Scenario {
    /// A built-in name or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Scenario, String> {
        let (text, origin) = match BUILT_IN.iter().find(|(n, _)| *n == name_or_path) {
            Some((_, t)) => (t.to_string(), format!("built-in scenario '{name_or_path}'")),
            None => {
                let t = std::fs::read_to_string(name_or_path).map_err(|e| {
                    format!("scenario '{name_or_path}': {e} (built in: {})", BUILT_IN.map(|b| b.0).join(", "))
                })?;
                (t, name_or_path.to_string())
            }
        };
        Scenario::parse(&text).map_err(|e| format!("{origin}: {e}"))
    }

    pub fn parse(text: &str) -> Result<Scenario, String> {
        let s: Scenario = toml::from_str(text).map_err(|e| e.to_string().lines().filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('|')).collect::<Vec<_>>().join(": "))?;
        if s.apps.is_empty() {
            return Err("no [[apps]]".into());
        }
        for a in &s.apps {
            if a.name.is_empty() || a.name.len() > 15 {
                return Err(format!("app name '{}' must be 1 to 15 bytes (it becomes the process name)", a.name));
            }
            if !["text", "zero", "same", "random", "shared", "mixed"].contains(&a.content.as_str()) {
                return Err(format!("app '{}': content '{}' is not text, zero, same, random, shared or mixed", a.name, a.content));
            }
            if !(0.0..=1.0).contains(&a.working_set) {
                return Err(format!("app '{}': working_set {} must be within 0..=1", a.name, a.working_set));
            }
            if let Some(b) = &a.background {
                match memorch_core::Class::from_name(b) {
                    Some(c) if c.oom_score_adj() >= memorch_core::Class::Visible.oom_score_adj() => {}
                    _ => return Err(format!("app '{}': background = {b:?}: use visible, perceptible, service, home, previous, cached or empty", a.name)),
                }
            }
            for (key, v) in [("ready", &a.ready), ("resume", &a.resume)] {
                if v.as_deref().is_some_and(|p| Probe::parse(p).is_none()) {
                    return Err(format!("app '{}': {key} = {:?}: use \"line:TEXT\" or \"cmd:SHELL\"", a.name, v.as_deref().unwrap_or_default()));
                }
            }
            if a.command.is_empty() && (a.ready.is_some() || a.resume.is_some()) {
                return Err(format!("app '{}': ready and resume are for real programs: give its command too", a.name));
            }
            if !a.command.is_empty() && a.ready.is_none() {
                return Err(format!("app '{}': a real program needs ready = \"line:TEXT\" or \"cmd:SHELL\" to tell when it is up", a.name));
            }
        }
        for v in &s.visits.sequence {
            if v != IDLE && !s.apps.iter().any(|a| a.name == *v) {
                return Err(format!("visits.sequence names '{v}', which is not an app"));
            }
        }
        if s.ram_mb < 64 || !(0.0..=200.0).contains(&s.zram_pct) {
            return Err("ram_mb must be at least 64 and zram_pct within 0..=200".into());
        }
        Ok(s)
    }

    /// App sizes scaled from the scenario's device to `ram_mb`.
    pub fn scaled(&self, ram_mb: u64) -> Scenario {
        let f = ram_mb as f64 / self.ram_mb as f64;
        let mut s = self.clone();
        s.ram_mb = ram_mb;
        for a in &mut s.apps {
            a.anon_mb = ((a.anon_mb as f64 * f).round() as u64).max(1);
            a.file_mb = (a.file_mb as f64 * f).round() as u64;
        }
        s
    }

    /// The visits, in order, with [`IDLE`] steps: deterministic for a seed.
    pub fn visit_order(&self, seed: u64) -> Vec<String> {
        let visits = self.app_visits(seed);
        if self.visits.idle_every == 0 {
            return visits;
        }
        let mut out = Vec::new();
        for (i, v) in visits.into_iter().enumerate() {
            if i > 0 && i % self.visits.idle_every == 0 {
                out.push(IDLE.to_string());
            }
            out.push(v);
        }
        out
    }

    fn app_visits(&self, seed: u64) -> Vec<String> {
        if !self.visits.sequence.is_empty() {
            return self.visits.sequence.clone();
        }
        let mut out: Vec<String> = if self.visits.launch_all { self.apps.iter().map(|a| a.name.clone()).collect() } else { Vec::new() };
        // Zipf over the apps in their listed order: the first is the most popular.
        let weights: Vec<f64> = (1..=self.apps.len()).map(|r| 1.0 / (r as f64).powf(self.visits.zipf_s)).collect();
        let total: f64 = weights.iter().sum();
        let mut x = seed ^ 0x5eed;
        for _ in 0..self.visits.revisits {
            x = crate::content::splitmix(x);
            let mut r = (x >> 11) as f64 / (1u64 << 53) as f64 * total;
            let mut pick = 0;
            for (i, w) in weights.iter().enumerate() {
                if r < *w {
                    pick = i;
                    break;
                }
                r -= w;
            }
            // Never the app just used: a visit is a switch.
            if out.last() == Some(&self.apps[pick].name) {
                pick = (pick + 1) % self.apps.len();
            }
            out.push(self.apps[pick].name.clone());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_quick_parses_and_scales() {
        let s = Scenario::load("quick").unwrap();
        assert_eq!(s.name, "quick");
        assert_eq!(s.apps.len(), 8);
        let big = s.scaled(1024);
        assert_eq!(big.apps[0].anon_mb, s.apps[0].anon_mb * 2);
        let order = s.visit_order(1);
        assert_eq!(order.len(), 8 + 14);
        assert_eq!(&order[..8], &s.apps.iter().map(|a| a.name.clone()).collect::<Vec<_>>()[..]);
        assert_eq!(order, s.visit_order(1), "deterministic");
        assert_ne!(order, s.visit_order(2));
        assert!(order.windows(2).all(|w| w[0] != w[1]), "every visit is a switch");
    }

    #[test]
    fn every_built_in_scenario_parses_with_the_papers_figures() {
        for (name, _) in BUILT_IN {
            let s = Scenario::load(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.name, name);
            assert!(!s.visit_order(1).is_empty());
        }
        let mos = Scenario::load("mos26").unwrap();
        assert_eq!(mos.apps.iter().filter(|a| a.background.is_none()).count(), 26, "MOS Table II");
        assert_eq!(mos.visit_order(1).len(), 1 + 52, "the platform, then the list launched twice");
        let swam = Scenario::load("swam40").unwrap();
        assert_eq!(swam.apps.len(), 40, "15 foreground + 25 background");
        let netflix = swam.apps.iter().find(|a| a.name == "Netflix").unwrap();
        assert_eq!(netflix.anon_mb + netflix.file_mb, 604, "SWAM: Netflix needs ~604 MB");
        let thesis = Scenario::load("thesis").unwrap();
        assert_eq!(thesis.apps.iter().filter(|a| a.name.starts_with("proc")).map(|a| a.anon_mb + a.file_mb).collect::<Vec<_>>(), vec![100; 6]);
        assert_eq!(thesis.ram_mb, 835);
    }

    #[test]
    fn bad_scenarios_say_what_is_wrong() {
        assert!(Scenario::load("nope").unwrap_err().contains("built in: quick"));
        let e = Scenario::parse("name='x'\nram_mb=512\n[visits]\nsequence=['a']\n[[apps]]\nname='b'\nanon_mb=1\n").unwrap_err();
        assert!(e.contains("'a'"), "{e}");
        let e = Scenario::parse("name='x'\nram_mb=512\nbogus=1\n[visits]\n[[apps]]\nname='b'\nanon_mb=1\n").unwrap_err();
        assert!(e.contains("bogus"), "{e}");
        let e = Scenario::parse("name='x'\nram_mb=512\n[visits]\n[[apps]]\nname='b'\nanon_mb=1\ncommand=['sleep','9']\n").unwrap_err();
        assert!(e.contains("ready"), "{e}");
        let e = Scenario::parse("name='x'\nram_mb=512\n[visits]\n[[apps]]\nname='b'\nanon_mb=1\ncommand=['x']\nready='up'\n").unwrap_err();
        assert!(e.contains("line:TEXT"), "{e}");
        let e = Scenario::parse("name='x'\nram_mb=512\n[visits]\n[[apps]]\nname='b'\nanon_mb=1\nbackground='native'\n").unwrap_err();
        assert!(e.contains("perceptible"), "{e}");
    }

    #[test]
    fn idle_steps_fall_between_visits() {
        let mut s = Scenario::load("quick").unwrap();
        s.visits.idle_every = 5;
        let order = s.visit_order(1);
        assert_eq!(order.iter().filter(|v| *v == IDLE).count(), (22 - 1) / 5);
        assert_eq!(order[5], IDLE);
        assert_ne!(order.last().map(String::as_str), Some(IDLE));
    }
}
