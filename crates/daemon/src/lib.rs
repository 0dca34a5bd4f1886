//! memorch's daemon (`memorch run`, the `memorchd` binary): the poll loop and what it serves.

pub mod access;
pub mod apps;
pub mod bus;
pub mod cli;
pub mod config;
pub mod control;
pub mod daemon;
pub mod decision;
pub mod executor;
pub mod look;
pub mod machine;
pub mod metrics;
pub mod notify;
pub mod polling;
pub mod preset_file;
pub mod reload;
pub mod server;
pub mod store;
pub mod triggers;
