//! Human-sized numbers for messages and reports: KiB/MiB/GiB, µs/ms/s.

/// `512 B`, `4.0 KiB`, `1.50 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    let digits = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {}", UNITS[unit])
}

/// `850 ns`, `4.56 µs`, `12.3 ms`, `1.23 s`.
pub fn duration(ns: u64) -> String {
    let (value, unit) = match ns {
        0..1_000 => return format!("{ns} ns"),
        1_000..1_000_000 => (ns as f64 / 1e3, "µs"),
        1_000_000..1_000_000_000 => (ns as f64 / 1e6, "ms"),
        _ => (ns as f64 / 1e9, "s"),
    };
    format!("{} {unit}", three_digits(value))
}

/// GB/s (10^9 bytes/s) with three significant digits: `0.512`, `8.25`, `55.1`, `2010`.
pub fn gbps(v: f64) -> String {
    three_digits(v)
}

fn three_digits(v: f64) -> String {
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else if v >= 1.0 {
        2
    } else {
        3
    };
    format!("{v:.digits$}")
}

/// `s` in at most `n` characters: cut, with `…` for what was left out.
/// A size as people write it: `4GiB`, `512 MiB`, `16GB`, `1024` (bytes); `None` if it is not one.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.replace(' ', "");
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kib" | "k" => 1024.0,
        "mib" | "m" => 1024f64.powi(2),
        "gib" | "g" => 1024f64.powi(3),
        "tib" | "t" => 1024f64.powi(4),
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => return None,
    };
    let bytes = n * scale;
    (bytes.is_finite() && bytes < u64::MAX as f64).then_some(bytes as u64)
}

/// `1 call`, `12 calls`.
pub fn counted(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn durations_and_bandwidths_are_human_sized() {
        let cases = [
            (0, "0 ns"),
            (999, "999 ns"),
            (4_560, "4.56 µs"),
            (12_345_678, "12.3 ms"),
            (1_230_000_000, "1.23 s"),
            (3_600_000_000_000, "3600 s"),
        ];
        for (ns, want) in cases {
            assert_eq!(super::duration(ns), want, "{ns}");
        }
        assert_eq!(super::gbps(0.5123), "0.512");
        assert_eq!(super::gbps(8.254), "8.25");
        assert_eq!(super::gbps(55.14), "55.1");
        assert_eq!(super::gbps(2010.4), "2010");
    }

    #[test]
    fn sizes_parse_as_people_write_them() {
        for (s, want) in [
            ("4GiB", Some(4u64 << 30)),
            ("512 MiB", Some(512 << 20)),
            ("16GB", Some(16_000_000_000)),
            ("1.5g", Some(3 << 29)),
            ("1024", Some(1024)),
            ("4 furlongs", None),
            ("GiB", None),
        ] {
            assert_eq!(parse_bytes(s), want, "{s}");
        }
    }

    #[test]
    fn bytes_are_human_sized() {
        let cases = [
            (0, "0 B"),
            (1023, "1023 B"),
            (1024, "1.00 KiB"),
            (4096, "4.00 KiB"),
            (65536, "64.0 KiB"),
            (1 << 20, "1.00 MiB"),
            (256 << 20, "256 MiB"),
            (3 << 29, "1.50 GiB"),
        ];
        for (n, want) in cases.iter() {
            assert_eq!(super::bytes(*n), *want, "{n}");
        }
        assert!(super::bytes(u64::MAX).ends_with("PiB"));
    }
}
