//! Preset specs: `PRESET[:key=value,…]`, a preset with some of its ladder steps switched off or some parameters
//! changed, so that every step can be measured by leaving it out (`memorch bench --managers
//! memorch,memorch:ahead=off`). A key is either a *switch* (a ladder step by name, `on` or `off`) or a *parameter* (a
//! dotted key of the preset as `memorch presets show NAME` lists them, with a JSON value).

use super::preset::{KillMode, Preset, BASELINES, NAMES};
use crate::Class;

/// A ladder step that a spec can switch on or off.
pub struct Switch {
    pub key: &'static str,
    pub what: &'static str,
    /// Whether the step is on in this preset; `None` when the preset has no such step.
    pub get: fn(&Preset) -> Option<bool>,
    /// Turn it on or off; only called when `get` gave `Some`.
    pub set: fn(&mut Preset, bool),
}

/// Every switch, in ladder order.
pub const SWITCHES: [Switch; 13] = [
    Switch {
        key: "idle",
        what: "prepare while idle: compress whole cached apps with the screen off",
        get: |p| p.compaction.as_ref().map(|c| c.idle_min_class.is_some()),
        set: |p, on| {
            if let Some(c) = &mut p.compaction {
                c.idle_min_class = on.then_some(Class::Cached);
            }
        },
    },
    Switch {
        key: "ksm",
        what: "KSM over background apps at idle",
        get: |p| Some(p.ksm.is_some()),
        set: |p, on| {
            if !on {
                p.ksm = None;
            } else if p.ksm.is_none() {
                p.ksm = Some(super::preset::KsmPolicy { idle_targeted: true, pages_to_scan: 1000, min_saving_frac: None, once: false });
            }
        },
    },
    Switch {
        key: "ahead",
        what: "reclaim ahead: at home, free memory up to the launch threshold; before a launch, its learned peak (MOS phases 1 and 2)",
        get: |p| Some(p.ahead.is_some()),
        set: |p, on| {
            if !on {
                p.ahead = None;
            }
        },
    },
    Switch {
        key: "pressure",
        what: "under pressure, compress background apps in steps",
        get: |p| p.compaction.as_ref().map(|c| c.pressure_min_class.is_some()),
        set: |p, on| {
            if let Some(c) = &mut p.compaction {
                c.pressure_min_class = on.then_some(Class::Service);
            }
        },
    },
    Switch { key: "so_first", what: "shared-object pages only one app maps first (SWAM OOM cleaner)", get: |p| p.compaction.as_ref().map(|c| c.shared_objects_first), set: |p, on| p.compaction.iter_mut().for_each(|c| c.shared_objects_first = on) },
    Switch { key: "swap_files", what: "storage swap files on demand (SWAM adaptive swap)", get: |p| Some(p.swap.swap_files), set: |p, on| p.swap.swap_files = on },
    Switch { key: "app_groups", what: "a memory group for each app it launches, so its coldest pages go first", get: |p| Some(p.app_groups), set: |p, on| p.app_groups = on },
    Switch {
        key: "freeze",
        what: "freeze apps cached for a while (cgroup v2), thaw them before they come back",
        get: |p| Some(p.freeze_after_ms.is_some()),
        set: |p, on| p.freeze_after_ms = if on { p.freeze_after_ms.or(Some(super::preset::FREEZE_AFTER_MS)) } else { None },
    },
    Switch {
        key: "whole",
        what: "read the app in front back whole once its return is served, a piece a decision, down to the critical band",
        // It reads down to the critical band of the bands (ladder/prefetch.rs).
        get: |p| matches!(p.detection, super::preset::Detection::Bands(_)).then_some(p.prefetch_whole),
        set: |p, on| p.prefetch_whole = on,
    },
    Switch { key: "trim", what: "tell apps that listen to trim before compressing or killing", get: |p| Some(p.trim_notices), set: |p, on| p.trim_notices = on },
    Switch { key: "zram", what: "zram set up by the preset (off: no swap at all)", get: |p| Some(p.swap.zram_pct.is_some()), set: |p, on| p.swap.zram_pct = if on { p.swap.zram_pct.or(Some(50.0)) } else { None } },
    Switch {
        key: "sessions",
        what: "judge how likely a return is by usage sessions (in the one in progress, share of sessions used in) instead of recency and front counts",
        // It weighs what orders compressions and kills by the chance of a return: memorch's.
        get: |p| (p.kill.order == super::victims::VictimOrder::LeastExpectedCost).then_some(p.kill.return_by_sessions),
        set: |p, on| p.kill.return_by_sessions = on,
    },
    Switch {
        key: "kill",
        what: "the preset's own kills (off: the kernel's OOM killer only)",
        get: |p| Some(p.kill.mode != KillMode::Never),
        set: |p, on| {
            if !on {
                p.kill.mode = KillMode::Never;
            }
        },
    },
];

