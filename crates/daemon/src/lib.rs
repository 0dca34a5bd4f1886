pub mod config;
pub mod daemon;
pub mod executor;
pub mod metrics;
pub mod protocol;
pub mod server;
pub mod store;
