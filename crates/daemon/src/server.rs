//! The control socket: a non-blocking Unix listener and its clients, read and written from the daemon's poll loop.
//! Lines longer than the protocol allows, clients that send garbage or do not read their answers are dealt with here,
//! so nothing a client does can stop the daemon or grow its memory (docs/protocol.md, "Who may do what"):
//! - at most [`MAX_CLIENTS`] connections, at most [`MAX_PER_UID`] of any one non-root uid, and [`ROOT_RESERVED`] of
//!   them only root may take, so root always gets in;
//! - at most [`READ_BUDGET`] bytes and [`LINES_PER_WAKE`] requests of a client handled per wake-up (the rest waits in
//!   the kernel's socket buffer, which is bounded);
//! - at most [`MAX_PENDING_OUT`] bytes of answers or events waiting for a client that does not read them; past that it
//!   is dropped; [`MAX_BAD_LINES`] bad requests in a row drop it too.

use crate::access::Peer;
use memorch_protocol::MAX_LINE;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// At most this many clients at once; more are refused.
pub const MAX_CLIENTS: usize = 64;
/// Of which this many only root may take.
pub const ROOT_RESERVED: usize = 8;
/// Connections one non-root uid may hold at once.
pub const MAX_PER_UID: usize = 4;
/// A client whose unread answers and events exceed this is dropped.
pub const MAX_PENDING_OUT: usize = 128 << 10;
/// Bytes read from one client per wake-up (more than the longest line, so a long line is seen whole or refused in one
/// wake-up).
pub const READ_BUDGET: usize = 2 * MAX_LINE + 4096;
/// Requests of one client handled per wake-up.
pub const LINES_PER_WAKE: usize = 32;
/// Bad requests in a row after which a client is dropped.
pub const MAX_BAD_LINES: u32 = 16;

pub struct Client {
    pub stream: UnixStream,
    pub peer: Peer,
    inbuf: Vec<u8>,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    out: Vec<u8>,
    pub subscribed: bool,
    /// Listens for trim notices (for its own process, `peer.pid`).
    pub trim: bool,
    pub closed: bool,
    /// Bad requests in a row.
    bad_lines: u32,
}

pub struct Server {
    listener: UnixListener,
    path: PathBuf,
    pub clients: Vec<Client>,
}

impl Server {
    /// Whether `path` is free to listen on: its directory made, a stale socket file removed, a live one refused. The
    /// daemon asks this before it touches the machine, and binds only once it is set up: a socket that answers is a
    /// daemon that is ready (clients and tests connect to know that).
    pub fn claim(path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let Ok(meta) = std::fs::symlink_metadata(path) else { return Ok(()) };
        // Only a socket is ever replaced: a file a user named by mistake is theirs.
        if !meta.file_type().is_socket() {
            return Err(std::io::Error::new(
                ErrorKind::AlreadyExists,
                format!("{} exists and is not a socket: give --socket a path that is free or a socket", path.display()),
            ));
        }
        if UnixStream::connect(path).is_ok() {
            return Err(std::io::Error::new(
                ErrorKind::AddrInUse,
                format!("{} is in use: is another memorch running?", path.display()),
            ));
        }
        std::fs::remove_file(path)
    }

    /// Listen on `path` (a stale socket file is replaced; anyone may connect, `SO_PEERCRED` decides what they may say).
    pub fn bind(path: &Path) -> std::io::Result<Server> {
        Server::claim(path)?;
        let listener = UnixListener::bind(path)?;
        listener.set_nonblocking(true)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
        Ok(Server { listener, path: path.to_path_buf(), clients: Vec::new() })
    }

    pub fn fd(&self) -> RawFd {
        self.listener.as_raw_fd()
    }

    pub fn accept(&mut self) {
        while let Ok((stream, _)) = self.listener.accept() {
            let (pid, uid) = memorch_linux::peercred::peer_cred(&stream).unwrap_or((0, u32::MAX));
            if let Err(why) = admit(uid, self.clients.iter().map(|c| c.peer.uid)) {
                let _ = stream.set_nonblocking(true);
                let _ = (&stream).write_all(format!("{{\"ok\":false,\"error\":\"{why}\"}}\n").as_bytes());
                continue;
            }
            let _ = stream.set_nonblocking(true);
            self.clients.push(Client::new(stream, Peer { pid, uid }));
        }
    }

    /// Drop closed clients.
    pub fn reap(&mut self) {
        self.clients.retain(|c| !c.closed);
    }

    /// An event to every subscriber of the events stream.
    pub fn publish(&mut self, e: &memorch_protocol::Event) {
        let mut line = serde_json::to_string(e).unwrap_or_default();
        line.push('\n');
        for c in self.clients.iter_mut().filter(|c| c.subscribed) {
            c.send(line.as_bytes());
        }
    }

    /// A trim notice to the listeners it is meant for (every one, or the one app it names) and to the events stream;
    /// the pids of the listeners told.
    pub fn publish_trim(&mut self, n: &memorch_protocol::TrimNotice) -> Vec<u32> {
        let mut line = serde_json::to_string(&memorch_protocol::Event::Trim(n.clone())).unwrap_or_default();
        line.push('\n');
        let mut told = Vec::new();
        for c in self.clients.iter_mut() {
            let listener = c.trim && n.pid.is_none_or(|p| p == c.peer.pid);
            if listener {
                told.push(c.peer.pid);
            }
            if listener || c.subscribed {
                c.send(line.as_bytes());
            }
        }
        told
    }
}

