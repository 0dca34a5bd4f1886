//! memorch's kernel side: readers of `/proc` and `/sys` that fill `memorch-core`'s model, and the actuators that act
//! through the kernel's own mechanisms. One file per facility; every reader takes a [`SysRoot`] so tests can point it
//! at recorded files.

pub mod app_label;
pub mod appgroup;
pub mod cgroup;
pub mod compact;
pub mod cpustat;
pub mod domain;
pub mod error;
pub mod events;
pub mod freeze;
pub mod kill;
pub mod ksm;
pub mod lock;
pub mod lxcfs;
pub mod maps;
pub mod meminfo;
pub mod namespace;
pub mod owner;
pub mod parse;
pub mod peercred;
pub mod pidfd;
pub mod priority;
pub mod process;
pub mod psi;
pub mod readahead;
pub mod readback;
pub mod reclaim;
pub mod records;
pub mod recovery;
pub mod root;
pub mod sandbox;
mod sandbox_registry;
pub mod slow_disk;
pub mod snapshot;
pub mod state;
pub mod swap_room;
pub mod swapfile;
pub mod swapon;
pub mod swaps;
pub mod swaptype;
pub mod target;
pub mod testkit;
pub mod unique;
pub mod vmstat;
pub mod wait;
pub mod which;
pub mod zram;
pub mod zram_stats;

pub use domain::{Domain, DomainSpec};
pub use error::{Error, Result};
pub use root::SysRoot;
