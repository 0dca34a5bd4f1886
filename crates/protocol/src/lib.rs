//! The control protocol of `memorch run` (docs/protocol.md): JSON lines over a Unix socket. Every message is a type
//! here, and [`Client`] is the one client: `memorch ctl`, the bench, the tests and the benchmarks all speak through it,
//! so a renamed key breaks them at compile time, not at run time.

mod answer;
mod client;
mod event;
mod request;

pub use answer::{Answer, Counters, Decided, Explanation, MarginsInfo, Metrics, Status, ZramInfo};
pub use client::{Client, ClientError, Events};
pub use event::{ActionEvent, Event, PreKill, TrimNotice, VictimGone};
pub use request::{parse, Request, MAX_LAUNCH_MS, MAX_LINE};
