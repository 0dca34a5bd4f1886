//! Margins and trim levels (issue 14): where, in available memory, the preset starts to do harm (compress apps: the
//! moderate margin) and to kill (the critical margin), as ChromeOS's resourced serves them to the browser, and the
//! levels of notice apps get before either, as Android's `onTrimMemory` and the freedesktop low-memory-monitor send
//! them. The engine decides on the same figures it serves, so an app that acts on them acts first.

pub use super::model::TrimLevel;
use super::preset::{Detection, Preset};
use serde::{Deserialize, Serialize};

/// Available memory below which the preset compresses (moderate) and kills (critical).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Margins {
    pub critical_bytes: u64,
    pub moderate_bytes: u64,
}

impl Margins {
    /// The preset's margins in a domain of `total_bytes`. memorch's bands are available memory already; the LMK's
    /// minfree levels and lmkd's watermarks are free memory, the nearest figure they have; with no detection (the
    /// kernel alone) both are zero.
    pub fn of(preset: &Preset, total_bytes: u64) -> Margins {
        let frac = |f: f64| (total_bytes as f64 * f) as u64;
        match &preset.detection {
            Detection::None => Margins { critical_bytes: 0, moderate_bytes: 0 },
            Detection::Bands(b) => {
                Margins { critical_bytes: frac(b.critical_available_frac), moderate_bytes: frac(b.low_available_frac) }
            }
            Detection::Psi(l) => {
                Margins { critical_bytes: frac(l.wmark_min_frac), moderate_bytes: frac(l.wmark_high_frac) }
            }
            Detection::Minfree(m) => {
                let levels = m.scaled(total_bytes);
                let first_kill = levels.iter().map(|(_, b)| *b).max().unwrap_or(0);
                let slight =
                    preset.compaction.as_ref().map_or(0, |c| m.scale(c.slight_pressure_pages_at_1gib, total_bytes));
                Margins { critical_bytes: first_kill, moderate_bytes: slight.max(first_kill) }
            }
        }
    }

    /// What an app or the system should give back to be clear of the moderate margin.
    pub fn reclaim_target(&self, available_bytes: u64) -> u64 {
        self.moderate_bytes.saturating_sub(available_bytes)
    }

    /// The notice level at this much available memory: moderate half a margin before compression begins, low where it
    /// begins, critical a quarter of the way from there to the kill margin (so apps hear of each before it happens).
    pub fn trim_level(&self, available_bytes: u64) -> Option<TrimLevel> {
        let (c, m) = (self.critical_bytes, self.moderate_bytes);
        if m == 0 {
            return None;
        }
        if available_bytes < c + (m.saturating_sub(c)) / 4 {
            Some(TrimLevel::Critical)
        } else if available_bytes < m {
            Some(TrimLevel::Low)
        } else if available_bytes < m + m / 2 {
            Some(TrimLevel::Moderate)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memorch_levels_come_before_its_compression_and_kill_margins() {
        let p = Preset::by_name("memorch").unwrap();
        let total = 1000 << 20;
        let m = Margins::of(&p, total);
        assert_eq!((m.critical_bytes, m.moderate_bytes), ((total as f64 * 0.05) as u64, (total as f64 * 0.12) as u64));
        assert_eq!(m.trim_level(m.moderate_bytes * 2), None);
        assert_eq!(m.trim_level(m.moderate_bytes + 1), Some(TrimLevel::Moderate), "before compression begins");
        assert_eq!(m.trim_level(m.moderate_bytes - 1), Some(TrimLevel::Low));
        assert_eq!(m.trim_level(m.critical_bytes + 1), Some(TrimLevel::Critical), "before the kill margin");
        assert_eq!(m.reclaim_target(m.moderate_bytes - 5), 5);
        assert_eq!(m.reclaim_target(m.moderate_bytes + 5), 0);
        assert_eq!(
            Margins::of(&Preset::by_name("kernel").unwrap(), total).trim_level(0),
            None,
            "no margins, no notices"
        );
    }
}
