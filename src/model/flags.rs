//! OpenCL flag words as names, for reasons, logs and the trace (`READ_WRITE|ALLOC_HOST_PTR`).

use opencl_sys::*;

pub type Names = &'static [(u64, &'static str)];

pub const MEM_FLAGS: Names = &[
    (CL_MEM_READ_WRITE, "READ_WRITE"),
    (CL_MEM_WRITE_ONLY, "WRITE_ONLY"),
    (CL_MEM_READ_ONLY, "READ_ONLY"),
    (CL_MEM_USE_HOST_PTR, "USE_HOST_PTR"),
    (CL_MEM_ALLOC_HOST_PTR, "ALLOC_HOST_PTR"),
    (CL_MEM_COPY_HOST_PTR, "COPY_HOST_PTR"),
    (CL_MEM_HOST_WRITE_ONLY, "HOST_WRITE_ONLY"),
    (CL_MEM_HOST_READ_ONLY, "HOST_READ_ONLY"),
    (CL_MEM_HOST_NO_ACCESS, "HOST_NO_ACCESS"),
    (CL_MEM_KERNEL_READ_AND_WRITE, "KERNEL_READ_AND_WRITE"),
];

pub const MAP_FLAGS: Names = &[
    (CL_MAP_READ, "READ"),
    (CL_MAP_WRITE, "WRITE"),
    (CL_MAP_WRITE_INVALIDATE_REGION, "WRITE_INVALIDATE_REGION"),
];

pub const MIGRATION_FLAGS: Names = &[
    (CL_MIGRATE_MEM_OBJECT_HOST, "HOST"),
    (CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, "CONTENT_UNDEFINED"),
];

pub const SVM_FLAGS: Names = &[
    (CL_MEM_READ_WRITE, "READ_WRITE"),
    (CL_MEM_WRITE_ONLY, "WRITE_ONLY"),
    (CL_MEM_READ_ONLY, "READ_ONLY"),
    (CL_MEM_SVM_FINE_GRAIN_BUFFER, "SVM_FINE_GRAIN_BUFFER"),
    (CL_MEM_SVM_ATOMICS, "SVM_ATOMICS"),
];

/// `A|B`, with unknown bits as hex, and `0` for no bits; rendered when shown (no allocation).
pub fn decode(flags: u64, names: Names) -> Decoded {
    Decoded(flags, names)
}

#[derive(Clone, Copy)]
pub struct Decoded(u64, Names);

impl std::fmt::Display for Decoded {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let Decoded(flags, names) = *self;
        let mut rest = flags;
        let mut first = true;
        let mut sep = |f: &mut std::fmt::Formatter| {
            let s = if first { "" } else { "|" };
            first = false;
            f.write_str(s)
        };
        for &(bit, name) in names {
            if flags & bit != 0 {
                sep(f)?;
                f.write_str(name)?;
                rest &= !bit;
            }
        }
        if rest != 0 {
            sep(f)?;
            write!(f, "{rest:#x}")?;
        }
        if flags == 0 {
            f.write_str("0")?;
        }
        Ok(())
    }
}

/// The bits [`decode`] wrote as `A|B` (hex for unknown bits, `0` for none); `None` if a part is
/// neither.
pub fn encode(text: &str, names: Names) -> Option<u64> {
    let mut bits = 0;
    for part in text.split('|') {
        bits |= match names.iter().find(|(_, n)| *n == part) {
            Some(&(bit, _)) => bit,
            None if part == "0" => 0,
            None => u64::from_str_radix(part.strip_prefix("0x")?, 16).ok()?,
        };
    }
    Some(bits)
}

