//! Page contents for synthetic apps, mixed as real apps' pages are (anchors.md: 6 % zero and
//! 2.5 % same-filled pages among swapped-out Android pages, 10–20 % duplicated across apps,
//! the rest text-like at ~2–3× or incompressible).
//!
//! Pure and deterministic: the same seed and page index give the same bytes, in any process,
//! which is what lets two apps hold pages KSM can merge.

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
    /// anchors.md: zero 6 %, same 2.5 %, duplicated 15 % (of 10–20 %), random 11 % (the
    /// measured corpus), text the rest.
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

const WORDS: [&str; 64] = [
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
    "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
    "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
    "been", "if", "more", "when", "will", "would", "who", "so", "no", "memory", "phone", "app",
    "screen", "launch", "cache", "window", "button", "message", "photo", "music", "video",
    "settings", "account", "network", "update",
];

/// English-like text: common words chosen at random, with a number now and then, as UI
/// strings, JSON and logs in an app's heap look.
fn text(page: &mut [u8], seed: u64) {
    let mut s = splitmix(seed);
    let mut i = 0;
    while i < page.len() {
        s = splitmix(s);
        let w = if s % 11 == 0 {
            // A number: digits compress less than words, as in real heaps.
            let n = (s >> 8) % 100_000;
            let mut tmp = [0u8; 8];
            let txt = fmt_u64(n, &mut tmp);
            let end = (i + txt.len()).min(page.len());
            page[i..end].copy_from_slice(&txt[..end - i]);
            i = end;
            b" " as &[u8]
        } else {
            WORDS[(s >> 16) as usize % WORDS.len()].as_bytes()
        };
        for &b in w.iter().chain(b" ") {
            if i >= page.len() {
                break;
            }
            page[i] = b;
            i += 1;
        }
    }
}

fn fmt_u64(mut n: u64, buf: &mut [u8; 8]) -> &[u8] {
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
    fn text_is_words() {
        let mut p = [0u8; 4096];
        fill(&mut p, PageKind::Text, 7, 0);
        let s = std::str::from_utf8(&p).unwrap();
        assert!(s.split(' ').filter(|w| WORDS.contains(w)).count() > 300, "{s}");
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
