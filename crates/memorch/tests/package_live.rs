//! The Debian package, as `scripts/package` builds it from the binaries under test: its
//! contents, its conffile, that it enables nothing, and that what it unpacks runs: the
//! binaries' --help, the config, the man pages (`man -l`), bash completion and the unit
//! (`systemd-analyze verify`). Nothing is installed on the machine: `dpkg-deb -x` into a
//! temporary root.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// cargo-deb and dpkg-deb, and binaries in target/release (what the package takes).
fn can_package() -> bool {
    let bin = Path::new(env!("CARGO_BIN_EXE_memorch"));
    let check = if !bin.parent().is_some_and(|d| d.ends_with("release")) {
        Err(format!("the package takes target/release's binaries; run the tests with --release ({})", bin.display()))
    } else if !Command::new("cargo").args(["deb", "--version"]).output().is_ok_and(|o| o.status.success()) {
        Err("cargo-deb is missing (scripts/setup installs it)".into())
    } else if !Command::new("dpkg-deb").arg("--version").output().is_ok_and(|o| o.status.success()) {
        Err("dpkg-deb is missing".into())
    } else {
        Ok(())
    };
    memorch_linux::testkit::facility("Debian packaging", check)
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{cmd:?} failed: {text}{}", String::from_utf8_lossy(&out.stderr));
    text
}

#[test]
fn the_package_holds_everything_enables_nothing_and_what_it_unpacks_runs() {
    if !can_package() {
        return;
    }
    let tmp = std::env::temp_dir().join(memorch_linux::testkit::unique_name("memorch-package"));
    std::fs::create_dir_all(&tmp).unwrap();
    let deb = tmp.join("memorch.deb");
    run(Command::new(repo().join("scripts/package")).args(["--no-build", "--output"]).arg(&deb));
    check_contents(&deb);
    let root = tmp.join("root");
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root));
    check_unpacked(&root);
    check_unit(&root, &tmp);
    std::fs::remove_dir_all(&tmp).unwrap();
}

fn check_contents(deb: &Path) {
    let list = run(Command::new("dpkg-deb").arg("-c").arg(deb));
    let mut wanted: Vec<String> = [
        "usr/bin/memorch",
        "usr/bin/memorchd",
        "etc/memorch/memorch.toml",
        "usr/lib/systemd/system/memorch.service",
        "usr/share/dbus-1/system.d/memorch.conf",
        "usr/share/man/man1/memorch.1.gz",
        "usr/share/man/man1/memorch-run.1.gz",
        "usr/share/man/man1/memorchd.1.gz",
        "usr/share/man/man5/memorch.toml.5.gz",
        "usr/share/bash-completion/completions/memorch",
        "usr/share/zsh/vendor-completions/_memorch",
        "usr/share/fish/vendor_completions.d/memorch.fish",
    ]
    .map(String::from)
    .to_vec();
    for preset in std::fs::read_dir(repo().join("presets")).unwrap() {
        wanted.push(format!("usr/share/memorch/presets/{}", preset.unwrap().file_name().to_string_lossy()));
    }
    for path in &wanted {
        assert!(list.lines().any(|l| l.ends_with(&format!("./{path}"))), "the package has no {path}:\n{list}");
    }
    let conffiles = run(Command::new("dpkg-deb").arg("--info").arg(deb).arg("conffiles"));
    assert_eq!(conffiles.trim(), "/etc/memorch/memorch.toml");
    // No maintainer script: nothing enables or starts the service on install.
    let info = run(Command::new("dpkg-deb").arg("--info").arg(deb));
    for script in ["postinst", "preinst", "prerm", "postrm"] {
        assert!(!info.contains(script), "the package has a {script}:\n{info}");
    }
}

fn check_unpacked(root: &Path) {
    for bin in ["memorch", "memorchd"] {
        let help = run(Command::new(root.join("usr/bin").join(bin)).arg("--help"));
        assert!(help.contains("Usage:"), "{bin} --help:\n{help}");
    }
    let conf = root.join("etc/memorch/memorch.toml");
    let text = std::fs::read_to_string(&conf).unwrap();
    assert!(text.lines().filter(|l| l.contains(" = ")).all(|l| l.trim_start().starts_with('#')), "{text}");
    run(Command::new(root.join("usr/bin/memorch")).arg("config").arg("--check").arg(&conf));
    let script = root.join("usr/share/bash-completion/completions/memorch");
    let complete =
        run(Command::new("bash").arg("-c").arg(format!("source '{}' && complete -p memorch", script.display())));
    assert!(complete.contains("-F _memorch memorch"), "{complete}");
    if Command::new("man").arg("--version").output().is_ok_and(|o| o.status.success()) {
        for page in ["man1/memorch.1.gz", "man1/memorch-ctl.1.gz", "man5/memorch.toml.5.gz"] {
            let path = root.join("usr/share/man").join(page);
            let out = Command::new("man").args(["--warnings", "-l"]).arg(&path).env("MANWIDTH", "80").output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && out.stderr.is_empty(),
                "man -l {page}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(text.contains("NAME") && text.contains("memorch"), "man -l {page}:\n{text}");
        }
    } else {
        eprintln!("SKIP: man is not installed; the pages are not rendered");
    }
}

/// The unit, with its commands pointed at the unpacked binaries and its man pages looked up
/// in the unpacked root: no error, no warning.
fn check_unit(root: &Path, tmp: &Path) {
    let unit = std::fs::read_to_string(root.join("usr/lib/systemd/system/memorch.service")).unwrap();
    assert!(unit.contains("ExecStart=/usr/bin/memorch run --config /etc/memorch/memorch.toml"), "{unit}");
    if !Command::new("systemd-analyze").arg("--version").output().is_ok_and(|o| o.status.success()) {
        eprintln!("SKIP: systemd-analyze is not installed; the unit is not verified");
        return;
    }
    let copy = tmp.join("memorch.service");
    std::fs::write(&copy, unit.replace("/usr/bin/memorch", &root.join("usr/bin/memorch").display().to_string()))
        .unwrap();
    // Its Documentation= man pages are looked up too: in the unpacked root.
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&copy)
        .env("MANPATH", root.join("usr/share/man"))
        .output()
        .unwrap();
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && errors.trim().is_empty(), "systemd-analyze verify: {errors}");
}
