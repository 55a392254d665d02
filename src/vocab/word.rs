//! Comparing a word of clxfer's vocabulary (a rule id, a memory kind) on every enqueue: against a
//! word known at compile time, without a call to `memcmp` (a length test, then a few loads the
//! compiler unrolls). `str::ends_with` and `==` call it, and on the PoCL storm finding the rules
//! a classification cited took ~110 instructions per enqueue that way.

/// `a` is exactly `b`.
#[inline(always)]
pub fn is<const N: usize>(a: &str, b: &[u8; N]) -> bool {
    <&[u8; N]>::try_from(a.as_bytes()).is_ok_and(|a| a == b)
}

/// `a` ends with `b`.
#[inline(always)]
pub fn ends<const N: usize>(a: &str, b: &[u8; N]) -> bool {
    let a = a.as_bytes();
    a.len() >= N && <&[u8; N]>::try_from(&a[a.len() - N..]).is_ok_and(|a| a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_compare_as_str_does() {
        let table: &[(&str, bool, bool)] = &[
            // (a, a is "pageable", a ends with ".alignment")
            ("pageable", true, false),
            ("pageabl", false, false),
            ("pageables", false, false),
            ("", false, false),
            ("nvidia.alignment", false, true),
            (".alignment", false, true),
            ("alignment", false, false),
            ("nvidia.alignmenT", false, false),
        ];
        for &(a, exact, suffix) in table {
            assert_eq!(is(a, b"pageable"), exact, "{a}");
            assert_eq!(is(a, b"pageable"), a == "pageable", "{a}");
            assert_eq!(ends(a, b".alignment"), suffix, "{a}");
            assert_eq!(ends(a, b".alignment"), a.ends_with(".alignment"), "{a}");
        }
    }
}
