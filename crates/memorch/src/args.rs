//! Parsers of size and duration arguments, for clap. Every one checks range and overflow and answers any input, however
//! odd (non-ASCII, huge, negative, NaN), with a value or an error that says what to give: none may panic (proptest
//! below).

use std::time::Duration;

/// `4096`, `64K`, `100M`, `2G`, `1T` (binary units; `k`/`m`/`g`/`t` too) as bytes.
pub fn bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("'{s}' is not a size: give bytes, or a number with K, M, G or T")),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: u64 =
        num.trim().parse().map_err(|_| format!("'{s}' is not a size: give bytes, or a number with K, M, G or T"))?;
    n.checked_mul(1 << shift).ok_or_else(|| format!("'{s}' is too large"))
}

/// A count of MiB (as `--size 512` means) as bytes, at least 1 MiB and at most 1 PiB.
pub fn mib(s: &str) -> Result<u64, String> {
    let n: u64 = s.trim().parse().map_err(|_| format!("'{s}' is not a whole number of MiB"))?;
    if n == 0 {
        return Err("give at least 1 MiB".into());
    }
    n.checked_mul(1 << 20).filter(|b| *b <= 1 << 50).ok_or_else(|| format!("{n} MiB is more than any machine's 1 PiB"))
}

/// A duration in seconds, as `--timeout 2.5`: from `min` to a day.
pub fn seconds_at_least(s: &str, min: f64) -> Result<Duration, String> {
    const DAY: f64 = 86_400.0;
    let v: f64 = s.trim().parse().map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(min..=DAY).contains(&v) {
        return Err(format!("{s} seconds: give from {min} to {DAY}"));
    }
    Ok(Duration::from_secs_f64(v))
}

/// A timeout in seconds (at least a millisecond).
pub fn timeout(s: &str) -> Result<Duration, String> {
    seconds_at_least(s, 0.001)
}

/// A redraw period in seconds (at least 0.1 s).
pub fn period(s: &str) -> Result<Duration, String> {
    seconds_at_least(s, 0.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes() {
        assert_eq!(bytes("4096"), Ok(4096));
        assert_eq!(bytes("64K"), Ok(64 << 10));
        assert_eq!(bytes(" 100m "), Ok(100 << 20));
        assert_eq!(bytes("2G"), Ok(2 << 30));
        assert_eq!(bytes("2g"), Ok(2 << 30));
        assert!(bytes("lots").is_err());
        assert!(bytes("99999999999999G").is_err());
        assert_eq!(bytes("64M\u{a0}"), Ok(64 << 20), "a non-ASCII space after the unit is space");
        assert!(bytes("64é").unwrap_err().contains("not a size"), "a non-ASCII last character");
        assert!(bytes("é").is_err());
        assert!(bytes("99999999999T").unwrap_err().contains("too large"));
        assert!(bytes("-5").is_err());
        assert_eq!(mib("512"), Ok(512 << 20));
        assert!(mib("17592186044417").unwrap_err().contains("1 PiB"), "no silent wrap to 1 MiB");
        assert!(mib("0").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(timeout("2.5"), Ok(Duration::from_millis(2500)));
        assert!(timeout("1e300").unwrap_err().contains("give from"));
        assert!(timeout("NaN").is_err());
        assert!(timeout("inf").is_err());
        assert!(timeout("-1").is_err());
        assert!(period("0.05").is_err());
        assert_eq!(period("1"), Ok(Duration::from_secs(1)));
    }

    proptest! {
        #[test]
        fn no_input_panics(s in "\\PC{0,24}") {
            let _ = bytes(&s);
            let _ = mib(&s);
            let _ = timeout(&s);
            let _ = period(&s);
        }

        #[test]
        fn sizes_round_trip(n in 0u64..(1 << 40), unit in 0usize..4) {
            let (suffix, shift) = [("", 0), ("K", 10), ("M", 20), ("G", 30)][unit];
            let v = n >> shift;
            prop_assert_eq!(bytes(&format!("{v}{suffix}")), Ok(v << shift));
        }

        #[test]
        fn numbers_near_the_limits_never_wrap(s in "[0-9]{15,25}[KMGT]?") {
            if let Ok(b) = bytes(&s) {
                let digits: u128 = s.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse().unwrap();
                prop_assert!(b as u128 >= digits, "{} parsed to less than it says: {}", s, b);
            }
        }
    }
}
