//! The control protocol: JSON lines over a Unix socket (docs/protocol.md). Every request is
//! validated whole before anything is done, and every answer says ok or why not.

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
    State { pid: u32, class: String },
    /// An app is about to launch.
    Launch { app: String, expect_mb: Option<u64> },
    /// An app finished launching.
    Launched { app: String, pid: u32, ms: u64, cold: bool },
    Home {},
    Screen { on: bool },
    Status {},
    Explain { pid: u32 },
    /// Follow actions as they happen (the connection then only receives).
    Events {},
    /// Prometheus text format.
    Metrics {},
}

/// Who is asking (`SO_PEERCRED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub pid: u32,
    pub uid: u32,
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
        Request::Launch { expect_mb: Some(mb), .. } if *mb == 0 || *mb > 1 << 20 => return Err(format!("expect_mb {mb} is out of range (1..=1048576)")),
        Request::Launched { ms, .. } if *ms == 0 || *ms > MAX_LAUNCH_MS => return Err(format!("ms {ms} is out of range (1..={MAX_LAUNCH_MS}): a launch takes time, and not hours")),
        _ => {}
    }
    Ok(req)
}

/// Whether `peer` may send `req`. Root and the configured controller uids may say anything;
/// others may describe only their own processes' classes, and read. What memorch learns and
/// keeps across restarts (launch reports, sizes in launch intents) comes only from root and
/// the controllers: nobody else can teach it that an app is cheap to kill.
pub fn authorize(req: &Request, peer: Peer, controllers: &[u32], owner_of: impl Fn(u32) -> Option<u32>) -> Result<(), String> {
    if peer.uid == 0 || controllers.contains(&peer.uid) {
        return Ok(());
    }
    match req {
        Request::Status {} | Request::Explain { .. } | Request::Events {} | Request::Metrics {} => Ok(()),
        Request::State { pid, .. } => match owner_of(*pid) {
            Some(uid) if uid == peer.uid => Ok(()),
            Some(_) => Err(format!("pid {pid} is not yours (uid {}): only root describes others' processes", peer.uid)),
            None => Err(format!("no process {pid}")),
        },
        Request::Launch { .. } | Request::Launched { .. } | Request::Home {} | Request::Screen { .. } => {
            Err(format!("uid {} may not send launch, launched, home or screen events: root or a uid in [control] uids may", peer.uid))
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

impl Answer {
    pub fn ok(data: Option<serde_json::Value>) -> Answer {
        Answer { ok: true, error: None, data }
    }

    pub fn err(e: impl Into<String>) -> Answer {
        Answer { ok: false, error: Some(e.into()), data: None }
    }

    pub fn line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_else(|_| "{\"ok\":false,\"error\":\"unprintable answer\"}".into());
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_command() {
        assert_eq!(parse(r#"{"cmd":"state","pid":5,"class":"cached"}"#), Ok(Request::State { pid: 5, class: "cached".into() }));
        assert_eq!(parse(r#"{"cmd":"launch","app":"maps","expect_mb":120}"#), Ok(Request::Launch { app: "maps".into(), expect_mb: Some(120) }));
        assert_eq!(parse(r#"{"cmd":"launch","app":"maps"}"#), Ok(Request::Launch { app: "maps".into(), expect_mb: None }));
        assert_eq!(parse(r#"{"cmd":"launched","app":"maps","pid":9,"ms":800,"cold":true}"#).unwrap(), Request::Launched { app: "maps".into(), pid: 9, ms: 800, cold: true });
        assert_eq!(parse(r#"{"cmd":"home"}"#), Ok(Request::Home {}));
        assert_eq!(parse(r#"{"cmd":"screen","on":false}"#), Ok(Request::Screen { on: false }));
        for c in ["status", "events", "metrics"] {
            assert!(parse(&format!(r#"{{"cmd":"{c}"}}"#)).is_ok());
        }
        assert_eq!(parse(r#"{"cmd":"explain","pid":3}"#), Ok(Request::Explain { pid: 3 }));
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

    #[test]
    fn non_root_may_only_describe_its_own_processes() {
        let user = Peer { pid: 10, uid: 1000 };
        let owner = |pid: u32| match pid {
            1 => Some(0),
            2 => Some(1000),
            _ => None,
        };
        assert!(authorize(&Request::State { pid: 2, class: "cached".into() }, user, &[], owner).is_ok());
        assert!(authorize(&Request::State { pid: 1, class: "cached".into() }, user, &[], owner).unwrap_err().contains("not yours"));
        assert!(authorize(&Request::State { pid: 7, class: "cached".into() }, user, &[], owner).unwrap_err().contains("no process"));
        assert!(authorize(&Request::Home {}, user, &[], owner).is_err());
        let report = Request::Launched { app: "maps".into(), pid: 2, ms: 900, cold: true };
        assert!(authorize(&report, user, &[], owner).unwrap_err().contains("may not send launch"), "its own pid is not enough to teach memorch");
        assert!(authorize(&report, user, &[1000], owner).is_ok());
        assert!(authorize(&Request::Home {}, user, &[1000], owner).is_ok());
        assert!(authorize(&Request::Status {}, user, &[], owner).is_ok());
        assert!(authorize(&Request::State { pid: 1, class: "cached".into() }, Peer { pid: 3, uid: 0 }, &[], owner).is_ok());
    }
}
