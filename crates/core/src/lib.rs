//! memorch's pure core.
//!
//! Everything here is plain data and pure functions: no file, no clock, no syscall. The kernel side (`memorch-linux`)
//! fills these types from `/proc` and `/sys`; the engine reads them and decides. Keeping the boundary here is what lets
//! every branch of the policy be tested, and the same engine run live, on a recorded trace or on a fake.

pub mod class;
pub mod engine;
pub mod snapshot;

pub use class::Class;
pub use snapshot::{
    Counters, Facility, KsmState, MemoryState, ProcessInfo, Psi, PsiLine, Snapshot, SwapDevice, SwapState, ZramDevice,
    ZramState,
};
