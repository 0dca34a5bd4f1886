//! Building inputs for engine tests.
#![allow(dead_code)]

use memorch_core::engine::{App, Engine, Event, Input, Preset};
use memorch_core::{Class, Counters, Facility, MemoryState, Psi, PsiLine, Snapshot, SwapDevice, SwapState};

pub const MIB: u64 = 1 << 20;

/// The same snapshot with zram full: nothing more can be compressed, so a shortfall is
/// met by kills.
pub fn zram_full(mut s: Snapshot) -> Snapshot {
    s.swap.used_bytes = s.swap.total_bytes;
    s.swap.devices.iter_mut().for_each(|d| d.used_bytes = d.size_bytes);
    s
}

/// Every swap full, with `files` storage swap files of `file_mb` each (full too): nothing
/// left to grow for a preset that allows as many files.
pub fn swap_exhausted(s: Snapshot, files: u32, file_mb: u64) -> Snapshot {
    let mut s = zram_full(s);
    for i in 0..files {
        let bytes = file_mb * MIB;
        s.swap.devices.push(SwapDevice {
            path: format!("/swap/memorch-swap-{i}.swap"),
            kind: "file".into(),
            size_bytes: bytes,
            used_bytes: bytes,
            priority: -2,
        });
        s.swap.total_bytes += bytes;
        s.swap.used_bytes += bytes;
    }
    s
}

/// The same snapshot with zram full and one storage swap file of `file_mb`, empty.
pub fn zram_full_with_file(s: Snapshot, file_mb: u64) -> Snapshot {
    let mut s = zram_full(s);
    let bytes = file_mb * MIB;
    s.swap.devices.push(SwapDevice {
        path: "/swap/memorch-swap-0.swap".into(),
        kind: "file".into(),
        size_bytes: bytes,
        used_bytes: 0,
        priority: -2,
    });
    s.swap.total_bytes += bytes;
    s
}

/// A domain of `total_mb` with `free_mb` free and `file_mb` of page cache, and a zram swap of
/// a quarter of it, empty.
pub fn snap(total_mb: u64, free_mb: u64, file_mb: u64) -> Snapshot {
    let swap = SwapState {
        devices: vec![SwapDevice {
            path: "/dev/zram0".into(),
            kind: "partition".into(),
            size_bytes: total_mb * MIB / 4,
            used_bytes: 0,
            priority: 100,
        }],
        total_bytes: total_mb * MIB / 4,
        used_bytes: 0,
    };
    Snapshot {
        domain: "cgroup:/test".into(),
        uptime_ms: 0,
        memory: MemoryState {
            total_bytes: total_mb * MIB,
            limited: true,
            used_bytes: (total_mb - free_mb) * MIB,
            free_bytes: free_mb * MIB,
            available_bytes: (free_mb + file_mb) * MIB,
            file_active_bytes: file_mb * MIB / 2,
            file_inactive_bytes: file_mb * MIB - file_mb * MIB / 2,
            anon_bytes: 0,
            shmem_bytes: 0,
            swap_used_bytes: 0,
        },
        swap,
        zram: Facility::unavailable("not in this test"),
        ksm: Facility::unavailable("not in this test"),
        psi: Facility::Available(Psi { source: "test".into(), some: PsiLine::default(), full: PsiLine::default() }),
        counters: Counters::default(),
        processes: None,
    }
}

pub fn with_psi(mut s: Snapshot, some_avg10: f64, full_avg10: f64) -> Snapshot {
    s.psi = Facility::Available(Psi {
        source: "test".into(),
        some: PsiLine { avg10: some_avg10, ..Default::default() },
        full: PsiLine { avg10: full_avg10, ..Default::default() },
    });
    s
}

/// `s` with the PSI `some` stall total at `total_us` (its PSI set first by [`with_psi`]): over
/// looks at a total of 0 before, a stall that goes on (the bands' stall rule).
pub fn with_stall_total(mut s: Snapshot, total_us: u64) -> Snapshot {
    if let Facility::Available(p) = &mut s.psi {
        p.some.total_us = total_us;
    }
    s
}

pub fn app(pid: u32, name: &str, class: Class, anon_mb: u64) -> App {
    App {
        pid,
        name: name.into(),
        class,
        ppid: 1,
        anon_bytes: anon_mb * MIB,
        file_bytes: 0,
        shmem_bytes: 0,
        swap_bytes: 0,
        pss_bytes: Some(anon_mb * MIB),
        so_unshared_bytes: None,
        ksm_mergeable: false,
        ksm_merged_bytes: None,
        frozen: None,
        age_ms: 1000 * pid as u64,
        protected: false,
    }
}

/// An engine on a preset or a variant of one (`memorch:ahead=off`).
pub fn engine(spec: &str) -> Engine {
    Engine::new(Preset::from_spec(spec).unwrap())
}

/// A decision whose actions are all carried out (the engine learns them as done).
pub fn decide(
    e: &mut Engine,
    now_ms: u64,
    s: &Snapshot,
    apps: &[App],
    events: &[Event],
) -> Vec<memorch_core::engine::Action> {
    e.decide_and_assume_done(&Input { now_ms, snapshot: s, apps, events })
}

/// A decision none of whose actions is carried out (a dry run, or every one refused).
pub fn decide_undone(
    e: &mut Engine,
    now_ms: u64,
    s: &Snapshot,
    apps: &[App],
    events: &[Event],
) -> Vec<memorch_core::engine::Action> {
    let input = Input { now_ms, snapshot: s, apps, events };
    let actions = e.decide(&input);
    e.learn(&input, &actions.iter().map(memorch_core::engine::Outcome::undone).collect::<Vec<_>>());
    actions
}