/// The OpenCL error codes by name: the core specification's (3.0) and the ICD loader's, from
/// opencl_sys's constants (their numbers are its, written once).
macro_rules! named {
    ($($name:ident),* $(,)?) => {
        &[$(($name, stringify!($name))),*]
    };
}
const ERRORS: &[(i32, &str)] = named![
    CL_SUCCESS,
    CL_DEVICE_NOT_FOUND,
    CL_DEVICE_NOT_AVAILABLE,
    CL_COMPILER_NOT_AVAILABLE,
    CL_MEM_OBJECT_ALLOCATION_FAILURE,
    CL_OUT_OF_RESOURCES,
    CL_OUT_OF_HOST_MEMORY,
    CL_PROFILING_INFO_NOT_AVAILABLE,
    CL_MEM_COPY_OVERLAP,
    CL_IMAGE_FORMAT_MISMATCH,
    CL_IMAGE_FORMAT_NOT_SUPPORTED,
    CL_BUILD_PROGRAM_FAILURE,
    CL_MAP_FAILURE,
    CL_MISALIGNED_SUB_BUFFER_OFFSET,
    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
    CL_COMPILE_PROGRAM_FAILURE,
    CL_LINKER_NOT_AVAILABLE,
    CL_LINK_PROGRAM_FAILURE,
    CL_DEVICE_PARTITION_FAILED,
    CL_KERNEL_ARG_INFO_NOT_AVAILABLE,
    CL_INVALID_VALUE,
    CL_INVALID_DEVICE_TYPE,
    CL_INVALID_PLATFORM,
    CL_INVALID_DEVICE,
    CL_INVALID_CONTEXT,
    CL_INVALID_QUEUE_PROPERTIES,
    CL_INVALID_COMMAND_QUEUE,
    CL_INVALID_HOST_PTR,
    CL_INVALID_MEM_OBJECT,
    CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
    CL_INVALID_IMAGE_SIZE,
    CL_INVALID_SAMPLER,
    CL_INVALID_BINARY,
    CL_INVALID_BUILD_OPTIONS,
    CL_INVALID_PROGRAM,
    CL_INVALID_PROGRAM_EXECUTABLE,
    CL_INVALID_KERNEL_NAME,
    CL_INVALID_KERNEL_DEFINITION,
    CL_INVALID_KERNEL,
    CL_INVALID_ARG_INDEX,
    CL_INVALID_ARG_VALUE,
    CL_INVALID_ARG_SIZE,
    CL_INVALID_KERNEL_ARGS,
    CL_INVALID_WORK_DIMENSION,
    CL_INVALID_WORK_GROUP_SIZE,
    CL_INVALID_WORK_ITEM_SIZE,
    CL_INVALID_GLOBAL_OFFSET,
    CL_INVALID_EVENT_WAIT_LIST,
    CL_INVALID_EVENT,
    CL_INVALID_OPERATION,
    CL_INVALID_GL_OBJECT,
    CL_INVALID_BUFFER_SIZE,
    CL_INVALID_MIP_LEVEL,
    CL_INVALID_GLOBAL_WORK_SIZE,
    CL_INVALID_PROPERTY,
    CL_INVALID_IMAGE_DESCRIPTOR,
    CL_INVALID_COMPILER_OPTIONS,
    CL_INVALID_LINKER_OPTIONS,
    CL_INVALID_DEVICE_PARTITION_COUNT,
    CL_INVALID_PIPE_SIZE,
    CL_INVALID_DEVICE_QUEUE,
    CL_INVALID_SPEC_ID,
    CL_MAX_SIZE_RESTRICTION_EXCEEDED,
    CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
    CL_PLATFORM_NOT_FOUND_KHR,
];

/// The name of an OpenCL error code, for reasons and failed calls (`CL_INVALID_VALUE`).
pub fn error_name(code: i32) -> &'static str {
    ERRORS
        .iter()
        .find(|(c, _)| *c == code)
        .map_or("an OpenCL error", |(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_flag_words() {
        let cases: &[(u64, Names, &str)] = &[
            (0, MEM_FLAGS, "0"),
            (
                CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                MEM_FLAGS,
                "READ_WRITE|ALLOC_HOST_PTR",
            ),
            (
                CL_MEM_USE_HOST_PTR | (1 << 40),
                MEM_FLAGS,
                "USE_HOST_PTR|0x10000000000",
            ),
            (
                CL_MAP_WRITE_INVALIDATE_REGION,
                MAP_FLAGS,
                "WRITE_INVALIDATE_REGION",
            ),
            (CL_MAP_READ | CL_MAP_WRITE, MAP_FLAGS, "READ|WRITE"),
            (
                CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED,
                MIGRATION_FLAGS,
                "HOST|CONTENT_UNDEFINED",
            ),
        ];
        for &(flags, names, want) in cases {
            assert_eq!(decode(flags, names).to_string(), want);
        }
        assert_eq!(error_name(CL_INVALID_MEM_OBJECT), "CL_INVALID_MEM_OBJECT");
        assert_eq!(error_name(-61), "CL_INVALID_BUFFER_SIZE");
        assert_eq!(error_name(-9999), "an OpenCL error");
        // One name per code.
        let mut codes: Vec<i32> = ERRORS.iter().map(|e| e.0).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), ERRORS.len());
    }
}

#[cfg(test)]
mod encode_tests {
    use super::*;

    #[test]
    fn encode_reads_back_what_decode_wrote() {
        for flags in [
            0,
            CL_MAP_READ,
            CL_MAP_WRITE | CL_MAP_READ,
            CL_MAP_WRITE_INVALIDATE_REGION | 0x100,
        ] {
            assert_eq!(
                encode(&decode(flags, MAP_FLAGS).to_string(), MAP_FLAGS),
                Some(flags)
            );
        }
        assert_eq!(encode("HOST|CONTENT_UNDEFINED", MIGRATION_FLAGS), Some(3));
        assert_eq!(encode("NOPE", MAP_FLAGS), None);
    }
}
