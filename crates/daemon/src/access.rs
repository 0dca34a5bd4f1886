//! Who may say what over the control socket (docs/protocol.md, "Who may say what").

use memorch_protocol::Request;

/// Who is asking (`SO_PEERCRED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub pid: u32,
    pub uid: u32,
}

/// Whether `peer` may send `req`. Root and the configured controller uids may say anything; others may describe only
/// their own processes' classes, and read. What memorch learns and keeps across restarts (launch reports, sizes in
/// launch intents) comes only from root and the controllers: nobody else can teach it that an app is cheap to kill.
pub fn authorize(
    req: &Request,
    peer: Peer,
    controllers: &[u32],
    owner_of: impl Fn(u32) -> Option<u32>,
) -> Result<(), String> {
    if peer.uid == 0 || controllers.contains(&peer.uid) {
        return Ok(());
    }
    match req {
        Request::Status {}
        | Request::Explain { .. }
        | Request::Events {}
        | Request::Metrics {}
        | Request::Trim {}
        | Request::Margins {} => Ok(()),
        Request::State { pid, .. } => match owner_of(*pid) {
            Some(uid) if uid == peer.uid => Ok(()),
            Some(_) => Err(format!("pid {pid} is not yours (uid {}): only root describes others' processes", peer.uid)),
            None => Err(format!("no process {pid}")),
        },
        Request::Launch { .. } | Request::Launched { .. } | Request::Home {} | Request::Screen { .. } => Err(format!(
            "uid {} may not send launch, launched, home or screen events: root or a uid in [control] uids may",
            peer.uid
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_root_may_only_describe_its_own_processes() {
        let user = Peer { pid: 10, uid: 1000 };
        let owner = |pid: u32| match pid {
            1 => Some(0),
            2 => Some(1000),
            _ => None,
        };
        assert!(authorize(&Request::State { pid: 2, class: "cached".into() }, user, &[], owner).is_ok());
        assert!(authorize(&Request::State { pid: 1, class: "cached".into() }, user, &[], owner)
            .unwrap_err()
            .contains("not yours"));
        assert!(authorize(&Request::State { pid: 7, class: "cached".into() }, user, &[], owner)
            .unwrap_err()
            .contains("no process"));
        assert!(authorize(&Request::Home {}, user, &[], owner).is_err());
        let report = Request::Launched { app: "maps".into(), pid: 2, ms: 900, cold: true };
        assert!(
            authorize(&report, user, &[], owner).unwrap_err().contains("may not send launch"),
            "its own pid is not enough to teach memorch"
        );
        assert!(authorize(&report, user, &[1000], owner).is_ok());
        assert!(authorize(&Request::Home {}, user, &[1000], owner).is_ok());
        assert!(authorize(&Request::Status {}, user, &[], owner).is_ok());
        assert!(
            authorize(&Request::State { pid: 1, class: "cached".into() }, Peer { pid: 3, uid: 0 }, &[], owner).is_ok()
        );
    }
}
