//! The peers the bench knows by name (the low-memory daemons people run today), apart from how they run (peer.rs), so
//! that anything naming managers can tell a peer from a preset.

/// The peers `memorch bench --managers` knows, with the command each runs as its Debian service does (earlyoom's
/// arguments from /etc/default/earlyoom) and a line it prints once it watches memory.
pub const PEERS: [(&str, &[&str], &str); 2] = [
    ("earlyoom", &["earlyoom", "-r", "3600"], "mem total"),
    ("nohang", &["nohang", "--monitor", "--config", "/etc/nohang/nohang.conf"], "Monitoring has started"),
];

pub fn is_peer(manager: &str) -> bool {
    PEERS.iter().any(|(n, _, _)| *n == manager)
}
