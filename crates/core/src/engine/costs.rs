//! What moving a page costs on this device, learned from what was done (docs/design.md, "The cost model"): the user's
//! wait for a page read back on a return, from zram and from storage, and the CPU a squeeze spends a page, into each.
//! Kept with the app statistics.

use serde::{Deserialize, Serialize};

/// Where a squeezed page goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swap {
    Zram,
    Storage,
}

/// Until measured: a page faulted back from lz4 zram (5-7 µs, docs/performance.md), from a storage swap file a page at
/// a time (about three times that), lz4's 350 MB/s a core, and the CPU of a page squeezed to storage (the reclaim's
/// scan and its bio; 10-14 µs measured on realapps, as much as compression).
pub const PRIOR_READ_US: [f64; 2] = [7.0, 20.0];
pub const PRIOR_CPU_US: [f64; 2] = [11.5, 11.0];

/// The weight of a new sample: the device's costs drift slowly, one odd return says little.
const WEIGHT: f64 = 0.2;

/// A squeeze of fewer pages than this says nothing of a page's cost (1 MiB).
pub const MIN_SAMPLE_PAGES: u64 = 256;

/// Returns a read-back cost is fitted through before it is used.
pub const MIN_FIT_SAMPLES: u64 = 6;

/// A sample outside these bounds (µs a page) is another cost than a page's (the app's own work, a stall): left out.
const SAMPLE_US: (f64, f64) = (0.2, 2_000.0);

/// A least-squares line through returns' extra time (over the app's quickest) against the pages each read back, older
/// returns weighing less: its slope is what a page costs, its intercept what else a slow return waits for (a
/// collection, a frame, the CPU).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadFit {
    pub samples: u64,
    sums: [f64; 5],
}

impl ReadFit {
    fn add(&mut self, pages: f64, us: f64) {
        let s = &mut self.sums;
        s.iter_mut().for_each(|x| *x *= 1.0 - WEIGHT / 4.0);
        for (x, v) in s.iter_mut().zip([1.0, pages, us, pages * pages, pages * us]) {
            *x += v;
        }
        self.samples += 1;
    }

    /// The slope, once [`MIN_FIT_SAMPLES`] returns with pages of different counts gave one in the range a page's cost
    /// can be.
    pub fn slope(&self) -> Option<f64> {
        let [n, x, y, xx, xy] = self.sums;
        let spread = n * xx - x * x;
        if self.samples < MIN_FIT_SAMPLES || spread <= 0.0 {
            return None;
        }
        let slope = (n * xy - x * y) / spread;
        (SAMPLE_US.0..=SAMPLE_US.1).contains(&slope).then_some(slope)
    }
}

/// The device's learned costs, µs a page; `None` until learned.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceCosts {
    /// A return's wait for a page read back from zram, as launchers' return times show it.
    pub zram_read_us: Option<f64>,
    /// The same from storage swap.
    pub storage_read_us: Option<f64>,
    /// The returns they are fitted through.
    #[serde(default)]
    pub zram_returns: ReadFit,
    #[serde(default)]
    pub storage_returns: ReadFit,
    /// The daemon's CPU a page squeezed into zram (the compression), thread time.
    pub zram_cpu_us: Option<f64>,
    /// The daemon's CPU a page squeezed to a storage file.
    pub storage_cpu_us: Option<f64>,
}

/// A moving average that gives a new `sample` the weight `weight` (the first is taken whole).
pub(crate) fn ewma_by(old: Option<f64>, sample: f64, weight: f64) -> f64 {
    old.map_or(sample, |o| o + weight * (sample - o))
}

impl DeviceCosts {
    /// The wait a page read back from `swap` adds to a return: learned, else the prior.
    pub fn read_us(&self, swap: Swap) -> f64 {
        match swap {
            Swap::Zram => self.zram_read_us.unwrap_or(PRIOR_READ_US[0]),
            Swap::Storage => self.storage_read_us.unwrap_or(PRIOR_READ_US[1]),
        }
    }

    /// The daemon's CPU a page squeezed into `swap`: learned, else the prior.
    pub fn cpu_us(&self, swap: Swap) -> f64 {
        match swap {
            Swap::Zram => self.zram_cpu_us.unwrap_or(PRIOR_CPU_US[0]),
            Swap::Storage => self.storage_cpu_us.unwrap_or(PRIOR_CPU_US[1]),
        }
    }

    /// A return that took `extra_ms` longer than the app's quickest while `pages` came back from `swap`.
    pub fn observe_return(&mut self, swap: Swap, extra_ms: f64, pages: u64) {
        let (fit, slot) = match swap {
            Swap::Zram => (&mut self.zram_returns, &mut self.zram_read_us),
            Swap::Storage => (&mut self.storage_returns, &mut self.storage_read_us),
        };
        fit.add(pages as f64, extra_ms.max(0.0) * 1000.0);
        *slot = fit.slope().or(*slot);
    }

    /// A squeeze into `swap` that moved `pages` for `cpu_us` of the daemon's thread time.
    pub fn observe_squeeze(&mut self, swap: Swap, cpu_us: u64, pages: u64) {
        if pages < MIN_SAMPLE_PAGES {
            return;
        }
        let slot = match swap {
            Swap::Zram => &mut self.zram_cpu_us,
            Swap::Storage => &mut self.storage_cpu_us,
        };
        let us = cpu_us as f64 / pages as f64;
        if (SAMPLE_US.0..=SAMPLE_US.1).contains(&us) {
            *slot = Some(ewma_by(*slot, us, WEIGHT));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_read_back_costs_the_slope_of_the_returns_not_their_average() {
        let mut c = DeviceCosts::default();
        // Each return waits 30 ms for other things, and 10 µs a page read back from storage.
        for (i, pages) in [1_000u64, 4_000, 2_000, 8_000, 500].into_iter().enumerate() {
            c.observe_return(Swap::Storage, 30.0 + pages as f64 * 0.010, pages);
            assert_eq!(c.read_us(Swap::Storage), PRIOR_READ_US[1], "the prior until six: {i}");
        }
        c.observe_return(Swap::Storage, 30.0 + 16.0, 1_600);
        assert!((c.read_us(Swap::Storage) - 10.0).abs() < 1e-6, "{:?}", c.storage_read_us);
        assert_eq!(c.read_us(Swap::Zram), PRIOR_READ_US[0], "zram's cost is its own");
        let mut flat = DeviceCosts::default();
        for _ in 0..8 {
            flat.observe_return(Swap::Zram, 50.0, 2_000);
        }
        assert_eq!(flat.zram_read_us, None, "the same count every time: no slope to read");
    }

    #[test]
    fn small_or_odd_squeezes_are_left_out() {
        let mut c = DeviceCosts::default();
        c.observe_squeeze(Swap::Zram, 1_000, 10);
        c.observe_squeeze(Swap::Zram, 1_000_000, 300);
        assert_eq!(c, DeviceCosts::default());
        c.observe_squeeze(Swap::Zram, 2_560, 256);
        assert_eq!(c.cpu_us(Swap::Zram), 10.0);
    }
}
