//! One file per subcommand.

pub mod app;
pub mod status;
