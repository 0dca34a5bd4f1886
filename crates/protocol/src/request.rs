//! Requests: what a client may ask. Validated whole before anything is done.

use memorch_core::Class;
use serde::{Deserialize, Serialize};

/// Longest request line accepted; longer ones are answered with an error and dropped.
pub const MAX_LINE: usize = 16 * 1024;
/// Longest launch a report may claim (10 minutes).
pub const MAX_LAUNCH_MS: u64 = 600_000;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(tag = "cmd", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// A process changed class (as a launcher or activity manager would say).
    State {
        pid: u32,
        class: String,
    },
    /// An app is about to launch.
    Launch {
        app: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect_mb: Option<u64>,
    },
    /// An app finished launching.
    Launched {
        app: String,
        pid: u32,
        ms: u64,
        cold: bool,
    },
    Home {},
    Screen {
        on: bool,
    },
    Status {},
    Explain {
        pid: u32,
    },
    /// Follow actions as they happen (the connection then only receives).
    Events {},
    /// Prometheus text format.
    Metrics {},
    /// Trim notices for the asking process (its pid from the socket's credentials): the connection then only receives
    /// `trim` events: every level notice, and `hidden` for itself.
    Trim {},
    /// The margins memorch decides on (ChromeOS style), in KiB.
    Margins {},
}

impl Request {
    /// A class change, by class.
    pub fn state(pid: u32, class: Class) -> Request {
        Request::State { pid, class: class.name().to_string() }
    }

    /// The line a client writes.
    pub fn line(&self) -> String {
        let mut s = serde_json::to_string(self).expect("requests serialise");
        s.push('\n');
        s
    }
}

/// Parse one line. Errors are answers, never panics.
pub fn parse(line: &str) -> Result<Request, String> {
    if line.len() > MAX_LINE {
        return Err(format!("request longer than {MAX_LINE} bytes"));
    }
    let req: Request = serde_json::from_str(line).map_err(|e| format!("bad request: {e}"))?;
    match &req {
        Request::State { class, .. } => {
            Class::from_name(class).filter(|c| !c.is_protected()).ok_or_else(|| {
                format!("unknown class '{class}': use foreground, visible, perceptible, service, home, previous, cached or empty")
            })?;
        }
        Request::Launch { app, .. } | Request::Launched { app, .. } if app.is_empty() || app.len() > 256 => {
            return Err("app must be 1 to 256 bytes".into());
        }
        Request::Launch { expect_mb: Some(mb), .. } if *mb == 0 || *mb > 1 << 20 => {
            return Err(format!("expect_mb {mb} is out of range (1..=1048576)"))
        }
        Request::Launched { ms, .. } if *ms == 0 || *ms > MAX_LAUNCH_MS => {
            return Err(format!("ms {ms} is out of range (1..={MAX_LAUNCH_MS}): a launch takes time, and not hours"))
        }
        _ => {}
    }
    Ok(req)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_command() {
        assert_eq!(
            parse(r#"{"cmd":"state","pid":5,"class":"cached"}"#),
            Ok(Request::State { pid: 5, class: "cached".into() })
        );
        assert_eq!(
            parse(r#"{"cmd":"launch","app":"maps","expect_mb":120}"#),
            Ok(Request::Launch { app: "maps".into(), expect_mb: Some(120) })
        );
        assert_eq!(
            parse(r#"{"cmd":"launch","app":"maps"}"#),
            Ok(Request::Launch { app: "maps".into(), expect_mb: None })
        );
        assert_eq!(
            parse(r#"{"cmd":"launched","app":"maps","pid":9,"ms":800,"cold":true}"#).unwrap(),
            Request::Launched { app: "maps".into(), pid: 9, ms: 800, cold: true }
        );
        assert_eq!(parse(r#"{"cmd":"home"}"#), Ok(Request::Home {}));
        assert_eq!(parse(r#"{"cmd":"screen","on":false}"#), Ok(Request::Screen { on: false }));
        for c in ["status", "events", "metrics", "trim", "margins"] {
            assert!(parse(&format!(r#"{{"cmd":"{c}"}}"#)).is_ok());
        }
        assert_eq!(parse(r#"{"cmd":"explain","pid":3}"#), Ok(Request::Explain { pid: 3 }));
    }

    #[test]
    fn what_a_client_writes_is_what_the_daemon_reads() {
        for r in [
            Request::state(5, Class::Cached),
            Request::Launch { app: "maps".into(), expect_mb: None },
            Request::Launch { app: "maps".into(), expect_mb: Some(120) },
            Request::Launched { app: "maps".into(), pid: 9, ms: 800, cold: false },
            Request::Home {},
            Request::Screen { on: true },
            Request::Status {},
            Request::Explain { pid: 1 },
            Request::Events {},
            Request::Metrics {},
            Request::Trim {},
            Request::Margins {},
        ] {
            let line = r.line();
            assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
            assert_eq!(parse(line.trim_end()), Ok(r));
        }
    }

    #[test]
    fn rejects_bad_input_with_reasons() {
        for (line, want) in [
            ("", "bad request"),
            ("not json", "bad request"),
            (r#"{"cmd":"reboot"}"#, "unknown variant"),
            (r#"{"cmd":"state","pid":-1,"class":"cached"}"#, "bad request"),
            (r#"{"cmd":"state","pid":5,"class":"vip"}"#, "unknown class 'vip'"),
            (r#"{"cmd":"state","pid":5,"class":"native"}"#, "unknown class 'native'"),
            (r#"{"cmd":"home","extra":1}"#, "unknown field"),
            (r#"{"cmd":"launch","app":""}"#, "1 to 256"),
            (r#"{"cmd":"launch","app":"x","expect_mb":0}"#, "out of range"),
            (r#"{"cmd":"launched","app":"x","pid":5,"ms":0,"cold":true}"#, "out of range"),
            (r#"{"cmd":"launched","app":"x","pid":5,"ms":600001,"cold":true}"#, "out of range"),
        ] {
            let e = parse(line).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
        }
        assert!(parse(&"x".repeat(MAX_LINE + 1)).unwrap_err().contains("longer than"));
    }
}
