//! Extension functions (USM, ARM SVM, host import) are not in the dispatch table: programs get them
//! from `clGetExtensionFunctionAddress(ForPlatform)`. clxfer calls down, keeps the driver's pointer
//! per platform, and hands back its own wrapper for the functions in the `extension` list; any other
//! name gets exactly what the driver gave.

use super::{Api, Call, Hook, Span, args};
use crate::sync::{Mutex, RwLock};
use std::ffi::{CStr, c_char, c_void};
use std::marker::PhantomData;

/// One pointer a driver gave: which function, for which dispatch table (0: unknown), where.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Real {
    api: Api,
    dispatch: usize,
    addr: usize,
}

/// Bounded: one row per (function, platform) pair, deduplicated.
static REALS: RwLock<Vec<Real>> = RwLock::new(Vec::new());

/// Names the program asked for and did not get, said once each; at most [`NAMES`].
static NOT_FOUND: Mutex<Vec<String>> = Mutex::new(Vec::new());
const NAMES: usize = 256;

/// Before a fork: the tables' locks, so that a child never finds them held (`lifecycle.rs`).
pub fn hold_for_fork() -> Box<dyn std::any::Any> {
    Box::new((REALS.write(), NOT_FOUND.lock()))
}

/// The driver gave no function for `name`: said once per name, and recorded for the report. A
/// function no implementation has (a porting guide's advice) is said as a warning; one this
/// platform lacks only under CLXFER_LOG=info, since programs probe for optional extensions
/// (clinfo asks for dozens).
///
/// # Safety
/// `name` is null or the NUL-terminated string the program passed.
unsafe fn not_found(name: *const c_char, at: u64) {
    if name.is_null() {
        return;
    }
    let name = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    {
        let mut said = NOT_FOUND.lock();
        if said.len() >= NAMES || said.contains(&name) {
            return;
        }
        said.push(name.clone());
    }
    match crate::model::rules::no_such_function(&name) {
        Some(why) => crate::warn!(
            "the program asked for {name}, a function no OpenCL implementation has ({why}); to \
             have host memory the driver can DMA from, use {}",
            crate::model::rules::HOST_REGISTRATION
        ),
        None => crate::info!(
            "this platform offers no {name} (clGetExtensionFunctionAddress returned NULL)"
        ),
    }
    crate::sink::buffer::push_with(|tid| {
        crate::sink::record::Record::Missing(Box::new(crate::sink::record::Missing {
            name,
            tid,
            at,
        }))
    });
}

/// The address of an object's ICD dispatch table (0 for null): all objects of one platform share
/// it.
///
/// # Safety
/// `handle` must be null or a live OpenCL object.
unsafe fn dispatch_of(handle: *const c_void) -> usize {
    unsafe { super::driver::icd(handle as *mut c_void) }.map_or(0, |t| t as *const _ as usize)
}

fn register(api: Api, dispatch: usize, addr: usize) {
    let row = Real {
        api,
        dispatch,
        addr,
    };
    let mut reals = REALS.write();
    if !reals.contains(&row) {
        reals.push(row);
    }
}

/// The driver's function behind clxfer's wrapper for `api`. With one candidate it is used as is
/// (the handle is not touched); with several (two platforms), the handle's dispatch table decides.
///
/// # Safety
/// `handle` is the first argument the program passed: null or a live OpenCL object.
pub unsafe fn real(api: Api, handle: *const c_void) -> *mut c_void {
    let reals = REALS.read();
    let mut candidates = reals.iter().filter(|r| r.api == api);
    let Some(first) = candidates.next() else {
        return std::ptr::null_mut();
    };
    if candidates.all(|r| r.addr == first.addr) || handle.is_null() {
        return first.addr as *mut c_void;
    }
    let dispatch = unsafe { dispatch_of(handle) };
    let chosen = reals
        .iter()
        .find(|r| r.api == api && r.dispatch == dispatch)
        .unwrap_or(first);
    chosen.addr as *mut c_void
}

/// clxfer's wrapper for an extension entry point, where it has one. The entry points' list
/// makes them (`api.rs`, which sits above the hooks) and names its implementation as the hooks'
/// type parameter, so this file does not reach up for them.
pub trait Wrappers {
    fn wrapper(api: Api) -> Option<*mut c_void>;
}

/// The wrapper to return for `name`, having recorded the driver's `addr`.
unsafe fn wrap<W: Wrappers>(
    name: *const c_char,
    dispatch: usize,
    addr: *mut c_void,
) -> *mut c_void {
    if addr.is_null() || name.is_null() {
        return addr;
    }
    let name = unsafe { CStr::from_ptr(name) }.to_str().unwrap_or("");
    let Some(api) = Api::from_name(name) else {
        return addr;
    };
    let Some(wrapper) = W::wrapper(api) else {
        return addr;
    };
    register(api, dispatch, addr as usize);
    crate::debug!("{name}: driver function {addr:p} wrapped");
    wrapper
}

/// `clGetExtensionFunctionAddress(func_name)`: no platform given, so the pointer's platform is unknown.
pub struct AddressHook<W>(PhantomData<W>);

impl<W: Wrappers> Hook<args::clGetExtensionFunctionAddress, *mut c_void> for AddressHook<W> {
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clGetExtensionFunctionAddress) {}
    unsafe fn after(
        _: (),
        args: &args::clGetExtensionFunctionAddress,
        ret: *mut c_void,
        span: &mut Span,
    ) -> *mut c_void {
        if ret.is_null() {
            unsafe { not_found(args.func_name, span.end) };
        }
        unsafe { wrap::<W>(args.func_name, 0, ret) }
    }
}

/// `clGetExtensionFunctionAddressForPlatform(platform, func_name)`.
pub struct AddressForPlatformHook<W>(PhantomData<W>);

impl<W: Wrappers> Hook<args::clGetExtensionFunctionAddressForPlatform, *mut c_void>
    for AddressForPlatformHook<W>
{
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clGetExtensionFunctionAddressForPlatform) {}
    unsafe fn after(
        _: (),
        args: &args::clGetExtensionFunctionAddressForPlatform,
        ret: *mut c_void,
        span: &mut Span,
    ) -> *mut c_void {
        if ret.is_null() {
            unsafe { not_found(args.func_name, span.end) };
            return ret;
        }
        // The driver returned a function for this platform, so the handle is a live platform.
        let dispatch = unsafe { dispatch_of(args.platform as *const c_void) };
        unsafe { wrap::<W>(args.func_name, dispatch, ret) }
    }
}
