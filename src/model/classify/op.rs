//! What is classified: one command ([`Op`]) on a queue of a device ([`Request`]), with handles
//! and pointers as plain numbers.

/// One command, with handles and pointers as plain numbers.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Read (`to_device: false`) or write between host memory and a buffer or image, rect too.
    Host {
        mem: usize,
        to_device: bool,
        ptr: usize,
        bytes: u64,
        span: u64,
        rect: bool,
    },
    /// Copy between two memory objects (buffer, rect, image, image↔buffer).
    Copy {
        src: usize,
        dst: usize,
        bytes: u64,
    },
    Fill {
        mem: usize,
        bytes: u64,
    },
    /// Map of `bytes` of a memory object, which the driver returned at `ptr`.
    Map {
        mem: usize,
        flags: u64,
        bytes: u64,
        ptr: usize,
    },
    Unmap {
        mem: usize,
        ptr: usize,
    },
    Migrate {
        mems: Vec<usize>,
        flags: u64,
    },
    /// SVM or USM memcpy.
    PtrCopy {
        dst: usize,
        src: usize,
        bytes: u64,
    },
    /// SVM or USM fill/memset.
    PtrFill {
        ptr: usize,
        bytes: u64,
    },
    /// SVM map; the unmap of an SVM pointer.
    PtrMap {
        ptr: usize,
        flags: u64,
        bytes: u64,
    },
    PtrUnmap {
        ptr: usize,
    },
    /// SVM or USM migrate: (pointer, bytes) pairs.
    PtrMigrate {
        ptrs: Vec<(usize, u64)>,
        flags: u64,
    },
    /// A kernel launch: its memory-object arguments, which move if their contents are elsewhere;
    /// bit `i` of `reads` is set when it only reads `mems[i]` (a `const` or `__constant`
    /// argument, a READ_ONLY buffer), which lets a vendor keep a copy where they were.
    Kernel {
        mems: Vec<usize>,
        reads: u64,
    },
}

/// Whether bit `i` of a kernel's `reads` says it only reads its `i`-th memory argument (past
/// 64 arguments: taken as written).
pub fn only_reads(reads: u64, i: usize) -> bool {
    i < 64 && reads & (1 << i) != 0
}

impl Op {
    /// The memory objects the command names.
    pub fn objects(&self) -> impl Iterator<Item = usize> + '_ {
        let (a, b, rest): (Option<usize>, Option<usize>, &[usize]) = match self {
            Op::Host { mem, .. }
            | Op::Fill { mem, .. }
            | Op::Map { mem, .. }
            | Op::Unmap { mem, .. } => (Some(*mem), None, &[]),
            Op::Copy { src, dst, .. } => (Some(*src), Some(*dst), &[]),
            Op::Migrate { mems, .. } | Op::Kernel { mems, .. } => (None, None, mems),
            _ => (None, None, &[]),
        };
        a.into_iter().chain(b).chain(rest.iter().copied())
    }
}

/// A command on a queue of `device`.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub op: Op,
    pub device: usize,
    pub blocking: bool,
}

/// The handle SVM mappings are recorded under (they belong to no memory object).
pub const SVM_MAPPINGS: usize = 0;
