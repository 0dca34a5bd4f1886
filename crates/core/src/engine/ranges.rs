//! The values a preset's types allow but the engine cannot use, refused with their key: a share, a percentage or a page
//! count out of its range, bands out of order, a nice value that is none.

use super::preset::{Detection, Preset};

/// The most a `_pct` key may be, where it is not 100: zram and storage swap may be larger than RAM, and lmkd's
/// thrashing limits count refaults against the file cache.
const PCT_ABOVE_100: [(&str, f64); 3] = [("zram_pct", 400.0), ("storage_pct", 400.0), ("thrashing_", 1000.0)];

/// A number is refused by its key's kind: a share (`_frac`) is 0 or from a millionth to 1, a percentage (`_pct`) from 0
/// to 100 (see [`PCT_ABOVE_100`]), a page count (`_pages`) at least 1.
fn check_range(key: &str, v: f64) -> Result<(), String> {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let pct_max = PCT_ABOVE_100.iter().find(|(k, _)| leaf.starts_with(k)).map_or(100.0, |(_, m)| *m);
    let why = if leaf.ends_with("_frac") {
        (v != 0.0 && !(1e-6..=1.0).contains(&v)).then(|| "a share of the domain: give 0, or 0.000001 to 1".to_string())
    } else if leaf.ends_with("_pct") {
        (!(0.0..=pct_max).contains(&v)).then(|| format!("a percentage: give 0 to {pct_max}"))
    } else if leaf.ends_with("_pages") {
        (v < 1.0).then(|| "a number of pages: give at least 1".to_string())
    } else {
        None
    };
    why.map_or(Ok(()), |why| Err(format!("{key} is {why} ({v} given)")))
}

impl Preset {
    /// Values a type allows but the engine cannot use (the type alone is checked by serde).
    pub fn check_ranges(&self) -> Result<(), String> {
        if let Some(n) = self.work_nice.filter(|n| !(-20..=19).contains(n)) {
            return Err(format!("work_nice is the nice value the daemon's background memory work runs at: give -20 to 19 (0 is the apps' own), or null for the daemon's own ({n} given)"));
        }
        // The bands free what is short in bytes: their pressure step takes no fixed step.
        let unused = |k: &str| k == "compaction.step_pages" && matches!(self.detection, Detection::Bands(_));
        for (key, value) in self.parameters().into_iter().filter(|(k, _)| !unused(k)) {
            if let Ok(v) = value.parse::<f64>() {
                check_range(&key, v)?;
            }
        }
        if let Detection::Bands(b) = &self.detection {
            let order = [b.extreme_available_frac, b.critical_available_frac, b.low_available_frac];
            if !order.windows(2).all(|w| w[0] < w[1]) || b.kill_target_frac < b.critical_available_frac {
                return Err(format!("detection: the bands must rise extreme < critical < low, and kill_target_frac be at least critical ({} < {} < {}, target {} given)", order[0], order[1], order[2], b.kill_target_frac));
            }
        }
        Ok(())
    }
}
