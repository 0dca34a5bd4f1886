//! A private system bus for the tests of the freedesktop LowMemoryWarning signal, and what
//! a test asks of it (gdbus, as GLib clients see the bus).

use memorch_linux::testkit;
use std::process::Command;
use std::time::Duration;

/// A private system bus (dbus-daemon with a config of the test's own), stopped on drop.
pub struct PrivateBus {
    child: std::process::Child,
    pub address: String,
    _dir: testkit::TempDir,
}

impl PrivateBus {
    pub fn start() -> Option<PrivateBus> {
        let tools = ["dbus-daemon", "gdbus"]
            .iter()
            .find(|t| memorch_linux::which::on_path(t).is_none())
            .map_or(Ok(()), |t| Err(format!("{t} is not installed (scripts/setup installs it)")));
        if !testkit::facility("a private D-Bus (dbus-daemon, gdbus)", tools) {
            return None;
        }
        let dir = testkit::TempDir::new("memorch-bus");
        let socket = dir.join("bus");
        let conf = dir.join("bus.conf");
        std::fs::write(&conf, format!(r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path={}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_type="signal"/><allow send_destination="*"/><allow receive_sender="*"/></policy></busconfig>"#, socket.display())).unwrap();
        let child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", conf.display()))
            .arg("--nofork")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("dbus-daemon starts");
        assert!(
            testkit::wait_for(Duration::from_secs(10), || std::os::unix::net::UnixStream::connect(&socket).is_ok()),
            "the private bus listens"
        );
        Some(PrivateBus { child, address: format!("unix:path={}", socket.display()), _dir: dir })
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl PrivateBus {
    /// `org.freedesktop.DBus.METHOD ARGS` on this bus, as gdbus prints the answer.
    pub fn call(&self, method: &str, args: &[&str]) -> String {
        let out = Command::new("gdbus")
            .args(["call", "--address", &self.address, "--dest", "org.freedesktop.DBus"])
            .args(["--object-path", "/org/freedesktop/DBus", "--method"])
            .arg(format!("org.freedesktop.DBus.{method}"))
            .args(args)
            .output()
            .expect("gdbus runs");
        assert!(out.status.success(), "gdbus call {method}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Whether anyone owns a well-known name.
    pub fn has_owner(&self, name: &str) -> bool {
        self.call("NameHasOwner", &[name]).contains("true")
    }

    /// The clients connected besides the one asking (their unique names).
    pub fn clients(&self) -> usize {
        self.call("ListNames", &[]).matches("':").count().saturating_sub(1)
    }
}
