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

#[cfg(test)]
mod tests {
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
