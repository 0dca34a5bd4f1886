//! Small state files written atomically (write a temporary file, fsync, rename), so a crash never leaves half a record.

use crate::error::{Error, Result};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let tmp = path.with_extension("tmp");
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::Other { what: path.display().to_string(), detail: e.to_string() })?;
    let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    f.write_all(text.as_bytes()).and_then(|_| f.sync_all()).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}