impl Preset {
    /// A preset by spec: `NAME` or `NAME:key=value,…` (see the module's doc). The result is named by the whole spec, so
    /// runs of variants are told apart.
    pub fn from_spec(spec: &str) -> Result<Preset, String> {
        let (name, overrides) = match spec.split_once(':') {
            Some((n, o)) => (n, Some(o)),
            None => (spec, None),
        };
        let mut p = Preset::by_name(name).ok_or_else(|| {
            format!(
                "no preset '{name}': choose one of {} (or a paper's baseline: {})",
                NAMES.join(", "),
                BASELINES.join(", ")
            )
        })?;
        let Some(overrides) = overrides else { return Ok(p) };
        if overrides.trim().is_empty() {
            return Err(format!(
                "'{spec}': nothing after ':' (give key=value,…; 'memorch presets show {name}' lists the keys)"
            ));
        }
        for item in overrides.split(',') {
            let (key, value) = item.split_once('=').map(|(k, v)| (k.trim(), v.trim())).ok_or_else(|| {
                format!("'{item}' in '{spec}': write key=value ('memorch presets show {name}' lists the keys)")
            })?;
            match SWITCHES.iter().find(|s| s.key == key) {
                Some(s) => apply_switch(&mut p, s, value)?,
                None => apply_parameter(&mut p, key, value)?,
            }
        }
        p.name = spec.to_string();
        Ok(p)
    }

    /// The name of the paper's preset a spec is a variant of (`memorch:ahead=off` → `memorch`).
    pub fn base_name(&self) -> &str {
        self.name.split(':').next().unwrap_or(&self.name)
    }

    /// The preset's parameters as `(dotted key, JSON value)`, as a spec names them.
    pub fn parameters(&self) -> Vec<(String, String)> {
        let mut out = dotted_keys(&serde_json::to_value(self).unwrap_or_default());
        out.retain(|(k, _)| k != "name" && k != "summary");
        out
    }
}

fn apply_switch(p: &mut Preset, s: &Switch, value: &str) -> Result<(), String> {
    let on = match value {
        "on" | "true" => true,
        "off" | "false" => false,
        _ => return Err(format!("{}={value}: a step is 'on' or 'off'", s.key)),
    };
    match (s.get)(p) {
        None if on => Err(format!("{}={value}: {} has no such step to switch on ({})", s.key, p.name, s.what)),
        None => Ok(()),
        Some(_) => {
            (s.set)(p, on);
            // A switch that cannot turn on here (a preset without that step's settings) is refused rather than ignored.
            match (s.get)(p) {
                Some(now) if now != on => Err(format!(
                    "{}={value}: {} cannot switch this step {} ({}); give a preset that has it",
                    s.key,
                    p.name,
                    if on { "on" } else { "off" },
                    s.what
                )),
                _ => Ok(()),
            }
        }
    }
}

fn apply_parameter(p: &mut Preset, key: &str, value: &str) -> Result<(), String> {
    let known = p.parameters();
    if !known.iter().any(|(k, _)| k == key) {
        let switches: Vec<&str> = SWITCHES.iter().map(|s| s.key).collect();
        return Err(format!(
            "'{key}' is neither a step ({}) nor a parameter of {} ('memorch presets show {}' lists them)",
            switches.join(", "),
            p.name,
            p.base_name()
        ));
    }
    let mut v = serde_json::to_value(&*p).map_err(|e| e.to_string())?;
    let slot =
        key.split('.').try_fold(&mut v, |node, part| node.get_mut(part)).ok_or_else(|| format!("'{key}' not found"))?;
    // A yes/no parameter takes the words a step takes (`prefetch_whole=off`, as `whole=off`); else JSON where it parses
    // (numbers, true, null, "…"), else the text as a string (a class name).
    let new = match value {
        "on" | "off" if slot.is_boolean() => serde_json::Value::Bool(value == "on"),
        _ => serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_string())),
    };
    *slot = new;
    let changed: Preset = serde_json::from_value(v).map_err(|e| format!("{key}={value}: {e}"))?;
    changed.check_ranges().map_err(|e| format!("{key}={value}: {e}"))?;
    *p = changed;
    Ok(())
}

