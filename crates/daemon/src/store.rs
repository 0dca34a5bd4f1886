//! Learned app statistics on disk: one small JSON file in the state directory, written
//! atomically. A corrupt file is kept aside with a warning and the daemon starts fresh.

use memorch_core::engine::Stats;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Serialize, Deserialize)]
struct File {
    version: u32,
    stats: Stats,
}

pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join("app-stats.json")
}

/// Load what was learned. Returns the stats and, if the file was unusable, where it was put.
pub fn load(state_dir: &Path) -> (Stats, Option<PathBuf>) {
    let p = path(state_dir);
    // Bytes, not text: a file that is not even UTF-8 is as corrupt as bad JSON, and is kept.
    let Ok(bytes) = std::fs::read(&p) else { return (Stats::default(), None) };
    match serde_json::from_slice::<File>(&bytes) {
        Ok(f) if f.version == 1 => (f.stats, None),
        _ => {
            let aside = p.with_extension(format!("json.corrupt-{}", std::process::id()));
            let _ = std::fs::rename(&p, &aside);
            tracing::warn!(file = %p.display(), kept_as = %aside.display(), "learned app statistics are unreadable; starting fresh");
            (Stats::default(), Some(aside))
        }
    }
}

pub fn save(state_dir: &Path, stats: &Stats) -> memorch_linux::Result<()> {
    memorch_linux::state::write_json_atomic(&path(state_dir), &File { version: 1, stats: stats.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corrupt_file_kept_aside() {
        let dir = std::env::temp_dir().join(format!("memorch-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = Stats::default();
        s.entry("maps").observe_launch(900, true);
        save(&dir, &s).unwrap();
        assert_eq!(load(&dir), (s, None));
        std::fs::write(path(&dir), "{ half a file").unwrap();
        let (fresh, aside) = load(&dir);
        assert_eq!(fresh, Stats::default());
        let aside = aside.unwrap();
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), "{ half a file", "the bad file is kept");
        assert!(!path(&dir).exists());
        // Random bytes (not UTF-8) are kept aside too, never silently overwritten.
        let noise: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 | 0x80).collect();
        std::fs::write(path(&dir), &noise).unwrap();
        let (fresh, aside) = load(&dir);
        assert_eq!(fresh, Stats::default());
        assert_eq!(std::fs::read(aside.expect("kept aside")).unwrap(), noise);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
