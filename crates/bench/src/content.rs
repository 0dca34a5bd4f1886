//! Page contents for synthetic apps, mixed as real apps' pages are (published zram measurements: 6 % zero and 2.5 %
//! same-filled pages among swapped-out Android pages, 10–20 % duplicated across apps, the rest text-like at ~2–3× or
//! incompressible).
//!
//! Pure and deterministic: the same seed and page index give the same bytes, in any process, which is what lets two
//! apps hold pages KSM can merge.

/// What one page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// All zero bytes.
    Zero,
    /// One 8-byte word repeated (zram stores it as a "same" page, no pool).
    Same,
    /// Words of English-like text: compresses about 2–3× with lz4/lzo.
    Text,
    /// Random bytes: does not compress.
    Random,
    /// Text from a seed shared by all apps: identical across apps, so KSM merges it.
    Shared,
}

/// A content mix: the share of each kind, in per-mille.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mix {
    pub zero: u32,
    pub same: u32,
    pub shared: u32,
    pub random: u32,
}

impl Mix {
    /// Published zram measurements: zero 6 %, same 2.5 %, duplicated 15 % (of 10–20 %), random 11 % (the measured
    /// corpus), text the rest.
    pub const REALISTIC: Mix = Mix { zero: 60, same: 25, shared: 150, random: 110 };

    /// The kind of page `index`, spread evenly (not in blocks) through the heap.
    pub fn kind(&self, seed: u64, index: u64) -> PageKind {
        let r = (splitmix(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % 1000) as u32;
        let mut edge = self.zero;
        if r < edge {
            return PageKind::Zero;
        }
        edge += self.same;
        if r < edge {
            return PageKind::Same;
        }
        edge += self.shared;
        if r < edge {
            return PageKind::Shared;
        }
        edge += self.random;
        if r < edge {
            return PageKind::Random;
        }
        PageKind::Text
    }
}

/// The seed every app's shared pages come from.
pub const SHARED_SEED: u64 = 0x5eed_5eed;

/// Fill `page` (any length) with content of `kind`.
pub fn fill(page: &mut [u8], kind: PageKind, seed: u64, index: u64) {
    match kind {
        PageKind::Zero => page.fill(0),
        PageKind::Same => {
            let word = (splitmix(seed ^ index) | 1).to_le_bytes();
            for chunk in page.chunks_mut(8) {
                chunk.copy_from_slice(&word[..chunk.len()]);
            }
        }
        PageKind::Random => {
            let mut s = splitmix(seed ^ index ^ 0xdead_beef);
            for chunk in page.chunks_mut(8) {
                s = splitmix(s);
                chunk.copy_from_slice(&s.to_le_bytes()[..chunk.len()]);
            }
        }
        PageKind::Text => text(page, seed ^ index.rotate_left(17)),
        PageKind::Shared => text(page, SHARED_SEED ^ index.rotate_left(17)),
    }
}

/// Fragments of what an app heap holds: UI strings, JSON keys and values, log lines, URLs.
const PHRASES: [&str; 48] = [
    "the ",
    "of the ",
    "and ",
    "to ",
    "in ",
    "is ",
    "for ",
    "with ",
    "on the ",
    "that ",
    "this ",
    "from ",
    "you ",
    "your ",
    "will ",
    "have ",
    "are ",
    "not ",
    "can ",
    "more ",
    "new ",
    "all ",
    "\"id\":",
    "\"name\":\"",
    "\"type\":\"message\",",
    "\"timestamp\":",
    "\"url\":\"https://",
    "\"width\":",
    "\"height\":",
    "\"visible\":true,",
    "\"enabled\":false,",
    "},{",
    "android.widget.",
    "TextView",
    "ImageView",
    "LinearLayout",
    "RecyclerView",
    "onCreate ",
    "Settings",
    "Account",
    "Network",
    "Update ",
    "Download",
    "photo_",
    ".jpg",
    "message ",
    "notification ",
    "\n",
];

/// Text as an app heap holds it: records with repeated keys and varying values (JSON, view attributes), between runs of
/// prose phrases and numbers. Tuned so zram stores it at about 2.5× (lzo-rle) and 2.2× (lz4), inside the thesis's
/// 2.2–3.2× (fig. 3-9) and near ChromeOS's typical 2.6×.
fn text(page: &mut [u8], seed: u64) {
    let mut s = splitmix(seed);
    let mut i = 0;
    let mut tmp = [0u8; 20];
    let put = |page: &mut [u8], i: &mut usize, piece: &[u8]| {
        let end = (*i + piece.len()).min(page.len());
        page[*i..end].copy_from_slice(&piece[..end - *i]);
        *i = end;
    };
    while i < page.len() {
        s = splitmix(s);
        if s.is_multiple_of(3) {
            // {"id":N,"name":"<phrase>","visible":true},
            put(page, &mut i, b"{\"id\":");
            put(page, &mut i, fmt_u64((s >> 8) % 100_000, &mut tmp));
            put(page, &mut i, b",\"name\":\"");
            put(page, &mut i, PHRASES[(s >> 24) as usize % PHRASES.len()].as_bytes());
            put(page, &mut i, PHRASES[(s >> 32) as usize % PHRASES.len()].as_bytes());
            put(page, &mut i, b"\",\"visible\":true},");
        } else if s.is_multiple_of(7) {
            put(page, &mut i, fmt_u64((s >> 8) % 10_000, &mut tmp));
        } else {
            put(page, &mut i, PHRASES[(s >> 16) as usize % PHRASES.len()].as_bytes());
        }
    }
}

fn fmt_u64(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    &buf[i..]
}

/// SplitMix64: a tiny, good, deterministic mixer.
pub fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let (mut a, mut b, mut c) = ([0u8; 4096], [0u8; 4096], [0u8; 4096]);
        fill(&mut a, PageKind::Text, 1, 5);
        fill(&mut b, PageKind::Text, 1, 5);
        fill(&mut c, PageKind::Text, 2, 5);
        assert_eq!(a, b);
        assert_ne!(a, c);
        // Shared pages ignore the app's seed: that is what KSM merges.
        fill(&mut a, PageKind::Shared, 1, 5);
        fill(&mut c, PageKind::Shared, 2, 5);
        assert_eq!(a, c);
    }

    #[test]
    fn text_is_phrases_and_numbers() {
        let mut p = [0u8; 4096];
        fill(&mut p, PageKind::Text, 7, 0);
        let s = std::str::from_utf8(&p).unwrap();
        let phrases = PHRASES.iter().filter(|ph| s.contains(*ph)).count();
        assert!(phrases > 30, "{s}");
        assert!(s.bytes().any(|b| b.is_ascii_digit()));
    }

    #[test]
    fn same_page_is_one_word_repeated() {
        let mut p = [0u8; 4096];
        fill(&mut p, PageKind::Same, 3, 9);
        assert!(p.chunks(8).all(|c| c == &p[..8]));
        assert_ne!(&p[..8], &[0u8; 8]);
    }

    #[test]
    fn realistic_mix_has_the_shares() {
        let mix = Mix::REALISTIC;
        let n = 100_000u64;
        let count = |k| (0..n).filter(|&i| mix.kind(42, i) == k).count() as f64 / n as f64;
        assert!((count(PageKind::Zero) - 0.06).abs() < 0.005);
        assert!((count(PageKind::Same) - 0.025).abs() < 0.005);
        assert!((count(PageKind::Shared) - 0.15).abs() < 0.01);
        assert!((count(PageKind::Random) - 0.11).abs() < 0.01);
    }
}