/// Every leaf of a JSON tree as `(dotted key, JSON value)`, in the tree's order: `{"a":{"b":1}}` → `("a.b", "1")`.
/// Preset specs and the daemon's config diff both name keys so.
pub fn dotted_keys(v: &serde_json::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    flatten("", v, &mut out);
    out
}

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, x, out);
            }
        }
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_name_is_the_preset() {
        assert_eq!(Preset::from_spec("lmkd").unwrap(), Preset::by_name("lmkd").unwrap());
        assert!(Preset::from_spec("nope").unwrap_err().contains("choose one of"));
    }

    #[test]
    fn switches_turn_steps_off_and_name_the_variant() {
        let p = Preset::from_spec("memorch:ahead=off,whole=off").unwrap();
        assert_eq!(p.name, "memorch:ahead=off,whole=off");
        assert_eq!(p.base_name(), "memorch");
        assert!(p.ahead.is_none() && !p.prefetch_whole);
        let p = Preset::from_spec("memorch:idle=off,pressure=off,ksm=off,kill=off").unwrap();
        let c = p.compaction.unwrap();
        assert_eq!((c.idle_min_class, c.pressure_min_class), (None, None));
        assert!(p.ksm.is_none());
        assert_eq!(p.kill.mode, KillMode::Never);
        // A step the preset does not have: off is a no-op, on is an error.
        assert!(Preset::from_spec("lmkd:whole=off").is_ok());
        assert!(Preset::from_spec("lmkd:whole=on").unwrap_err().contains("no such step"));
        assert!(Preset::from_spec("lmkd:ahead=on").unwrap_err().contains("cannot switch this step on"));
        // The freezer is an opt-in feature: on in no preset, a switch all the same.
        assert_eq!(
            Preset::from_spec("memorch:freeze=on").unwrap().freeze_after_ms,
            Some(super::super::preset::FREEZE_AFTER_MS)
        );
        assert!(Preset::from_spec("memorch:ahead=maybe").unwrap_err().contains("'on' or 'off'"));
    }

    #[test]
    fn parameters_take_json_values_and_keep_their_types() {
        let p = Preset::from_spec("memorch:compaction.step_pages=64,detection.low_available_frac=0.15").unwrap();
        assert_eq!(p.compaction.as_ref().unwrap().step_pages, 64);
        assert_eq!(p.parameters().iter().find(|(k, _)| k == "detection.low_available_frac").unwrap().1, "0.15");
        let p = Preset::from_spec("memorch:compaction.pressure_min_class=cached").unwrap();
        assert_eq!(p.compaction.unwrap().pressure_min_class, Some(Class::Cached));
        let e = Preset::from_spec("memorch:compaction.step_pages=lots").unwrap_err();
        assert!(e.contains("compaction.step_pages=lots"), "{e}");
        let e = Preset::from_spec("memorch:bogus=1").unwrap_err();
        assert!(e.contains("neither a step") && e.contains("presets show memorch"), "{e}");
        assert!(Preset::from_spec("memorch:").unwrap_err().contains("nothing after"));
        assert!(Preset::from_spec("memorch:ahead").unwrap_err().contains("key=value"));
        // A yes/no parameter takes on/off as a step does; a number does not.
        assert!(!Preset::from_spec("memorch:prefetch_whole=off").unwrap().prefetch_whole);
        assert!(Preset::from_spec("memorch:prefetch_whole=false,prefetch_whole=on").unwrap().prefetch_whole);
        assert!(Preset::from_spec("memorch:compaction.step_pages=off")
            .unwrap_err()
            .contains("compaction.step_pages=off"));
    }

    #[test]
    fn a_nice_value_must_be_one() {
        let p = Preset::from_spec("memorch:work_nice=0").unwrap();
        assert_eq!(p.work_nice, Some(0));
        assert_eq!(Preset::from_spec("memorch:work_nice=null").unwrap().work_nice, None);
        let e = Preset::from_spec("memorch:work_nice=20").unwrap_err();
        assert!(e.contains("work_nice") && e.contains("-20 to 19"), "{e}");
    }

    #[test]
    fn a_variant_out_of_range_or_a_switch_that_cannot_turn_on_is_refused() {
        for (spec, says) in [
            ("kernel:kill=on", "cannot switch this step on"),
            ("memorch:detection.critical_available_frac=0.9", "extreme < critical < low"),
            ("memorch:detection.psi_full_kill_pct=1000", "give 0 to 100"),
            ("memorch:detection.psi_full_kill_pct=-5", "give 0 to 100"),
            ("thesis:compaction.step_pages=0", "at least 1"),
            ("memorch:ahead.threshold_frac=1e-320", "0.000001 to 1"),
            ("memorch:detection.kill_target_frac=0.01", "kill_target_frac"),
        ] {
            let e = Preset::from_spec(spec).expect_err(spec);
            assert!(e.contains(says), "{spec}: {e}");
        }
        // What a preset may hold still passes: zram above RAM, lmkd's thrashing limits.
        assert!(Preset::from_spec("memorch:swap.zram_pct=150").is_ok());
        assert!(Preset::from_spec("memorch:kill=on").is_ok());
        assert!(Preset::all().iter().all(|p| p.check_ranges().is_ok()));
    }

    #[test]
    fn every_switch_reads_what_it_writes() {
        for name in NAMES.iter().chain(BASELINES.iter()) {
            for s in &SWITCHES {
                let mut p = Preset::by_name(name).unwrap();
                if (s.get)(&p).is_some() {
                    (s.set)(&mut p, false);
                    assert_eq!((s.get)(&p), Some(false), "{name}: {}", s.key);
                }
            }
        }
    }
}
