//! Programs built from source: their text is kept (bounded) until a kernel of theirs takes a
//! memory argument, then read once by `model::kernel_source` with the build's `-D` options, so
//! that the race check knows which arguments a kernel writes without the driver's argument
//! information (issue #41). A linked program's kernels are those of the programs it links.
//! Programs from binaries or IL keep the driver's word, or none.

use super::state::{Program, WORLD, bounded_insert};
use crate::layer::{Call, Hook, Span, args};
use crate::model::kernel_source::{self, Access, Kernel};
use opencl_sys::*;
use std::ffi::{CStr, c_char};
use std::sync::Arc;

/// A program's source is kept up to this many bytes (a larger one is not judged).
const MAX_SOURCE: usize = 4 << 20;

fn with_program(program: usize, f: impl FnOnce(&mut Program)) {
    let mut programs = WORLD.programs.lock();
    if !programs.contains_key(&program) {
        bounded_insert(&mut programs, program, Program::default());
    }
    if let Some(p) = programs.get_mut(&program) {
        f(p);
    }
}

/// A program's kernels, read from its source the first time they are asked for.
fn kernels_of(program: usize) -> Option<Arc<Vec<Kernel>>> {
    let (source, options) = {
        let programs = WORLD.programs.lock();
        let p = programs.get(&program)?;
        if let Some(k) = &p.kernels {
            return Some(k.clone());
        }
        (p.source.clone()?, p.options.clone())
    };
    // Read outside the lock: a large program takes a while.
    let kernels = Arc::new(kernel_source::kernels(&source, &options));
    with_program(program, |p| {
        p.kernels = Some(kernels.clone());
        p.source = None;
    });
    Some(kernels)
}

/// What the source says of argument `index` of `kernel` (named `name`) of `program`; `None`
/// where clxfer has no source for it.
pub(super) fn judged(program: usize, name: &str, index: u32) -> Option<Access> {
    let kernels = kernels_of(program)?;
    let k = kernels.iter().find(|k| k.name == name);
    Some(match k.and_then(|k| k.args.get(index as usize)) {
        Some(a) => a.access.clone(),
        None => Access::Unsure(format!(
            "clxfer found no kernel `{name}` with an argument {index} in the program's source"
        )),
    })
}

/// `clCreateProgramWithSource`.
pub struct ProgramSource;

impl Hook<args::clCreateProgramWithSource, cl_program> for ProgramSource {
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clCreateProgramWithSource) {}
    unsafe fn after(
        _: (),
        a: &args::clCreateProgramWithSource,
        ret: cl_program,
        _: &mut Span,
    ) -> cl_program {
        if ret.is_null() || a.strings.is_null() {
            return ret;
        }
        let mut text = String::new();
        for i in 0..a.count as usize {
            // The driver accepted the strings: `count` pointers, each with its length, or
            // NUL-terminated where the length is 0 or `lengths` is NULL.
            let s = unsafe { *a.strings.add(i) };
            let len = if a.lengths.is_null() {
                0
            } else {
                unsafe { *a.lengths.add(i) }
            };
            if s.is_null() {
                return ret;
            }
            let bytes = match len {
                0 => unsafe { CStr::from_ptr(s) }.to_bytes(),
                n => unsafe { std::slice::from_raw_parts(s.cast::<u8>(), n) },
            };
            if text.len() + bytes.len() > MAX_SOURCE {
                return ret;
            }
            text.push_str(&String::from_utf8_lossy(bytes));
        }
        let program = Program {
            source: Some(text.into()),
            ..Program::default()
        };
        bounded_insert(&mut WORLD.programs.lock(), ret as usize, program);
        ret
    }
}

/// The options string of a build, compile or link.
///
/// # Safety
/// `options` is null or a NUL-terminated string.
unsafe fn options(options: *const c_char) -> String {
    match options.is_null() {
        true => String::new(),
        false => unsafe { CStr::from_ptr(options) }
            .to_string_lossy()
            .into_owned(),
    }
}

/// `clBuildProgram` and `clCompileProgram`: the options its kernels are read with.
pub struct ProgramBuilt;

impl<A: BuildArgs> Hook<A, cl_int> for ProgramBuilt {
    type State = ();
    unsafe fn before(_: Call, _: &mut A) {}
    unsafe fn after(_: (), a: &A, ret: cl_int, _: &mut Span) -> cl_int {
        let program = a.program() as usize;
        if ret == CL_SUCCESS && WORLD.programs.lock().contains_key(&program) {
            let options = unsafe { options(a.options()) };
            with_program(program, |p| {
                if p.options != options && p.source.is_some() {
                    p.kernels = None;
                }
                p.options = options;
            });
        }
        ret
    }
}

/// The program and options of `clBuildProgram`'s and `clCompileProgram`'s arguments.
pub trait BuildArgs {
    fn program(&self) -> cl_program;
    fn options(&self) -> *const c_char;
}

macro_rules! build_args {
    ($($name:ident),*) => { $(
        impl BuildArgs for args::$name {
            fn program(&self) -> cl_program {
                self.program
            }
            fn options(&self) -> *const c_char {
                self.options
            }
        }
    )* };
}

build_args!(clBuildProgram, clCompileProgram);

/// `clLinkProgram`: the new program's kernels are its inputs'.
pub struct ProgramLinked;

impl Hook<args::clLinkProgram, cl_program> for ProgramLinked {
    type State = ();
    unsafe fn before(_: Call, _: &mut args::clLinkProgram) {}
    unsafe fn after(_: (), a: &args::clLinkProgram, ret: cl_program, _: &mut Span) -> cl_program {
        if ret.is_null() || a.input_programs.is_null() {
            return ret;
        }
        let mut kernels = Vec::new();
        for i in 0..a.num_input_programs as usize {
            // The driver linked these `num_input_programs` programs.
            let input = unsafe { *a.input_programs.add(i) } as usize;
            match kernels_of(input) {
                Some(k) => kernels.extend(k.iter().cloned()),
                // One input without source: its kernels are not known.
                None => return ret,
            }
        }
        let program = Program {
            kernels: Some(Arc::new(kernels)),
            ..Program::default()
        };
        bounded_insert(&mut WORLD.programs.lock(), ret as usize, program);
        ret
    }
}
