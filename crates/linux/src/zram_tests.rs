//! Tests of zram.rs.

use super::*;
use crate::zram_stats::*;

#[test]
fn block_stat_sectors_become_pages() {
    let text = "     120        0      960       5      240        0     1920       9        0       14       14        0        0        0        0        0        0\n";
    assert_eq!(parse_io_pages(text, 4096), Some((120, 240)));
    assert_eq!(parse_io_pages("1 2", 4096), None);
}

#[test]
fn algorithm_in_brackets() {
    assert_eq!(current_algorithm("[lzo-rle] lzo lz4 \n"), "lzo-rle");
    assert_eq!(current_algorithm("lzo [lz4]"), "lz4");
    assert_eq!(available_algorithms("[lzo-rle] lzo lz4"), vec!["lzo-rle", "lzo", "lz4"]);
}

#[test]
fn sizes_in_mib_or_percent() {
    assert_eq!(ZramSize::parse("512"), Some(ZramSize::Bytes(512 << 20)));
    assert_eq!(ZramSize::parse("25%").unwrap().bytes(1000), 250);
    assert_eq!(ZramSize::parse("0"), None);
    assert_eq!(ZramSize::parse("-5%"), None);
    assert_eq!(ZramSize::parse("lots"), None);
    assert_eq!(ZramSize::parse("17592186044417"), None, "no silent wrap to a 1 MiB device");
}
