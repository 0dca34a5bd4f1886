//! The daemon's configuration: one TOML file, every key optional with a documented default (`DEFAULTS` is the complete
//! default file, printed by `memorch config --defaults`). An unknown key, a wrong type or a value out of range is an
//! error naming the key and the line; nothing of a bad file is applied.

use memorch_core::engine::preset::Preset;
use memorch_core::engine::spec::dotted_keys;
use memorch_core::Class;
use memorch_linux::DomainSpec;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The complete default configuration, with every key and what it means: the file the package installs as
/// /etc/memorch/memorch.toml, so the two cannot drift apart.
pub const DEFAULTS: &str = include_str!("../../../packaging/memorch.toml");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub preset: String,
    pub domain: String,
    pub dry_run: bool,
    pub socket: PathBuf,
    pub state_dir: PathBuf,
    pub log_format: String,
    #[serde(rename = "loop")]
    pub loop_: LoopConfig,
    pub manage: Manage,
    pub apps: Apps,
    pub control: Control,
    pub notify: Notify,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoopConfig {
    pub tick_ms: u64,
    pub full_snapshot_ms: u64,
    pub psi_some_stall_ms: u64,
    pub psi_full_stall_ms: u64,
    pub psi_window_ms: u64,
    pub lock_memory: bool,
    pub nice: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Manage {
    pub zram: bool,
    pub ksm: bool,
    pub swap_files: bool,
    pub swap_file_dir: PathBuf,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Apps {
    pub protected: Vec<String>,
    pub rules: Vec<Rule>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub name: String,
    pub class: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Control {
    pub uids: Vec<u32>,
}

/// Telling others: the freedesktop D-Bus signal, and the commands around a kill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Notify {
    /// "auto", "on" or "off".
    pub dbus: String,
    pub pre_kill: String,
    pub pre_kill_wait_ms: u64,
    pub post_kill: String,
}

/// The longest a pre-kill hook may hold a kill back.
pub const MAX_PRE_KILL_WAIT_MS: u64 = 5000;

impl Default for Notify {
    fn default() -> Self {
        Notify { dbus: "auto".into(), pre_kill: String::new(), pre_kill_wait_ms: 100, post_kill: String::new() }
    }
}

impl Default for Config {
    /// Must agree with `DEFAULTS` (a test checks).
    fn default() -> Self {
        Config {
            preset: "memorch".into(),
            domain: "system".into(),
            dry_run: false,
            socket: "/run/memorch/memorch.sock".into(),
            state_dir: "/var/lib/memorch".into(),
            log_format: "text".into(),
            loop_: LoopConfig::default(),
            manage: Manage::default(),
            apps: Apps::default(),
            control: Control::default(),
            notify: Notify::default(),
        }
    }
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            tick_ms: 1000,
            full_snapshot_ms: 10_000,
            psi_some_stall_ms: 70,
            psi_full_stall_ms: 700,
            psi_window_ms: 1000,
            lock_memory: true,
            nice: -10,
        }
    }
}

impl Default for Manage {
    fn default() -> Self {
        Manage { zram: true, ksm: true, swap_files: true, swap_file_dir: "/var/lib/memorch/swap".into() }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub message: String,
}

/// A hook's command (run by `sh -c`): where its program is named by a path, that path must be an executable file, or
/// every kill would run a hook that cannot start.
fn check_command(cmd: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let Some(program) = cmd.split_whitespace().next().filter(|p| p.contains('/')) else { return Ok(()) };
    match std::fs::metadata(program) {
        Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => Ok(()),
        Ok(_) => Err(format!("{program} is not an executable file: chmod +x it or name another")),
        Err(e) => Err(format!("{program}: {e}: give the hook's full path")),
    }
}

impl Config {
    /// Parse and validate a whole file; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let cfg: Config =
            toml::from_str(text).map_err(|e| ConfigError { file: file.into(), message: one_line(&e.to_string()) })?;
        cfg.validate(text).map_err(|message| ConfigError { file: file.into(), message })?;
        Ok(cfg)
    }

    /// Every key whose value differs from `other`'s: `(key, this value, other value)`.
    pub fn changes_from(&self, other: &Config) -> Vec<(String, String, String)> {
        let a = dotted_keys(&serde_json::to_value(other).unwrap_or_default());
        let b = dotted_keys(&serde_json::to_value(self).unwrap_or_default());
        a.into_iter().zip(b).filter(|(x, y)| x.1 != y.1).map(|((k, old), (_, new))| (k, old, new)).collect()
    }

    pub fn load(path: &std::path::Path) -> Result<Config, ConfigError> {
        let text = crate::preset_file::read_bounded(path, "a config")
            .map_err(|message| ConfigError { file: path.display().to_string(), message })?;
        Config::parse(&text, &path.display().to_string())
    }

    /// Validate values set after parsing (command-line overrides).
    pub fn check(&self) -> Result<(), String> {
        self.validate("")
    }

    pub fn preset(&self) -> Preset {
        crate::preset_file::load(&self.preset).expect("validated")
    }

    pub fn domain_spec(&self) -> DomainSpec {
        self.domain.parse().expect("validated")
    }

    /// The class a rule gives a process name.
    pub fn rule_class(&self, name: &str) -> Option<Class> {
        self.apps.rules.iter().find(|r| r.name == name).and_then(|r| Class::from_name(&r.class))
    }

