//! Under LD_PRELOAD: programs that open OpenCL themselves (hashcat, OpenCV's T-API) and look each
//! entry point up with `dlsym(handle, "clXxx")` on that handle never reach clxfer's exports. So
//! clxfer exports `dlsym` too: when a program asks the OpenCL loader's handle for an entry point
//! that clxfer exports, it gets clxfer's export (which forwards to that same library), and every
//! other lookup goes to the C library's `dlsym` untouched.
//!
//! `dlsym` knows its caller (`RTLD_NEXT` searches after the object that called it), so the
//! interposer is a naked function that decides in Rust and then *jumps* to the real `dlsym` with the
//! caller's own return address still on the stack: a lookup it does not take behaves exactly as
//! without clxfer. clxfer's own lookups (and those of the std it carries) bind to this function too
//! (`-Bsymbolic-functions`); they are told apart by their return address and always go straight
//! through.
//!
//! Loaded as a loader layer only (`RTLD_LOCAL`), the export interposes nothing for the program.
//! x86-64 only; elsewhere a `dlsym`-using program is seen by the loader layer alone.

use super::api;
use super::preload::base_of;
use crate::vocab::Api;
use std::ffi::{CStr, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

/// The C library's `dlsym`, found once.
static REAL: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
/// The base address of clxfer's own library, found once (0: not yet).
static OWN_BASE: AtomicUsize = AtomicUsize::new(0);

/// `dlsym(handle, name)`: the real one's answer, or clxfer's export of an OpenCL entry point when
/// `handle` is an OpenCL loader the program opened itself.
///
/// # Safety
/// Called as the C library's `dlsym` is.
// Not in the fuzz target: it links this crate into a sanitized executable, where the export
// would take the sanitizer runtime's own early `dlsym` calls.
#[cfg(all(target_arch = "x86_64", not(fuzzing)))]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    // Entry: rsp ≡ 8 (mod 16). Two pushes and 8 bytes keep the calls below 16-byte aligned; the
    // caller's return address is at [rsp + 16] after the pushes.
    core::arch::naked_asm!(
        "push rdi",
        "push rsi",
        "mov rdx, [rsp + 16]",
        "sub rsp, 8",
        "call {swap}",
        "test rax, rax",
        "jnz 2f",
        "call {real}",
        "add rsp, 8",
        "pop rsi",
        "pop rdi",
        "jmp rax",
        "2:",
        "add rsp, 8",
        "pop rsi",
        "pop rdi",
        "ret",
        swap = sym swap,
        real = sym real,
    )
}

/// clxfer's export for this lookup, or null to let the real `dlsym` answer. Never unwinds.
extern "C" fn swap(handle: *mut c_void, name: *const c_char, caller: *const c_void) -> *mut c_void {
    catch_unwind(AssertUnwindSafe(|| unsafe { decide(handle, name, caller) }))
        .unwrap_or(std::ptr::null_mut())
}

unsafe fn decide(handle: *mut c_void, name: *const c_char, caller: *const c_void) -> *mut c_void {
    let none = std::ptr::null_mut();
    // RTLD_DEFAULT (0) and RTLD_NEXT (-1) search the global scope, where clxfer's exports already
    // come first under LD_PRELOAD.
    if name.is_null() || handle.is_null() || handle as isize == -1 {
        return none;
    }
    // SAFETY: dlsym's name is a C string.
    let name = unsafe { CStr::from_ptr(name) };
    if !name.to_bytes().starts_with(b"cl") || is_own(caller) {
        return none;
    }
    let Some(ours) = name
        .to_str()
        .ok()
        .and_then(Api::from_name)
        .and_then(api::export_of)
    else {
        return none;
    };
    let Some(path) = opencl_loader(handle) else {
        return none;
    };
    super::preload::adopt(handle, path);
    crate::debug!(
        "dlsym({}) on the program's own OpenCL library: clxfer's export",
        name.to_string_lossy()
    );
    ours
}

/// The path of `handle`'s library when it is an OpenCL ICD loader (a `libOpenCL.so*` that is not
/// clxfer).
fn opencl_loader(handle: *mut c_void) -> Option<&'static CStr> {
    #[repr(C)]
    struct LinkMap {
        addr: usize,
        name: *const c_char,
    }
    let mut map: *const LinkMap = std::ptr::null();
    // SAFETY: the program passed this handle to dlsym, so it is one dlopen returned; RTLD_DI_LINKMAP
    // writes a pointer to its link map, whose first two fields are the load address and the path.
    let ok = unsafe {
        libc::dlinfo(
            handle,
            libc::RTLD_DI_LINKMAP,
            (&mut map as *mut *const LinkMap).cast(),
        )
    } == 0;
    if !ok || map.is_null() {
        return None;
    }
    // SAFETY: the link map and its name live while the library is loaded, which `adopt` makes
    // the life of the process.
    let map = unsafe { &*map };
    if map.name.is_null() || map.addr == own_base() {
        return None;
    }
    let path = unsafe { CStr::from_ptr(map.name) };
    let bytes = path.to_bytes();
    let file = bytes.rsplit(|&b| b == b'/').next().unwrap_or(bytes);
    file.starts_with(b"libOpenCL.so").then_some(path)
}

/// Whether `addr` lies in clxfer's own library.
fn is_own(addr: *const c_void) -> bool {
    base_of(addr) as usize == own_base()
}

fn own_base() -> usize {
    match OWN_BASE.load(Ordering::Relaxed) {
        0 => {
            let base = base_of(own_base as *const c_void) as usize;
            OWN_BASE.store(base, Ordering::Relaxed);
            base
        }
        base => base,
    }
}

/// The C library's `dlsym`. Found by version (an unversioned lookup of "dlsym" would find this
/// file's), from the C library itself; never null (a stand-in that finds nothing, should glibc
/// have neither version).
extern "C" fn real() -> DlsymFn {
    let mut f = REAL.load(Ordering::Acquire);
    if f.is_null() {
        f = find_real();
        REAL.store(f, Ordering::Release);
    }
    // SAFETY: a function with dlsym's signature (below).
    unsafe { std::mem::transmute::<*mut c_void, DlsymFn>(f) }
}

fn find_real() -> *mut c_void {
    // SAFETY: dlopen of the already loaded C library (RTLD_NOLOAD) and versioned lookups in it.
    unsafe {
        let mut scopes = vec![libc::RTLD_NEXT];
        let libc_handle = libc::dlopen(c"libc.so.6".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        if !libc_handle.is_null() {
            scopes.insert(0, libc_handle);
        }
        for scope in scopes {
            for version in [c"GLIBC_2.34", c"GLIBC_2.2.5"] {
                let f = libc::dlvsym(scope, c"dlsym".as_ptr(), version.as_ptr());
                if !f.is_null() && !is_own(f) {
                    return f;
                }
            }
        }
    }
    nothing as *mut c_void
}

unsafe extern "C" fn nothing(_: *mut c_void, _: *const c_char) -> *mut c_void {
    std::ptr::null_mut()
}
