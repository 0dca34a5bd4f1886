//! Presets by spec, a user's own files included: `NAME`, `NAME:key=value,…` (a shipped preset or a variant of it) or
//! `file:PATH` (a TOML file in the shipped presets' form, named by its file stem). The pure engine parses; reading the
//! file is here.

use memorch_core::engine::Preset;
use std::io::Read;
use std::path::Path;

/// A preset file larger than this is not one (the largest shipped is ~6 KiB).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The preset a spec names, or why not (the file, and the key and line where it is wrong).
pub fn load(spec: &str) -> Result<Preset, String> {
    match spec.strip_prefix("file:") {
        Some(path) => parse_file(path, &read(Path::new(path))?),
        None => Preset::from_spec(spec),
    }
}

/// The preset in `text`, read from the file at `path`, named by the file's stem.
fn parse_file(path: &str, text: &str) -> Result<Preset, String> {
    let stem = Path::new(path).file_stem().map_or("file".into(), |s| s.to_string_lossy().into_owned());
    Preset::from_toml(&format!("file:{stem}"), text).map_err(|e| {
        format!("preset file {path}: {e}\n(`memorch presets show memorch` prints a file of the right form)")
    })
}

/// The text `presets show` prints for a spec: the file itself, and a variant's changes after it.
pub fn text(spec: &str) -> Result<String, String> {
    if let Some(path) = spec.strip_prefix("file:") {
        let text = read(Path::new(path))?;
        parse_file(path, &text)?;
        return Ok(text);
    }
    let p = Preset::from_spec(spec)?;
    let base = Preset::file_text(p.base_name()).ok_or_else(|| format!("no preset file for '{}'", p.base_name()))?;
    let changes = spec.split_once(':').map(|(_, c)| c).unwrap_or("");
    let mut out = base.to_string();
    if !changes.is_empty() {
        out.push_str(&format!("\n# The variant {spec} changes:\n"));
        for kv in changes.split(',') {
            out.push_str(&format!("#   {kv}\n"));
        }
    }
    Ok(out)
}

fn read(path: &Path) -> Result<String, String> {
    read_bounded(path, "a preset").map_err(|e| format!("preset file {}: {e}", path.display()))
}

/// A text file of at most [`MAX_FILE_BYTES`], read without reading more: a config or preset named by mistake
/// (`/dev/zero`, a disk image) is refused, never read whole into memory. The error says what is wrong, not which file:
/// the caller names it.
pub fn read_bounded(path: &Path, is: &str) -> Result<String, String> {
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    f.take(MAX_FILE_BYTES + 1).read_to_string(&mut text).map_err(|e| format!("{e} ({is} is UTF-8 TOML)"))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("larger than {} KiB: not {is}", MAX_FILE_BYTES >> 10));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_file_runs_as_the_shipped_one_does_and_a_bad_one_names_its_line() {
        let dir = memorch_linux::testkit::TempDir::new("memorch-preset-file");
        let shipped = Preset::file_text("memorch").unwrap();
        let mine = dir.0.join("mine.toml");
        std::fs::write(&mine, shipped.replace("zram_pct = 50.0", "zram_pct = 25.0")).unwrap();
        let p = load(&format!("file:{}", mine.display())).unwrap();
        assert_eq!((p.name.as_str(), p.swap.zram_pct), ("file:mine", Some(25.0)));
        assert_eq!(p.kill, Preset::by_name("memorch").unwrap().kill, "the rest as shipped");
        std::fs::write(&mine, shipped.replace("[swap]", "[swap]\nbogus = 1")).unwrap();
        let e = load(&format!("file:{}", mine.display())).unwrap_err();
        assert!(e.contains("mine.toml") && e.contains("bogus") && e.contains("line"), "{e}");
        let e = load("file:/nonexistent/x.toml").unwrap_err();
        assert!(e.contains("/nonexistent/x.toml") && e.contains("No such file"), "{e}");
        assert!(text("memorch:ahead=off").unwrap().ends_with("#   ahead=off\n"));
    }
}
