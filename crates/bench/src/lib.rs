pub mod app;
pub mod content;
pub mod device;
pub mod driver;
pub mod html;
pub mod peer;
pub mod report;
pub mod scenario;
