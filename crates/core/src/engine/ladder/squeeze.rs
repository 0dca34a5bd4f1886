//! A squeeze of one app: where its pages go (zram, or a storage file of its own for an app unlikely to be wanted soon:
//! the cost model's rule, storage.rs) and what it is expected to free.

use super::ctx::{anon_moved, Ctx};
use super::storage::cold_to_storage;
use crate::engine::model::{App, CompactScope, Reason};

/// Compact `app` (`max_pages: None`: all of it in `scope`). An app unlikely to be wanted soon gives to a storage file
/// of its own where the preset says so: all it moves is saved, and zram's room is left to the likely apps. Returns the
/// bytes it is expected to give back.
pub fn compact(ctx: &mut Ctx, app: &App, scope: CompactScope, max_pages: Option<u64>, reason: Reason) -> u64 {
    let cold = cold_to_storage(ctx, app, anon_moved(app, scope, max_pages));
    ctx.compact_as(app, scope, max_pages, reason, cold)
}
