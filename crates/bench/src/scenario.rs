//! Scenarios (`scenarios/*.toml`, docs/bench.md): the apps of a virtual device and the order in which a user visits
//! them. Built-in ones are compiled in, with the files their real programs need (assets); a path reads a file, its
//! assets beside it.
//!
//! Real programs' commands may name `{assets}` (the scenario's files), `{data}` (where its generated data is cached,
//! made once by its `[[prepare]]` steps), `{run}` (a directory of the run's own, for sockets) and `{app}` (the app's
//! name); a resume action also `{visit}` (the visit's number). Every path that crosses into a device is made absolute
//! first: inside, the working directory is not the caller's.

use serde::Deserialize;
use std::path::{Path, PathBuf};

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
    /// Apps start with KSM merging on (`memorch spawn --ksm`), as Android's zygote children may: the thesis's KSM test.
    /// Only a manager that runs KSM merges anything.
    #[serde(default)]
    pub ksm: bool,
    /// Steps that generate the scenario's data once (outside any device, not measured).
    #[serde(default)]
    pub prepare: Vec<Prepare>,
    /// Where its assets are; set by [`Scenario::load`].
    #[serde(skip)]
    pub assets: Assets,
    /// Its prepare steps and assets, hashed: its generated data is cached under it.
    #[serde(skip)]
    pub fingerprint: u64,
}

/// A data-generating step: `command` runs when `creates` does not exist yet.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prepare {
    pub creates: String,
    pub command: Vec<String>,
}

