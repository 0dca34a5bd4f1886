//! Swap's room as the steps count it: what compressing or moving pages to storage still saves, after what this decision
//! already moves (zram saves a share of a page, storage all).

use super::ctx::Ctx;
use crate::engine::model::ActionKind;

impl Ctx<'_> {
    /// Swap room left: what compaction can still push out.
    pub fn swap_room(&self) -> u64 {
        let s = &self.input.snapshot.swap;
        s.total_bytes.saturating_sub(s.used_bytes)
    }

    /// Storage swap this decision adds (the adaptive-swap step's new files).
    pub(super) fn swap_growing(&self) -> u64 {
        self.actions.iter().map(|(a, _)| if let ActionKind::SwapGrow { bytes } = a.kind { bytes } else { 0 }).sum()
    }

    /// Swap room left in zram and in storage swap (with `growing`, the files this decision adds), in bytes of pages it
    /// can take.
    pub(super) fn swap_rooms(&self, growing: bool) -> (u64, u64) {
        let room = |file: bool| {
            self.input
                .snapshot
                .swap
                .devices
                .iter()
                .filter(|d| (d.kind == "file") == file)
                .map(|d| d.size_bytes.saturating_sub(d.used_bytes))
                .sum::<u64>()
        };
        (room(false), room(true) + if growing { self.swap_growing() } else { 0 })
    }

    /// The share of a page compression saves.
    pub(super) fn zram_saving(&self) -> f64 {
        (1.0 - 1.0 / self.zram_ratio()).max(0.05)
    }

    /// What swapping out `bytes` saves once `already` bytes went out: zram's room fills first (it has the higher swap
    /// priority), where a page saves what compression saves, then storage swap, where it saves all of it.
    pub(super) fn saved_by(&self, already: u64, bytes: u64, growing: bool) -> u64 {
        let (zram, storage) = self.swap_rooms(growing);
        let zram_left = zram.saturating_sub(already);
        let storage_left = storage.saturating_sub(already.saturating_sub(zram));
        let to_zram = bytes.min(zram_left);
        let to_storage = (bytes - to_zram).min(storage_left);
        (to_zram as f64 * self.zram_saving()) as u64 + to_storage
    }

    /// What swapping out `bytes` more saves, after what this decision's compactions move.
    pub fn saved_by_moving(&self, bytes: u64) -> u64 {
        self.saved_by(self.moved_bytes, bytes, true)
    }

    /// How much must be swapped out, after what this decision's compactions move, to save `bytes`: at zram's ratio
    /// while zram has room, one for one on storage swap (issue 11: with zram full, a shortfall sized for zram moved 2.4
    /// times what was short, and every page of it was a warm return). All the room left if that is not enough.
    pub fn moved_to_save(&self, bytes: u64) -> u64 {
        let (zram, storage) = self.swap_rooms(true);
        let zram_left = zram.saturating_sub(self.moved_bytes);
        let storage_left = storage.saturating_sub(self.moved_bytes.saturating_sub(zram));
        let from_zram = (zram_left as f64 * self.zram_saving()) as u64;
        if bytes <= from_zram {
            (bytes as f64 / self.zram_saving()) as u64
        } else {
            zram_left + (bytes - from_zram).min(storage_left)
        }
    }

    /// What swapping background apps out could still give (ChromeOS counts swap as available the same way): their
    /// anonymous memory (small steps compacted in this decision included; victims not), first into zram's room, where
    /// it saves the share compression saves, then into storage swap (its files, and with `growing` those this decision
    /// adds), where it saves all of it. Growing swap onto storage comes before a kill, except where memory is too short
    /// to wait for a new file's writeback.
    pub fn swap_headroom(&self, growing: bool) -> u64 {
        self.saved_by(0, self.background_anon(), growing)
    }

    /// Anonymous memory of the background apps memorch may act on, this decision's victims left out: what swap could
    /// still take.
    pub(super) fn background_anon(&self) -> u64 {
        self.input
            .apps
            .iter()
            .filter(|a| a.actionable() && a.is_background() && !self.killed.contains(&a.pid))
            .map(|a| a.anon_bytes)
            .sum()
    }

    /// Of `rest` (what a decision needs beyond its headroom), the part more storage swap could cover: background apps'
    /// anonymous memory that neither zram's room nor the storage files' (this decision's included) can take now.
    pub fn beyond_swap_rooms(&self, rest: u64) -> u64 {
        let (zram, storage) = self.swap_rooms(true);
        rest.min(self.background_anon().saturating_sub(zram).saturating_sub(storage))
    }
}
