//! What a user calls an app, from the group the system started it in: a systemd desktop's application id
//! (`app-gnome-firefox-4242.scope`, `app-org.gnome.Terminal.slice`) or Android's package (the argv[0] of a process in
//! `uid_N/pid_M`); else its command's name.

use crate::cgroup::process_cgroup_path;
use crate::domain::Domain;
use crate::root::SysRoot;

/// Launchers that put their name before the application id in a systemd unit's name
/// (`app[-LAUNCHER]-APPID-RANDOM.scope`, systemd's desktop-environment conventions).
const LAUNCHERS: &[&str] = &["gnome", "kde", "xfce", "flatpak", "sway", "dbus", "systemd"];

/// The label of a process whose cgroup below its domain is `below`.
pub fn label(below: &str, argv0: Option<&str>, comm: &str) -> String {
    let parts: Vec<&str> = below.split('/').filter(|p| !p.is_empty()).collect();
    if let Some(id) = parts.iter().rev().find_map(|p| systemd_app_id(p)) {
        return id;
    }
    let android =
        parts.len() >= 2 && parts[parts.len() - 2].starts_with("uid_") && parts[parts.len() - 1].starts_with("pid_");
    match argv0.filter(|a| android && !a.is_empty()) {
        Some(a) => a.rsplit('/').next().unwrap_or(a).to_string(),
        None => comm.to_string(),
    }
}

/// [`label`] of a live process, reading its cgroup and arguments.
pub fn of_process(root: &SysRoot, pid: u32, domain: &Domain, comm: &str) -> String {
    let args = crate::process::cmdline(root, pid).unwrap_or_default();
    label(&below_domain(root, pid, domain), args.first().map(String::as_str), comm)
}

/// A process's cgroup path below its domain's (all of it for the whole machine).
pub fn below_domain(root: &SysRoot, pid: u32, domain: &Domain) -> String {
    let cg = process_cgroup_path(root, &pid.to_string()).unwrap_or_default();
    let top = domain.cgroup.as_ref().map_or("", |d| d.path.trim_end_matches('/'));
    cg.strip_prefix(top).unwrap_or(&cg).to_string()
}

/// `app-gnome-firefox-4242.scope` → `firefox`; `app-org.gnome.Terminal.slice` → `org.gnome.Terminal`;
/// `app-gnome-foo\x2dbar@3.service` → `foo-bar`. memorch's own `app-PID` groups and other units have none.
fn systemd_app_id(unit: &str) -> Option<String> {
    let rest = unit.strip_prefix("app-")?;
    let (stem, kind) = rest.rsplit_once('.')?;
    let stem = match kind {
        "scope" => stem.rsplit_once('-')?.0,
        "service" => stem.split_once('@').map_or(stem, |(s, _)| s),
        "slice" => stem,
        _ => return None,
    };
    let mut parts: Vec<&str> = stem.split('-').collect();
    if parts.len() > 1 && LAUNCHERS.contains(&parts[0]) {
        parts.remove(0);
    }
    let id = parts.join("-").replace("\\x2d", "-");
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::label;

    #[test]
    fn a_systemd_scope_or_slice_names_the_app_by_its_application_id() {
        let desktop = "user.slice/user-1000.slice/user@1000.service/app.slice";
        assert_eq!(
            label(&format!("{desktop}/app-gnome-firefox-4242.scope"), Some("/usr/lib/firefox/firefox"), "firefox-bin"),
            "firefox"
        );
        assert_eq!(label(&format!("{desktop}/app-firefox-4242.scope"), None, "x"), "firefox");
        assert_eq!(
            label(&format!("{desktop}/app-org.gnome.Terminal.slice/vte-spawn-0f3a.scope"), None, "bash"),
            "org.gnome.Terminal"
        );
        assert_eq!(
            label(&format!("{desktop}/app-gnome-org.gnome.Evolution\\x2dalarm\\x2dnotify@2.service"), None, "x"),
            "org.gnome.Evolution-alarm-notify"
        );
        assert_eq!(label(&format!("{desktop}/app-kde-org.kde.dolphin-77.scope"), None, "x"), "org.kde.dolphin");
    }

    #[test]
    fn an_android_app_is_named_by_its_package_and_anything_else_by_its_command() {
        assert_eq!(label("uid_10123/pid_4567", Some("com.example.mail"), "com.example.mai"), "com.example.mail");
        assert_eq!(label("uid_10123/pid_4567", Some(""), "com.example.mai"), "com.example.mai");
        // Not Android's layout: the command, whatever argv[0] says.
        assert_eq!(label("session.slice/pipewire.service", Some("pipewire"), "pipewire"), "pipewire");
        assert_eq!(label("app-4242", Some("/usr/bin/redis-server"), "redis-server"), "redis-server");
        assert_eq!(label("", Some("anything"), "sh"), "sh");
        assert_eq!(label("app.slice/app-.scope", None, "sh"), "sh");
    }
}