/// The files a scenario's real programs run (their code, data generators).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Assets {
    /// None needed.
    #[default]
    None,
    /// Compiled in; written out to a directory when the bench starts.
    Embedded(&'static [(&'static str, &'static str)]),
    /// The directory of a scenario file.
    Dir(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Visits {
    /// Visit these apps in this order; if empty, launch every app once (if `launch_all`) then `revisits` visits drawn
    /// by Zipf popularity.
    #[serde(default)]
    pub sequence: Vec<String>,
    #[serde(default = "yes")]
    pub launch_all: bool,
    #[serde(default)]
    pub revisits: usize,
    #[serde(default = "default_zipf")]
    pub zipf_s: f64,
    /// After every this many visits, the user goes home and the screen is off for `idle_ms` (0: never). A sequence may
    /// also name [`IDLE`] where it wants one.
    #[serde(default)]
    pub idle_every: usize,
    #[serde(default = "default_idle_ms")]
    pub idle_ms: u64,
    /// Sessions as the LSApp study measured them: each uses 1 to 4 apps chosen by popularity (2.18 on average),
    /// switches between them, and ends with the screen off for `idle_ms`. 0: no sessions (`revisits` instead).
    #[serde(default)]
    pub sessions: usize,
    /// Mean app switches a session (LSApp: 5.46).
    #[serde(default = "default_switches")]
    pub session_switches: f64,
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
    /// The class it takes once the user leaves it (a class name: `perceptible` for a system service, `empty` for a
    /// process with nothing of the user's), instead of previous and then cached as an app the user switched away from.
    #[serde(default)]
    pub background: Option<String>,
    /// A real program instead of the synthetic app: its argv. Sizes above then only guide the manager's launch
    /// estimate.
    #[serde(default)]
    pub command: Vec<String>,
    /// When a real program is up: `line:TEXT` (a line of its output holds TEXT) or `cmd:SHELL` (a shell command that
    /// exits 0; $MEMORCH_APP_PID is the program's pid).
    #[serde(default)]
    pub ready: Option<String>,
    /// What bringing a real program to the front does: `line:TEXT` (write TEXT to its input and wait for a line of
    /// output) or `cmd:SHELL` (as for ready). The visit's latency is its duration; without it a visit only finds the
    /// program alive.
    #[serde(default)]
    pub resume: Option<String>,
    /// A cache of this many MiB besides the heap (synthetic apps), which the app drops when the manager tells it to
    /// trim (memorch's trim notices; peers tell nothing) and builds again on its next visit.
    #[serde(default)]
    pub cache_mb: u64,
    /// A shared object of its own of this many MiB (synthetic apps), relocated (written once) at start and never
    /// touched again: SWAM's unshared SO pages.
    #[serde(default)]
    pub so_mb: u64,
    /// Work in the background every this many ms while not in front (synthetic apps; SWAM §3.2: apps run in the
    /// background, and use memory, even while the device idles).
    #[serde(default)]
    pub background_ms: u64,
    /// false: launched once at the start and never visited again (what holds memory before the test, as SWAM's 256 MB
    /// consumed first).
    #[serde(default = "yes")]
    pub visited: bool,
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
fn default_switches() -> f64 {
    5.46
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

/// A scenario shipped with memorch: its name, its text, and its assets (each a path and its text).
pub type BuiltIn = (&'static str, &'static str, &'static [(&'static str, &'static str)]);

/// The scenarios shipped with memorch.
pub const BUILT_IN: [BuiltIn; 11] = [
    ("quick", include_str!("../../../scenarios/quick.toml"), &[]),
    ("mos26", include_str!("../../../scenarios/mos26.toml"), &[]),
    ("thesis", include_str!("../../../scenarios/thesis.toml"), &[]),
    ("thesis-ksm", include_str!("../../../scenarios/thesis-ksm.toml"), &[]),
    ("thesis-fish", include_str!("../../../scenarios/thesis-fish.toml"), &[]),
    ("swam40", include_str!("../../../scenarios/swam40.toml"), &[]),
    ("sessions", include_str!("../../../scenarios/sessions.toml"), &[]),
    ("trim", include_str!("../../../scenarios/trim.toml"), &[]),
    ("refault", include_str!("../../../scenarios/refault.toml"), &[]),
    ("meego", include_str!("../../../scenarios/meego.toml"), &[]),
    ("realapps", include_str!("../../../scenarios/realapps.toml"), REALAPPS_ASSETS),
];

/// The real programs' code and data generator of `realapps`.
const REALAPPS_ASSETS: &[(&str, &str)] = &[
    ("gen.py", include_str!("../../../scenarios/realapps/gen.py")),
    ("app.py", include_str!("../../../scenarios/realapps/app.py")),
    ("app.js", include_str!("../../../scenarios/realapps/app.js")),
    ("App.java", include_str!("../../../scenarios/realapps/App.java")),
    ("touch.lua", include_str!("../../../scenarios/realapps/touch.lua")),
];

/// Where generated scenario data is cached (`{data}`), one directory a scenario version.
pub const DATA_ROOT: &str = "/var/cache/memorch/scenarios";

impl Scenario {
    /// A built-in name or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Scenario, String> {
        let built_in = || BUILT_IN.map(|b| b.0).join(", ");
        let (text, origin, assets) = match BUILT_IN.iter().find(|(n, _, _)| *n == name_or_path) {
            Some((_, t, a)) => (
                t.to_string(),
                format!("built-in scenario '{name_or_path}'"),
                if a.is_empty() { Assets::None } else { Assets::Embedded(a) },
            ),
            None => {
                let t = std::fs::read_to_string(name_or_path)
                    .map_err(|e| format!("scenario '{name_or_path}': {e} (built in: {})", built_in()))?;
                let path = std::path::absolute(name_or_path).map_err(|e| format!("scenario '{name_or_path}': {e}"))?;
                (t, name_or_path.to_string(), Assets::Dir(path.parent().unwrap_or(Path::new("/")).to_path_buf()))
            }
        };
        let mut s = Scenario::parse(&text).map_err(|e| format!("{origin}: {e}"))?;
        // The generated data depends on the prepare steps and the assets only.
        let mut h = 0x5ca1_ab1e_u64;
        let mut mix = |bytes: &[u8]| {
            bytes
                .chunks(8)
                .for_each(|c| h = crate::content::splitmix(h ^ c.iter().fold(0u64, |a, &b| a << 8 | b as u64)))
        };
        for p in &s.prepare {
            mix(p.creates.as_bytes());
            p.command.iter().for_each(|a| mix(a.as_bytes()));
        }
        if let Assets::Embedded(files) = &assets {
            files.iter().for_each(|(n, t)| {
                mix(n.as_bytes());
                mix(t.as_bytes());
            });
        }
        s.assets = assets;
        s.fingerprint = h;
        Ok(s)
    }

    /// Where this scenario's generated data is cached.
    pub fn data_dir(&self) -> PathBuf {
        Path::new(DATA_ROOT).join(format!("{}-{:016x}", self.name, self.fingerprint))
    }

    /// Whether any app is a real program.
    pub fn has_real_programs(&self) -> bool {
        self.apps.iter().any(|a| !a.command.is_empty())
    }

    pub fn parse(text: &str) -> Result<Scenario, String> {
        let s: Scenario = toml::from_str(text).map_err(|e| {
            e.to_string()
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('|'))
                .collect::<Vec<_>>()
                .join(": ")
        })?;
        if s.apps.is_empty() {
            return Err("no [[apps]]".into());
        }
        for a in &s.apps {
            check_app(a)?;
        }
        for v in &s.visits.sequence {
            if v != IDLE && !s.apps.iter().any(|a| a.name == *v) {
                return Err(format!("visits.sequence names '{v}', which is not an app"));
            }
        }
        if s.visits.sessions > 0 && !(0.0..=100.0).contains(&s.visits.session_switches) {
            return Err(format!("visits.session_switches = {}: must be within 0..=100", s.visits.session_switches));
        }
        for p in &s.prepare {
            if p.command.is_empty() || p.creates.is_empty() {
                return Err("[[prepare]] needs a command and the path it creates".into());
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
            a.so_mb = (a.so_mb as f64 * f).round() as u64;
        }
        s
    }
}

/// `{key}` in `text` replaced by each value.
pub fn expand(text: &str, vars: &[(&str, &str)]) -> String {
    vars.iter().fold(text.to_string(), |t, (k, v)| t.replace(&format!("{{{k}}}"), v))
}

/// A command's program as an absolute path: a bare name is looked up on PATH (it must be installed), a relative path is
/// taken from `base` (the scenario's directory).
pub fn resolve_program(program: &str, base: &Path) -> Result<PathBuf, String> {
    if program.contains('/') {
        let p = base.join(program);
        return if p.is_file() { Ok(p) } else { Err(format!("{} does not exist", p.display())) };
    }
    memorch_linux::which::on_path(program).ok_or_else(|| {
        format!("'{program}' is not installed (not on PATH): ./scripts/setup installs what the built-in scenarios run")
    })
}

/// An app of a scenario file, checked: its name, content, working set, class in the background, and how a real program
/// says it is up.
fn check_app(a: &AppDef) -> Result<(), String> {
    if a.name.is_empty() || a.name.len() > 15 {
        return Err(format!("app name '{}' must be 1 to 15 bytes (it becomes the process name)", a.name));
    }
    if !["text", "zero", "same", "random", "shared", "mixed"].contains(&a.content.as_str()) {
        return Err(format!(
            "app '{}': content '{}' is not text, zero, same, random, shared or mixed",
            a.name, a.content
        ));
    }
    if !(0.0..=1.0).contains(&a.working_set) {
        return Err(format!("app '{}': working_set {} must be within 0..=1", a.name, a.working_set));
    }
    if let Some(b) = &a.background {
        match memorch_core::Class::from_name(b) {
            Some(c) if c.oom_score_adj() >= memorch_core::Class::Visible.oom_score_adj() => {}
            _ => {
                return Err(format!(
                    "app '{}': background = {b:?}: use visible, perceptible, service, home, previous, cached or empty",
                    a.name
                ))
            }
        }
    }
    for (key, v) in [("ready", &a.ready), ("resume", &a.resume)] {
        if v.as_deref().is_some_and(|p| Probe::parse(p).is_none()) {
            return Err(format!(
                "app '{}': {key} = {:?}: use \"line:TEXT\" or \"cmd:SHELL\"",
                a.name,
                v.as_deref().unwrap_or_default()
            ));
        }
    }
    if a.command.is_empty() && (a.ready.is_some() || a.resume.is_some()) {
        return Err(format!("app '{}': ready and resume are for real programs: give its command too", a.name));
    }
    if !a.command.is_empty() && a.ready.is_none() {
        return Err(format!(
            "app '{}': a real program needs ready = \"line:TEXT\" or \"cmd:SHELL\" to tell when it is up",
            a.name
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "scenario_tests.rs"]
mod tests;
