//! Under LD_PRELOAD: finding the real OpenCL functions. `dlsym(RTLD_NEXT)` first (the program linked
//! the loader), else the loader the program opened itself and looked its entry points up in
//! (`dlsym.rs` handed it clxfer's exports), else `dlopen(CLXFER_OPENCL_LIB)` (the program opened
//! it privately, as a Python extension does); never a symbol of clxfer itself (a library named
//! libOpenCL.so.1 that opens "libOpenCL.so.1" gets itself back). With nothing found, calls fail as
//! a loader with no platforms.

use super::api;
use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::{CL_PLATFORM_NOT_FOUND_KHR, cl_int, cl_platform_id, cl_uint};
use std::ffi::{CStr, CString, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The OpenCL loader the program opened and asked for entry points (`dlsym.rs`).
static ADOPTED: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

static REAL: OnceLock<cl_icd_dispatch> = OnceLock::new();
static SOURCE: OnceLock<String> = OnceLock::new();

/// The real functions, resolved on the first call.
#[inline(always)]
pub fn real() -> &'static cl_icd_dispatch {
    REAL.get_or_init(resolve)
}

/// Where the real functions came from, once resolved.
pub fn source() -> Option<&'static str> {
    SOURCE.get().map(String::as_str)
}

fn resolve() -> cl_icd_dispatch {
    // SAFETY: all-zero is an all-`None` table; symbols are only taken when they are not ours.
    let mut table: cl_icd_dispatch = unsafe { std::mem::zeroed() };
    if let Some(t) = from(libc::RTLD_NEXT, "found by dlsym(RTLD_NEXT)") {
        return t;
    }
    let adopted = ADOPTED.load(Ordering::Acquire);
    if !adopted.is_null()
        && let Some(t) = from(
            adopted,
            "the library the program opened and looked the entry points up in",
        )
    {
        return t;
    }
    let lib = crate::config::global().opencl_lib.clone();
    match open(&lib) {
        Ok(handle) => {
            if let Some(t) = from(handle, &format!("dlopen of CLXFER_OPENCL_LIB={lib}")) {
                return t;
            }
        }
        Err(why) => {
            crate::warn!(
                "no OpenCL library to forward to: dlsym(RTLD_NEXT) found none and {why}; \
                 OpenCL calls will fail as with no platforms (set CLXFER_OPENCL_LIB to the ICD loader)"
            );
            let _ = SOURCE.set("none".into());
            table.clGetPlatformIDs = Some(no_platforms);
        }
    }
    table
}

/// The table of the functions `handle` (or `RTLD_NEXT`) gives, none of them clxfer's, and where
/// they came from noted (`how`); `None` when it has no `clGetPlatformIDs`.
fn from(handle: *mut c_void, how: &str) -> Option<cl_icd_dispatch> {
    let sym = move |name: &CStr| not_ours(unsafe { libc::dlsym(handle, name.as_ptr()) });
    if sym(c"clGetPlatformIDs").is_null() {
        return None;
    }
    // SAFETY: all-zero is an all-`None` table; `sym` gives null or the named function.
    let mut table: cl_icd_dispatch = unsafe { std::mem::zeroed() };
    unsafe { api::fill_from(&mut table, sym) };
    note(format!(
        "{} ({how})",
        library_of(table.clGetPlatformIDs.map(|f| f as *const c_void))
    ));
    Some(table)
}

/// The program opened `handle`, an OpenCL loader (the file `path`), and looked an entry point up
/// in it: clxfer's exports forward to it (the first such library; a later one is the same loader
/// or ignored). clxfer takes a reference of its own, so a program's `dlclose` never unloads the
/// functions it forwards to.
pub(super) fn adopt(handle: *mut c_void, path: &CStr) {
    if ADOPTED
        .compare_exchange(
            std::ptr::null_mut(),
            handle,
            Ordering::AcqRel,
            Ordering::Relaxed,
        )
        .is_ok()
    {
        // SAFETY: the library is loaded (RTLD_NOLOAD only adds a reference); never closed.
        unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    }
}

fn note(source: String) {
    crate::debug!("LD_PRELOAD: forwarding to {source}");
    let _ = SOURCE.set(source);
}

/// Opens `lib` for good (the handle is never closed) and checks it is not clxfer.
fn open(lib: &str) -> Result<*mut c_void, String> {
    let c = CString::new(lib).map_err(|_| format!("CLXFER_OPENCL_LIB={lib:?} holds a NUL byte"))?;
    // SAFETY: plain dlopen; the handle stays open for the life of the process.
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        let err = unsafe { libc::dlerror() };
        let err = if err.is_null() {
            "unknown error".into()
        } else {
            unsafe { CStr::from_ptr(err) }
                .to_string_lossy()
                .into_owned()
        };
        return Err(format!("dlopen({lib}) failed: {err}"));
    }
    if not_ours(unsafe { libc::dlsym(handle, c"clGetPlatformIDs".as_ptr()) }).is_null() {
        return Err(format!(
            "dlopen({lib}) gave clxfer itself or a library without clGetPlatformIDs"
        ));
    }
    Ok(handle)
}

/// `addr`, unless it is null or inside clxfer's own library.
fn not_ours(addr: *mut c_void) -> *mut c_void {
    if addr.is_null() || base_of(addr) == base_of(not_ours as *const c_void) {
        std::ptr::null_mut()
    } else {
        addr
    }
}

/// The load address of the object that holds `addr` (null: none).
pub(super) fn base_of(addr: *const c_void) -> *mut c_void {
    // SAFETY: dladdr only reads the loader's tables.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(addr, &mut info) } == 0 {
        std::ptr::null_mut()
    } else {
        info.dli_fbase
    }
}

/// The file that holds `addr`, for messages and `clxfer doctor`.
pub fn library_of(addr: Option<*const c_void>) -> String {
    let Some(addr) = addr else { return "?".into() };
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return "?".into();
    }
    let name = unsafe { CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    std::fs::canonicalize(&name)
        .map(|p| p.display().to_string())
        .unwrap_or(name)
}

/// `clGetPlatformIDs` of a loader that found no platforms.
unsafe extern "C" fn no_platforms(
    _num_entries: cl_uint,
    _platforms: *mut cl_platform_id,
    num_platforms: *mut cl_uint,
) -> cl_int {
    if !num_platforms.is_null() {
        // SAFETY: the program passed a writable cl_uint.
        unsafe { *num_platforms = 0 };
    }
    CL_PLATFORM_NOT_FOUND_KHR
}
