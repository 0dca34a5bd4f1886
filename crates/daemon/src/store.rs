//! Learned app statistics on disk: one small JSON file in the state directory, written atomically. A corrupt file is
//! kept aside with a warning and the daemon starts fresh.

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

/// The most a statistics file may hold: [`memorch_core::engine::stats::MAX_APPS`] apps take a few hundred KiB; anything
/// far larger was not written by memorch.
const MAX_FILE_BYTES: u64 = 8 << 20;

/// Load what was learned. Returns the stats and, if the file was unusable, where it was put (`read_only`, a dry run's:
/// left where it is, and `None`).
pub fn load(state_dir: &Path, read_only: bool) -> (Stats, Option<PathBuf>) {
    let p = path(state_dir);
    let Ok(meta) = std::fs::metadata(&p) else { return (Stats::default(), None) };
    if !meta.is_file() {
        tracing::warn!(file = %p.display(), "the statistics file is not a regular file: remove it, or nothing learned will be kept");
        return (Stats::default(), None);
    }
    // Bytes, not text: a file that is not even UTF-8 is as corrupt as bad JSON, and is kept. Past the bound it is not
    // read at all (kept aside below as unreadable).
    let bytes = if meta.len() <= MAX_FILE_BYTES { std::fs::read(&p).unwrap_or_default() } else { Vec::new() };
    match serde_json::from_slice::<File>(&bytes) {
        Ok(mut f) if f.version == 1 => {
            f.stats.keep_most_recent();
            (f.stats, None)
        }
        _ if read_only => {
            tracing::warn!(file = %p.display(), "learned app statistics are unreadable; starting fresh (a dry run leaves the file as it is)");
            (Stats::default(), None)
        }
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
        assert_eq!(load(&dir, false), (s, None));
        std::fs::write(path(&dir), "{ half a file").unwrap();
        assert_eq!(load(&dir, true), (Stats::default(), None));
        assert_eq!(std::fs::read_to_string(path(&dir)).unwrap(), "{ half a file", "a dry run moves nothing");
        let (fresh, aside) = load(&dir, false);
        assert_eq!(fresh, Stats::default());
        let aside = aside.unwrap();
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), "{ half a file", "the bad file is kept");
        assert!(!path(&dir).exists());
        // Random bytes (not UTF-8) are kept aside too, never silently overwritten.
        let noise: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 | 0x80).collect();
        std::fs::write(path(&dir), &noise).unwrap();
        let (fresh, aside) = load(&dir, false);
        assert_eq!(fresh, Stats::default());
        assert_eq!(std::fs::read(aside.expect("kept aside")).unwrap(), noise);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_a_huge_file_and_too_many_apps_neither_stall_nor_stop_the_daemon() {
        use memorch_core::engine::stats::MAX_APPS;
        let dir = std::env::temp_dir().join(format!("memorch-store-edge-{}", std::process::id()));
        std::fs::create_dir_all(path(&dir)).unwrap();
        assert_eq!(load(&dir, false), (Stats::default(), None), "a directory is left alone");
        let err = save(&dir, &Stats::default()).unwrap_err().to_string();
        assert!(err.contains("app-stats.json"), "{err}");
        assert!(!dir.join("app-stats.tmp").exists(), "a failed save leaves no temporary file");
        std::fs::remove_dir(path(&dir)).unwrap();
        std::fs::write(path(&dir), vec![b' '; (MAX_FILE_BYTES + 1) as usize]).unwrap();
        let (fresh, aside) = load(&dir, false);
        assert!(fresh.apps.is_empty() && aside.is_some(), "a file past the bound is kept aside unread");
        let mut many = Stats::default();
        for i in 0..4 * MAX_APPS {
            many.apps.insert(format!("app{i}"), Default::default());
            many.apps.get_mut(&format!("app{i}")).unwrap().touched = i as u64;
        }
        save(&dir, &many).unwrap();
        let (kept, _) = load(&dir, false);
        assert_eq!(kept.apps.len(), MAX_APPS);
        assert!(
            kept.get(&format!("app{}", 4 * MAX_APPS - 1)).is_some() && kept.get("app0").is_none(),
            "the most recent kept"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