/// Whether a client of `uid` may connect while clients of `connected` uids are: root always (while any slot is free),
/// others within their own limit and outside root's reserve. `Err` says why not.
pub fn admit(uid: u32, connected: impl Iterator<Item = u32>) -> Result<(), String> {
    let (mut all, mut mine) = (0, 0);
    for u in connected {
        all += 1;
        mine += (u == uid) as usize;
    }
    if all >= MAX_CLIENTS {
        return Err(format!("too many clients ({MAX_CLIENTS})"));
    }
    if uid != 0 && all >= MAX_CLIENTS - ROOT_RESERVED {
        return Err(format!("too many clients: the last {ROOT_RESERVED} places are root's"));
    }
    if uid != 0 && mine >= MAX_PER_UID {
        return Err(format!("uid {uid} has {MAX_PER_UID} connections already"));
    }
    Ok(())
}

impl Drop for Server {
    fn drop(&mut self) {
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_socket()) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Client {
    pub fn new(stream: UnixStream, peer: Peer) -> Client {
        Client {
            stream,
            peer,
            inbuf: Vec::new(),
            discarding: false,
            out: Vec::new(),
            subscribed: false,
            trim: false,
            closed: false,
            bad_lines: 0,
        }
    }

    /// Count a request's outcome: too many bad ones in a row and the client is dropped.
    pub fn judged(&mut self, ok: bool) {
        self.bad_lines = if ok { 0 } else { self.bad_lines + 1 };
        if self.bad_lines >= MAX_BAD_LINES {
            self.send(
                format!("{{\"ok\":false,\"error\":\"{MAX_BAD_LINES} bad requests in a row: disconnected\"}}\n")
                    .as_bytes(),
            );
            self.flush();
            self.closed = true;
        }
    }

    pub fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    pub fn wants_write(&self) -> bool {
        !self.out.is_empty()
    }

    /// Read what is there, within this wake-up's budget; return complete lines (oversized ones as `Err`). Bytes are
    /// read from the socket only while no complete line waits in ours, so at most one read's worth waits here; the rest
    /// stays in the kernel's socket buffer. Lines that wait make [`Client::has_pending`] true: the loop must come back.
    pub fn read_lines(&mut self) -> Vec<Result<String, String>> {
        let mut lines = Vec::new();
        let mut buf = [0u8; 4096];
        let mut read = 0;
        self.split(&mut lines);
        while read < READ_BUDGET && lines.len() < LINES_PER_WAKE && !self.closed && !self.has_pending() {
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    self.closed = true;
                    break;
                }
                Ok(n) => {
                    read += n;
                    self.take(&buf[..n]);
                    self.split(&mut lines);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.closed = true;
                    break;
                }
            }
        }
        lines
    }

    /// Whether a complete request waits in our buffer (read, not yet handled).
    pub fn has_pending(&self) -> bool {
        !self.closed && self.inbuf.contains(&b'\n')
    }

    /// Append what was read; a line that outgrows the limit is dropped up to its end.
    fn take(&mut self, mut data: &[u8]) {
        if self.discarding {
            match data.iter().position(|&b| b == b'\n') {
                None => return,
                Some(nl) => {
                    self.discarding = false;
                    data = &data[nl + 1..];
                }
            }
        }
        self.inbuf.extend_from_slice(data);
    }

    /// Complete lines out of our buffer, up to the wake-up's budget.
    fn split(&mut self, lines: &mut Vec<Result<String, String>>) {
        while lines.len() < LINES_PER_WAKE {
            match self.inbuf.iter().position(|&b| b == b'\n') {
                Some(nl) if nl <= MAX_LINE => {
                    let line: Vec<u8> = self.inbuf.drain(..=nl).take(nl).collect();
                    lines.push(String::from_utf8(line).map_err(|_| "request is not UTF-8".to_string()));
                }
                Some(nl) => {
                    self.inbuf.drain(..=nl);
                    lines.push(Err(format!("request longer than {MAX_LINE} bytes")));
                }
                None if self.inbuf.len() > MAX_LINE => {
                    self.inbuf.clear();
                    self.discarding = true;
                    lines.push(Err(format!("request longer than {MAX_LINE} bytes")));
                }
                None => break,
            }
        }
    }

    /// Queue bytes and write what the socket takes now.
    pub fn send(&mut self, bytes: &[u8]) {
        if self.closed {
            return;
        }
        if self.out.len() + bytes.len() > MAX_PENDING_OUT {
            self.closed = true;
            self.out = Vec::new();
            return;
        }
        self.out.extend_from_slice(bytes);
        self.flush();
    }

    pub fn flush(&mut self) {
        while !self.out.is_empty() {
            // MSG_NOSIGNAL: a client that hung up must not SIGPIPE the daemon. SAFETY: sending from our buffer on our
            // socket.
            let n = unsafe {
                libc::send(self.stream.as_raw_fd(), self.out.as_ptr().cast(), self.out.len(), libc::MSG_NOSIGNAL)
            };
            if n > 0 {
                self.out.drain(..n as usize);
                continue;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != ErrorKind::WouldBlock && e.kind() != ErrorKind::Interrupted {
                self.closed = true;
            }
            break;
        }
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
