//! The control socket: a non-blocking Unix listener and its clients, read and written from
//! the daemon's poll loop. Lines longer than the protocol allows, clients that send garbage
//! or do not read their answers are dealt with here, so nothing a client does can stop the
//! daemon.

use crate::protocol::{Peer, MAX_LINE};
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// At most this many clients at once; more are refused.
pub const MAX_CLIENTS: usize = 64;
/// A client whose unread answers exceed this is dropped.
const MAX_PENDING_OUT: usize = 1 << 20;

pub struct Client {
    pub stream: UnixStream,
    pub peer: Peer,
    inbuf: Vec<u8>,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    out: Vec<u8>,
    pub subscribed: bool,
    pub closed: bool,
}

pub struct Server {
    listener: UnixListener,
    path: PathBuf,
    pub clients: Vec<Client>,
}

impl Server {
    /// Listen on `path` (a stale socket file is replaced; anyone may connect, `SO_PEERCRED`
    /// decides what they may say).
    pub fn bind(path: &Path) -> std::io::Result<Server> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if path.exists() {
            if UnixStream::connect(path).is_ok() {
                return Err(std::io::Error::new(ErrorKind::AddrInUse, format!("{} is in use: is another memorch running?", path.display())));
            }
            std::fs::remove_file(path)?;
        }
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
            if self.clients.len() >= MAX_CLIENTS {
                let _ = (&stream).write_all(b"{\"ok\":false,\"error\":\"too many clients\"}\n");
                continue;
            }
            let _ = stream.set_nonblocking(true);
            let (pid, uid) = memorch_linux::peercred::peer_cred(&stream).unwrap_or((0, u32::MAX));
            self.clients.push(Client { stream, peer: Peer { pid, uid }, inbuf: Vec::new(), discarding: false, out: Vec::new(), subscribed: false, closed: false });
        }
    }

    /// Drop closed clients.
    pub fn reap(&mut self) {
        self.clients.retain(|c| !c.closed);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Client {
    pub fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    pub fn wants_write(&self) -> bool {
        !self.out.is_empty()
    }

    /// Read what is there; return complete lines (oversized ones as `Err`).
    pub fn read_lines(&mut self) -> Vec<Result<String, String>> {
        let mut lines = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    self.closed = true;
                    break;
                }
                Ok(n) => self.take(&buf[..n], &mut lines),
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

    fn take(&mut self, mut data: &[u8], lines: &mut Vec<Result<String, String>>) {
        while let Some(nl) = data.iter().position(|&b| b == b'\n') {
            if self.discarding {
                self.discarding = false;
            } else {
                self.inbuf.extend_from_slice(&data[..nl]);
                let line = std::mem::take(&mut self.inbuf);
                lines.push(String::from_utf8(line).map_err(|_| "request is not UTF-8".to_string()));
            }
            data = &data[nl + 1..];
        }
        if self.discarding {
            return;
        }
        self.inbuf.extend_from_slice(data);
        if self.inbuf.len() > MAX_LINE {
            self.inbuf.clear();
            self.discarding = true;
            lines.push(Err(format!("request longer than {MAX_LINE} bytes")));
        }
    }

    /// Queue bytes and write what the socket takes now.
    pub fn send(&mut self, bytes: &[u8]) {
        if self.out.len() + bytes.len() > MAX_PENDING_OUT {
            self.closed = true;
            return;
        }
        self.out.extend_from_slice(bytes);
        self.flush();
    }

    pub fn flush(&mut self) {
        while !self.out.is_empty() {
            // MSG_NOSIGNAL: a client that hung up must not SIGPIPE the daemon.
            // SAFETY: sending from our buffer on our socket.
            let n = unsafe { libc::send(self.stream.as_raw_fd(), self.out.as_ptr().cast(), self.out.len(), libc::MSG_NOSIGNAL) };
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
mod tests {
    use super::*;

    fn client() -> (Client, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        (Client { stream: a, peer: Peer { pid: 1, uid: 0 }, inbuf: Vec::new(), discarding: false, out: Vec::new(), subscribed: false, closed: false }, b)
    }

    #[test]
    fn splits_lines_across_reads_and_drops_oversized_ones() {
        let (mut c, mut other) = client();
        other.write_all(b"{\"cmd\":").unwrap();
        assert!(c.read_lines().is_empty());
        other.write_all(b"\"home\"}\nsecond\n").unwrap();
        let l = c.read_lines();
        assert_eq!(l, vec![Ok("{\"cmd\":\"home\"}".to_string()), Ok("second".to_string())]);
        other.write_all(&vec![b'x'; MAX_LINE + 10]).unwrap();
        let l = c.read_lines();
        assert_eq!(l.len(), 1);
        assert!(l[0].is_err());
        other.write_all(b"rest of the long line\nok\n").unwrap();
        assert_eq!(c.read_lines(), vec![Ok("ok".to_string())], "the tail of the long line is skipped");
        drop(other);
        c.read_lines();
        assert!(c.closed);
    }
}
