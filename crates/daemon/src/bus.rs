//! The freedesktop low-memory-monitor's name on the system bus. memorch holds it only while trim notices are on, never
//! takes it from another owner (low-memory-monitor itself), and waits for the bus a bounded time: a bus that does not
//! answer must not hold the daemon.

use crate::config::Notify;
use memorch_core::engine::margins::TrimLevel;
use std::time::Duration;
use zbus::blocking::Connection;
use zbus::fdo::{RequestNameFlags, RequestNameReply};

/// The name, object and interface GLib's GMemoryMonitor listens to (`LowMemoryWarning(y)`).
pub const DBUS_NAME: &str = "org.freedesktop.LowMemoryMonitor";
pub const DBUS_PATH: &str = "/org/freedesktop/LowMemoryMonitor";

/// How long connecting and asking for the name may take.
const BUS_BOUND: Duration = Duration::from_secs(2);

enum State {
    /// Not connected.
    Idle,
    /// Connected and owning the name: signals go out.
    Owner(Connection),
    /// Someone else owns the name: said once, nothing sent until a reload turns notices on again.
    Yielded,
}

pub struct SystemBus {
    state: State,
}

impl Default for SystemBus {
    fn default() -> Self {
        SystemBus { state: State::Idle }
    }
}

impl SystemBus {
    /// Follow the config and the preset: own the name while trim notices are on and the config allows a bus ("auto":
    /// where one is there; "on": an error if there is none); release it (disconnect) when they go off. An error only
    /// for "on" with notices on.
    pub fn follow(&mut self, cfg: &Notify, notices: bool) -> Result<(), String> {
        let wanted = notices
            && match cfg.dbus.as_str() {
                "off" => false,
                "on" => true,
                _ => {
                    std::env::var_os("DBUS_SYSTEM_BUS_ADDRESS").is_some()
                        || std::path::Path::new("/run/dbus/system_bus_socket").exists()
                }
            };
        match (&self.state, wanted) {
            (State::Idle, true) => self.state = take_name(cfg)?,
            (State::Owner(_), false) => {
                tracing::info!("released {DBUS_NAME} on the system bus: trim notices are off");
                self.state = State::Idle;
            }
            (State::Yielded, false) => self.state = State::Idle,
            _ => {}
        }
        Ok(())
    }

    /// Send the signal for a level (`hidden` has none), if memorch owns the name.
    pub fn signal(&self, level: TrimLevel) {
        let (State::Owner(c), Some(byte)) = (&self.state, level.dbus_level()) else { return };
        if let Err(e) = c.emit_signal(None::<&str>, DBUS_PATH, DBUS_NAME, "LowMemoryWarning", &(byte,)) {
            tracing::warn!(error = %e, "LowMemoryWarning signal not sent");
        }
    }
}

/// Connect and ask for the name, within [`BUS_BOUND`].
fn take_name(cfg: &Notify) -> Result<State, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let asked = std::thread::Builder::new().name("memorch-bus".into()).spawn(move || {
        let _ = tx.send(connect_and_own());
    });
    let answer = match asked {
        Ok(_) => rx.recv_timeout(BUS_BOUND).unwrap_or_else(|_| Err(format!("no answer within {BUS_BOUND:?}"))),
        Err(e) => Err(format!("cannot start a thread: {e}")),
    };
    match answer {
        Ok(Some(c)) => {
            tracing::info!("owning {DBUS_NAME} on the system bus: trim notices go out as LowMemoryWarning");
            Ok(State::Owner(c))
        }
        Ok(None) => {
            tracing::warn!("{DBUS_NAME} is owned by another process (low-memory-monitor?): memorch leaves it and sends no LowMemoryWarning signals; socket listeners still hear its notices");
            Ok(State::Yielded)
        }
        Err(e) if cfg.dbus == "on" => Err(format!("notify.dbus = \"on\": system bus: {e}")),
        Err(e) => {
            tracing::warn!(error = %e, "no LowMemoryWarning signals (notify.dbus = \"auto\")");
            Ok(State::Idle)
        }
    }
}

/// The connection if the name is ours, `None` if another owns it. Never queued for it nor replacing its owner: the
/// signals must come from one owner GLib can follow.
fn connect_and_own() -> Result<Option<Connection>, String> {
    let c = Connection::system().map_err(|e| e.to_string())?;
    match c.request_name_with_flags(DBUS_NAME, RequestNameFlags::DoNotQueue.into()) {
        Ok(RequestNameReply::PrimaryOwner | RequestNameReply::AlreadyOwner) => Ok(Some(c)),
        Ok(_) | Err(zbus::Error::NameTaken) => Ok(None),
        Err(e) => Err(format!(
            "could not own {DBUS_NAME} ({e}): install the D-Bus policy (/usr/share/dbus-1/system.d/memorch.conf)"
        )),
    }
}
