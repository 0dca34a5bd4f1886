//! Before a campaign's first run: the scenario made ready (its assets written out, its data generated once, every real
//! program's path absolute) and the synthetic apps' files installed, as a device has its apps installed.

use crate::running;
use crate::scenario::{expand, resolve_program, Assets, Scenario};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

/// The scenario with its assets written out, its data generated (once), `{assets}` and `{data}` filled in and every
/// real program's path absolute: nothing relative may cross into a device.
pub fn scenario(base: &Scenario, out: &Path, say: &dyn Fn(&str)) -> Result<Scenario, String> {
    let mut s = base.clone();
    if !s.has_real_programs() && s.prepare.is_empty() {
        return Ok(s);
    }
    let assets = match &s.assets {
        Assets::Dir(d) => d.clone(),
        Assets::None => out.to_path_buf(),
        Assets::Embedded(files) => {
            let dir = out.join("assets");
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            for (name, text) in files.iter() {
                std::fs::write(dir.join(name), text).map_err(|e| format!("{}: {e}", dir.join(name).display()))?;
            }
            dir
        }
    };
    let data = s.data_dir();
    let (a, d) = (assets.to_string_lossy().into_owned(), data.to_string_lossy().into_owned());
    let vars = [("assets", a.as_str()), ("data", d.as_str())];
    for p in &s.prepare {
        let creates = PathBuf::from(expand(&p.creates, &vars));
        if creates.exists() {
            continue;
        }
        let argv: Vec<String> = p.command.iter().map(|x| expand(x, &vars)).collect();
        say(&format!("generating {} (once; cached in {})", creates.display(), data.display()));
        std::fs::create_dir_all(&data).map_err(|e| format!("{}: {e}", data.display()))?;
        let program = resolve_program(&argv[0], &assets)?;
        let out = Command::new(&program)
            .args(&argv[1..])
            .current_dir(&data)
            .output()
            .map_err(|e| format!("{}: {e}", program.display()))?;
        if !out.status.success() || !creates.exists() {
            return Err(format!(
                "preparing {}: {} {} failed ({}): {}",
                s.name,
                program.display(),
                argv[1..].join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    for app in s.apps.iter_mut().filter(|a| !a.command.is_empty()) {
        let e = |x: &String| expand(x, &vars);
        app.command = app.command.iter().map(e).collect();
        app.command[0] = resolve_program(&app.command[0], &assets)
            .map_err(|err| format!("app '{}': {err}", app.name))?
            .to_string_lossy()
            .into_owned();
        app.ready = app.ready.as_ref().map(e);
        app.resume = app.resume.as_ref().map(e);
    }
    Ok(s)
}

/// Write every synthetic app's code file and shared object into `work` before the first run, as a device has its apps
/// installed (written inside a run, they slow its first launches). Returns how many files the apps map.
pub fn install_synthetic_files(
    scenario: &Scenario,
    work: &Path,
    stop: &AtomicBool,
    say: &dyn Fn(&str),
) -> Result<usize, String> {
    let files: Vec<_> = scenario.apps.iter().flat_map(|a| running::installed_files(a, work)).collect();
    let mib: u64 = files.iter().map(|f| f.mb).sum();
    if !files.is_empty() {
        say(&format!("installing the apps' files: {} files, {mib} MiB in {}", files.len(), work.display()));
    }
    for (i, f) in files.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            return Err(format!(
                "stopped while installing the apps' files ({i} of {} written); no run was started",
                files.len()
            ));
        }
        crate::app::install_file(&f.path, f.mb << 20, scenario.seed + i as u64).map_err(|e| {
            format!(
                "installing {}: {e} (the bench writes the apps' files under --out: is there room?)",
                f.path.display()
            )
        })?;
    }
    Ok(files.len())
}
