//! The one client of the control socket.

use crate::answer::{Answer, Status};
use crate::event::Event;
use crate::request::Request;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{socket}: {source} (is memorch running? memorch run --socket …)")]
    Connect { socket: PathBuf, source: std::io::Error },
    #[error("{socket}: {source}")]
    Io { socket: PathBuf, source: std::io::Error },
    #[error("{socket}: unreadable answer {line:?}: {detail}")]
    Answer { socket: PathBuf, line: String, detail: String },
    #[error("memorch refused: {0}")]
    Refused(String),
}

/// A client of one daemon's socket: a connection a request (the daemon answers and the client hangs up), or one kept
/// for the events stream.
#[derive(Debug, Clone)]
pub struct Client {
    socket: PathBuf,
    timeout: Duration,
}

impl Client {
    pub fn new(socket: impl AsRef<Path>) -> Client {
        Client { socket: socket.as_ref().to_path_buf(), timeout: Duration::from_secs(30) }
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Whether a daemon listens there now.
    pub fn reachable(&self) -> bool {
        UnixStream::connect(&self.socket).is_ok()
    }

    fn connect(&self) -> Result<UnixStream, ClientError> {
        let s = UnixStream::connect(&self.socket)
            .map_err(|source| ClientError::Connect { socket: self.socket.clone(), source })?;
        s.set_read_timeout(Some(self.timeout)).map_err(|source| self.io(source))?;
        Ok(s)
    }

    fn io(&self, source: std::io::Error) -> ClientError {
        ClientError::Io { socket: self.socket.clone(), source }
    }

    /// One request, its answer (which may be a refusal: see [`Answer::ok`]).
    pub fn request(&self, req: &Request) -> Result<Answer, ClientError> {
        self.send_line(req.line().trim_end())
    }

    /// One line as it is, its answer: for tests of what the daemon does with bad input.
    pub fn send_line(&self, line: &str) -> Result<Answer, ClientError> {
        let mut s = self.connect()?;
        s.write_all(line.as_bytes()).and_then(|_| s.write_all(b"\n")).map_err(|e| self.io(e))?;
        let mut answer = String::new();
        BufReader::new(s).read_line(&mut answer).map_err(|e| self.io(e))?;
        serde_json::from_str(&answer).map_err(|e| ClientError::Answer {
            socket: self.socket.clone(),
            line: answer.clone(),
            detail: e.to_string(),
        })
    }

    /// A request that must succeed, its data as `T`.
    pub fn ask<T: for<'de> serde::Deserialize<'de>>(&self, req: &Request) -> Result<T, ClientError> {
        self.request(req)?.data().map_err(ClientError::Refused)
    }

    pub fn status(&self) -> Result<Status, ClientError> {
        self.ask(&Request::Status {})
    }

    /// Follow the daemon's events: an iterator that ends when the daemon does.
    pub fn subscribe(&self) -> Result<Events, ClientError> {
        self.stream(&Request::Events {})
    }

    /// Trim notices for this process (every process's, as root): an iterator of `trim` events that ends when the daemon
    /// does.
    pub fn trim_notices(&self) -> Result<Events, ClientError> {
        self.stream(&Request::Trim {})
    }

    fn stream(&self, req: &Request) -> Result<Events, ClientError> {
        let mut s = self.connect()?;
        s.set_read_timeout(None).map_err(|e| self.io(e))?;
        s.write_all(req.line().as_bytes()).map_err(|e| self.io(e))?;
        let mut r = BufReader::new(s);
        let mut first = String::new();
        r.read_line(&mut first).map_err(|e| self.io(e))?;
        let a: Answer = serde_json::from_str(&first).map_err(|e| ClientError::Answer {
            socket: self.socket.clone(),
            line: first.clone(),
            detail: e.to_string(),
        })?;
        if !a.ok {
            return Err(ClientError::Refused(a.error.unwrap_or_default()));
        }
        Ok(Events { lines: r })
    }
}

/// The events stream; lines that are not events (a newer daemon's) are skipped.
pub struct Events {
    lines: BufReader<UnixStream>,
}

impl Iterator for Events {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        let mut line = String::new();
        loop {
            line.clear();
            match self.lines.read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {
                    if let Ok(e) = serde_json::from_str(&line) {
                        return Some(e);
                    }
                }
            }
        }
    }
}
