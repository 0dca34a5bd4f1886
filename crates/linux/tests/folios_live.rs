//! Anonymous memory in 64 kB folios (folios.rs), for real: the guard sets the machine's
//! policy and puts it back, and with it a heap paged out to zram comes back a whole folio a
//! fault (Linux 6.12+), which is what the `folios` switch of the memorch preset is for. On a
//! boot where zswap was ever on, the kernel reads them back a page a fault instead
//! (`folios::whole_swapin_blocked`); the test then checks that this is what happens, so the
//! daemon's warning and the bench's skip rest on a fact, not on a guess.

use memorch_linux::folios::{self, FolioGuard, THP_DIR};
use memorch_linux::zram::ZramGuard;
use memorch_linux::{testkit, SysRoot};

const KB: u32 = 64;
const LEN: usize = 16 << 20;

/// Major faults of the calling thread: a page or folio read back from zram is one each.
fn major_faults() -> u64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) }, 0, "getrusage");
    usage.ru_majflt as u64
}

fn stat(root: &SysRoot, name: &str) -> u64 {
    root.read_u64(format!("{THP_DIR}/hugepages-{KB}kB/stats/{name}")).expect("mTHP stats")
}

/// A private anonymous mapping of `LEN` bytes aligned to the folio size, unmapped on drop.
struct Heap {
    base: *mut libc::c_void,
    at: *mut u8,
}

impl Heap {
    fn new() -> Heap {
        let align = (KB as usize) << 10;
        // SAFETY: an anonymous private mapping; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                LEN + align,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED, "mmap");
        let at = ((base as usize + align - 1) & !(align - 1)) as *mut u8;
        Heap { base, at }
    }

    fn page(&self, i: usize) -> *mut u64 {
        // SAFETY: i < LEN / 4096, inside the mapping.
        unsafe { self.at.add(i * 4096) as *mut u64 }
    }
}

impl Drop for Heap {
    fn drop(&mut self) {
        // SAFETY: the mapping made in new().
        unsafe { libc::munmap(self.base, LEN + ((KB as usize) << 10)) };
    }
}

#[test]
fn a_heap_goes_out_to_zram_in_folios_comes_back_whole_unless_zswap_was_on_and_the_policy_is_put_back() {
    if !testkit::zram_facility() || !testkit::folio_facility(KB) {
        return;
    }
    let _lock = testkit::machine_test_lock();
    if !testkit::no_foreign_swap() {
        return;
    }
    let root = SysRoot::live();
    let before = folios::policy(&root, KB).unwrap();
    let _zram = ZramGuard::setup(&root, 64 << 20, Some("lz4"), 100).expect("zram");
    let pages = LEN / 4096;
    let folios_in_heap = (LEN / ((KB as usize) << 10)) as u64;
    {
        let _guard = FolioGuard::set(&root, KB, "always").expect("set the policy");
        assert_eq!(folios::policy(&root, KB).unwrap(), "always");
        let heap = Heap::new();
        let faulted = stat(&root, "anon_fault_alloc");
        for i in 0..pages {
            // SAFETY: inside the mapping.
            unsafe { heap.page(i).write(i as u64 * 2654435761) };
        }
        // Counters are machine-wide: other processes can only add to them.
        assert!(
            stat(&root, "anon_fault_alloc") - faulted >= folios_in_heap * 9 / 10,
            "the heap was faulted in {KB} kB folios"
        );
        let blocked = folios::whole_swapin_blocked(&root);
        let (out, back) = (stat(&root, "swpout"), stat(&root, "swpin"));
        // SAFETY: our own mapping.
        assert_eq!(unsafe { libc::madvise(heap.at as *mut libc::c_void, LEN, libc::MADV_PAGEOUT) }, 0, "MADV_PAGEOUT");
        assert!(stat(&root, "swpout") - out >= folios_in_heap * 9 / 10, "the folios went out to zram whole");
        let faults = major_faults();
        for i in 0..pages {
            // SAFETY: inside the mapping.
            assert_eq!(unsafe { heap.page(i).read() }, i as u64 * 2654435761, "page {i} came back as it was");
        }
        let (faults, whole) = (major_faults() - faults, stat(&root, "swpin") - back);
        match blocked {
            None => assert!(whole >= folios_in_heap * 9 / 10, "the folios came back whole: one fault each"),
            Some(why) => {
                eprintln!("NOTE: {why}; checking that the heap comes back a page a fault, as the daemon warns: {faults} faults, {whole} whole folios for {pages} pages");
                // No process on this boot can read a large folio back whole, so the machine-wide
                // counter stays still; this thread's faults count the pages one by one.
                assert!(whole < folios_in_heap / 10, "{whole} folios came back whole, though {why}");
                assert!(
                    faults >= pages as u64 * 9 / 10,
                    "{faults} faults for {pages} pages: not a page a fault, though {why}"
                );
            }
        }
    }
    assert_eq!(folios::policy(&root, KB).unwrap(), before, "the policy is put back");
}

#[test]
fn a_size_the_kernel_does_not_offer_is_refused_by_name_and_changes_nothing() {
    let root = SysRoot::live();
    let err = FolioGuard::set(&root, 3, "always").expect_err("no 3 kB folios").to_string();
    assert!(err.contains("3 kB") && err.contains("swap.anon_folio_kb"), "{err}");
    if let Some(&kb) = folios::sizes(&root).first() {
        let before = folios::policy(&root, kb).unwrap();
        let err = FolioGuard::set(&root, kb, "sometimes").expect_err("not a policy").to_string();
        assert!(err.contains("sometimes"), "{err}");
        assert_eq!(folios::policy(&root, kb).unwrap(), before);
    }
}
