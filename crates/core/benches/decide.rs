//! One engine decision over a snapshot of 500 apps under pressure, for every preset.
//!
//!     cargo bench -p memorch-core --bench decide

use divan::Bencher;
use memorch_core::engine::{App, Engine, Event, Input, Preset, PressureLevel};
use memorch_core::{Class, Counters, Facility, MemoryState, Psi, PsiLine, Snapshot, SwapDevice, SwapState};

fn main() {
    divan::main();
}

const MIB: u64 = 1 << 20;

fn snapshot() -> Snapshot {
    let total = 4096 * MIB;
    Snapshot {
        domain: "bench".into(),
        uptime_ms: 0,
        memory: MemoryState {
            total_bytes: total,
            limited: true,
            used_bytes: total - 60 * MIB,
            free_bytes: 60 * MIB,
            available_bytes: 150 * MIB,
            file_active_bytes: 50 * MIB,
            file_inactive_bytes: 40 * MIB,
            anon_bytes: 0,
            shmem_bytes: 0,
            swap_used_bytes: 0,
        },
        swap: SwapState {
            devices: vec![SwapDevice {
                path: "/dev/zram0".into(),
                kind: "partition".into(),
                size_bytes: 2048 * MIB,
                used_bytes: 1500 * MIB,
                priority: 100,
            }],
            total_bytes: 2048 * MIB,
            used_bytes: 1500 * MIB,
        },
        zram: Facility::unavailable("bench"),
        ksm: Facility::unavailable("bench"),
        psi: Facility::Available(Psi {
            source: "bench".into(),
            some: PsiLine { avg10: 12.0, ..Default::default() },
            full: PsiLine { avg10: 3.0, ..Default::default() },
        }),
        counters: Counters::default(),
        processes: None,
    }
}

fn apps() -> Vec<App> {
    (0..500u32)
        .map(|i| App {
            pid: 1000 + i,
            name: format!("app{}", i % 120),
            class: Class::ALL[1 + (i as usize * 7) % 8],
            ppid: 1 + i % 3,
            anon_bytes: (5 + (i as u64 * 37) % 300) * MIB,
            file_bytes: (i as u64 % 50) * MIB,
            shmem_bytes: 0,
            swap_bytes: (i as u64 % 20) * MIB,
            pss_bytes: Some((4 + (i as u64 * 37) % 280) * MIB),
            so_unshared_bytes: Some((i as u64 % 7) * MIB),
            ksm_mergeable: i % 2 == 0,
            ksm_merged_bytes: None,
            frozen: None,
            age_ms: i as u64 * 1000,
            protected: i % 97 == 0,
        })
        .collect()
}

#[divan::bench(args = ["kernel", "lmk-classic", "compcache", "thesis", "lmkd", "mos", "swam", "memorch"])]
fn decide_500_apps(b: Bencher, preset: &str) {
    let snap = snapshot();
    let apps = apps();
    let events = [
        Event::Pressure { level: PressureLevel::Partial },
        Event::LaunchIntent { app: "app7".into(), expected_bytes: Some(400 * MIB) },
        Event::Home,
    ];
    let engine = Engine::new(Preset::by_name(preset).unwrap());
    // Return the engine too, so dropping it (its maps) falls outside the timing.
    b.with_inputs(|| engine.clone()).bench_local_values(|mut e| {
        let actions = e.decide(&Input { now_ms: 10_000, snapshot: &snap, apps: &apps, events: &events });
        (e, actions)
    });
}
