//! memorch's bench: virtual devices, apps (synthetic and real programs), scenarios, the driver that plays the user,
//! peers, and the reports.

pub mod app;
pub mod attribution;
pub mod campaign;
pub mod charts;
pub mod conditions;
pub mod content;
pub mod data_cache;
pub mod device;
pub mod driver;
pub mod html;
mod html_charts;
pub mod keeper;
pub mod kswapd;
pub mod managed;
pub mod md_table;
pub mod measure;
pub mod paired;
pub mod peer;
pub mod peers;
pub mod prepare;
pub mod report;
pub mod results;
pub mod running;
pub mod scenario;
pub mod scoreboard;
pub mod summary_md;
mod user;
pub mod visits;