    fn validate(&self, text: &str) -> Result<(), String> {
        let at = |section: Option<&str>, key: &str| match line_of(text, section, key) {
            Some(l) => format!("line {l}: "),
            None => String::new(),
        };
        if let Err(e) = crate::preset_file::load(&self.preset) {
            return Err(format!("{}preset = \"{}\": {e}", at(None, "preset"), self.preset));
        }
        if let Err(e) = self.domain.parse::<DomainSpec>() {
            return Err(format!("{}domain: {e}", at(None, "domain")));
        }
        for (key, path) in [("socket", &self.socket), ("state_dir", &self.state_dir)] {
            check_path(key, path).map_err(|e| format!("{}{e}", at(None, key)))?;
        }
        check_path("manage.swap_file_dir", &self.manage.swap_file_dir)
            .map_err(|e| format!("{}{e}", at(Some("manage"), "swap_file_dir")))?;
        if !matches!(self.log_format.as_str(), "text" | "json") {
            return Err(format!(
                "{}log_format = \"{}\": use \"text\" or \"json\"",
                at(None, "log_format"),
                self.log_format
            ));
        }
        self.validate_loop(&at)?;
        if !matches!(self.notify.dbus.as_str(), "auto" | "on" | "off") {
            return Err(format!(
                "{}notify.dbus = \"{}\": use \"auto\", \"on\" or \"off\"",
                at(Some("notify"), "dbus"),
                self.notify.dbus
            ));
        }
        for (key, cmd) in [("pre_kill", &self.notify.pre_kill), ("post_kill", &self.notify.post_kill)] {
            check_command(cmd).map_err(|e| format!("{}notify.{key}: {e}", at(Some("notify"), key)))?;
        }
        if self.notify.pre_kill_wait_ms > MAX_PRE_KILL_WAIT_MS {
            return Err(format!("{}notify.pre_kill_wait_ms = {}: must be within 0..={MAX_PRE_KILL_WAIT_MS} (a kill is held back that long)", at(Some("notify"), "pre_kill_wait_ms"), self.notify.pre_kill_wait_ms));
        }
        for r in &self.apps.rules {
            if Class::from_name(&r.class).is_none_or(|c| c.is_protected()) {
                return Err(format!(
                    "{}apps.rules: class \"{}\" for \"{}\": use foreground, visible, perceptible, service, home, previous, cached or empty",
                    at(Some("apps.rules"), "class"),
                    r.class,
                    r.name
                ));
            }
        }
        Ok(())
    }

    /// The `[loop]` values, each within its range.
    fn validate_loop(&self, at: &dyn Fn(Option<&str>, &str) -> String) -> Result<(), String> {
        let l = &self.loop_;
        let range = |key: &str, v: u64, lo: u64, hi: u64| {
            if v < lo || v > hi {
                Err(format!("{}loop.{key} = {v}: must be within {lo}..={hi}", at(Some("loop"), key)))
            } else {
                Ok(())
            }
        };
        range("tick_ms", l.tick_ms, 100, 60_000)?;
        range("full_snapshot_ms", l.full_snapshot_ms, l.tick_ms, 600_000)?;
        range("psi_window_ms", l.psi_window_ms, 500, 10_000)?;
        range("psi_some_stall_ms", l.psi_some_stall_ms, 1, l.psi_window_ms)?;
        range("psi_full_stall_ms", l.psi_full_stall_ms, 1, l.psi_window_ms)?;
        if !(-20..=19).contains(&l.nice) {
            return Err(format!("{}loop.nice = {}: must be within -20..=19", at(Some("loop"), "nice"), l.nice));
        }
        Ok(())
    }
}

/// A path the daemon keeps: not empty, absolute (the daemon's working directory is not the file's), no NUL.
fn check_path(key: &str, p: &std::path::Path) -> Result<(), String> {
    if p.as_os_str().is_empty() {
        return Err(format!("{key} = \"\": give a path"));
    }
    if !p.is_absolute() {
        return Err(format!("{key} = \"{}\": give an absolute path", p.display()));
    }
    if p.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(format!("{key}: a path cannot hold a NUL byte"));
    }
    Ok(())
}

/// What the command line set over the config file. A reload reads the file again and puts these back on top, so that a
/// SIGHUP never undoes `--dry-run` or `--preset`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    pub preset: Option<String>,
    pub domain: Option<String>,
    pub dry_run: bool,
    pub socket: Option<PathBuf>,
    pub state_dir: Option<PathBuf>,
    pub log_format: Option<String>,
}

impl Overrides {
    pub fn apply(&self, cfg: &mut Config) {
        let set = |slot: &mut String, v: &Option<String>| v.iter().for_each(|v| *slot = v.clone());
        set(&mut cfg.preset, &self.preset);
        set(&mut cfg.domain, &self.domain);
        set(&mut cfg.log_format, &self.log_format);
        cfg.dry_run |= self.dry_run;
        if let Some(v) = &self.socket {
            cfg.socket = v.clone();
        }
        if let Some(v) = &self.state_dir {
            cfg.state_dir = v.clone();
        }
    }
}

/// toml errors span several lines with a source excerpt: keep them to one line.
fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('|') && !l.starts_with('^'))
        .collect::<Vec<_>>()
        .join(": ")
        .replace("::", ":")
}

/// The line (1-based) where `key = …` is set, inside `[section]` if given.
pub fn line_of(text: &str, section: Option<&str>, key: &str) -> Option<usize> {
    let mut current: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix('[') {
            current = Some(h.trim_start_matches('[').trim_end_matches(']').trim().to_string());
            continue;
        }
        let in_section = match section {
            None => current.is_none(),
            Some(s) => current.as_deref() == Some(s),
        };
        if in_section && t.split('=').next().is_some_and(|k| k.trim() == key) && t.contains('=') {
            return Some(i + 1);
        }
    }
    None
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
