//! The words of OpenCL C's types that the judge reads a parameter's declaration by: address
//! spaces, qualifiers, scalar and vector types, images.

pub const ADDRESS: [&str; 10] = [
    "__global",
    "global",
    "__constant",
    "constant",
    "__local",
    "local",
    "__private",
    "private",
    "__generic",
    "generic",
];
pub const QUALIFIERS: [&str; 12] = [
    "const",
    "volatile",
    "restrict",
    "__restrict",
    "__read_only",
    "read_only",
    "__write_only",
    "write_only",
    "__read_write",
    "read_write",
    "unsigned",
    "signed",
];
pub const SCALARS: [&str; 17] = [
    "bool",
    "char",
    "uchar",
    "short",
    "ushort",
    "int",
    "uint",
    "long",
    "ulong",
    "float",
    "double",
    "half",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "void",
];

pub fn is_image(w: &str) -> bool {
    w.starts_with("image") && w.ends_with("_t")
}

/// A scalar, a vector of one (`float4`), a sampler or an event: never memory.
pub fn plain_type(w: &str) -> bool {
    let base = w.trim_end_matches(char::is_numeric);
    SCALARS.contains(&w)
        || (SCALARS.contains(&base) && ["2", "3", "4", "8", "16"].contains(&&w[base.len()..]))
        || matches!(w, "sampler_t" | "event_t" | "struct" | "union" | "enum")
}
