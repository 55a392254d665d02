use super::*;

/// What one case's kernels come to: `(kernel, [(arg, "reads" | "writes" | "may-write" |
/// "unsure" | "-", a word the reason must hold)])`.
type Want = &'static [(
    &'static str,
    &'static [(&'static str, &'static str, &'static str)],
)];

fn kind(a: &Access) -> (&'static str, &str) {
    match a {
        Access::NotMemory => ("-", ""),
        Access::Reads(w) => ("reads", w),
        Access::Writes(w) => ("writes", w),
        Access::MayWrite(w) => ("may-write", w),
        Access::Unsure(w) => ("unsure", w),
    }
}

fn check(src: &str, options: &str, want: Want) {
    let got = kernels(src, options);
    let names: Vec<&str> = got.iter().map(|k| k.name.as_str()).collect();
    let wanted: Vec<&str> = want.iter().map(|w| w.0).collect();
    assert_eq!(names, wanted, "kernels of:\n{src}");
    for (k, (_, args)) in got.iter().zip(want) {
        assert_eq!(
            k.args.len(),
            args.len(),
            "arguments of {}: {:?}",
            k.name,
            k.args
        );
        for (a, (name, what, why)) in k.args.iter().zip(args.iter()) {
            let (w, reason) = kind(&a.access);
            assert_eq!(
                (a.name.as_str(), w),
                (*name, *what),
                "{}: {:?}\n{src}",
                k.name,
                a
            );
            assert!(
                reason.contains(why),
                "{}.{name}: {reason:?} lacks {why:?}",
                k.name
            );
        }
    }
}

#[test]
fn qualifiers() {
    check(
        "__kernel void scale(__global float *a, float f) { a[get_global_id(0)] *= f; }",
        "",
        &[("scale", &[("a", "writes", "`a[…] *=`"), ("f", "-", "")])],
    );
    check(
        "kernel void k(const __global int *a, __global const int *b, global int const *c,
                       __constant float *d, __local float *l, __global int * const e,
                       __global float4 *restrict f) {
            int i = get_global_id(0);
            e[i] = a[i] + b[i] + c[i] + (int)d[i] + (int)f[i].x;
        }",
        "",
        &[(
            "k",
            &[
                ("a", "reads", "const"),
                ("b", "reads", "const"),
                ("c", "reads", "const"),
                ("d", "reads", "__constant"),
                ("l", "-", ""),
                // A const pointer to writable memory: written.
                ("e", "writes", "e[…] ="),
                // Not const, and only loaded from.
                ("f", "reads", "only loads"),
            ],
        )],
    );
    check(
        "__kernel void img(__read_only image2d_t in, __write_only image2d_t out,
                           read_write image2d_t both, image2d_t dflt, sampler_t s,
                           write_only pipe int p, uint n, float4 v) {}",
        "",
        &[(
            "img",
            &[
                ("in", "reads", "read_only"),
                ("out", "writes", "write_only"),
                ("both", "may-write", "read_write"),
                ("dflt", "reads", "read_only"),
                ("s", "-", ""),
                ("p", "writes", "pipe"),
                ("n", "-", ""),
                ("v", "-", ""),
            ],
        )],
    );
}

#[test]
fn bodies() {
    check(
        "__kernel void k(__global int *a, __global int *b, __global int *c, __global int *d,
                         __global float *e, __global int *f, __global int *g, __global int *h,
                         __global int *m) {
            size_t i = get_global_id(0);
            *a = 1;
            b[i]++;
            ++c[i];
            vstore4((int4)(0), i, d);
            float4 x = vload4(i, e);
            atomic_add(&f[0], 1);
            *(g + i) = 0;
            if (h[i] == m[i]) return;
        }",
        "",
        &[(
            "k",
            &[
                ("a", "writes", "*a ="),
                ("b", "writes", "++"),
                ("c", "writes", "++c"),
                ("d", "writes", "vstore4"),
                ("e", "reads", "only loads"),
                ("f", "writes", "atomic_add"),
                ("g", "writes", "*g ="),
                ("h", "reads", ""),
                ("m", "reads", ""),
            ],
        )],
    );
    // What the judge does not follow keeps the declaration's `may write`, saying why.
    check(
        "void helper(__global int *p) { p[0] = 1; }
         __kernel void k(__global int *a, __global int *b, __global int *c, __global int *d,
                         __global int *e, __global int *f) {
            helper(a);
            __global int *q = cond ? b : d; q[0] = 2;
            c = f;
            int x = d[0] * 2;
            int y = x * e[1];
            foo(&e[0]);
            int n = f - d;
        }",
        "",
        &[(
            "k",
            &[
                ("a", "may-write", "passes `a` to `helper`"),
                ("b", "may-write", "copies or converts"),
                ("c", "may-write", "changes `c`"),
                ("d", "may-write", "copies or converts"),
                ("e", "may-write", "&e[…]"),
                ("f", "may-write", "copies or converts"),
            ],
        )],
    );
    // A local pointer made from an argument by casts and offsets is the argument (issue #56):
    // pyopencl's elementwise kernels read every array through one.
    check(
        "__kernel void twice(__global float *x__base, long x__offset,
                             __global float *y__base, long y__offset, long n) {
            int lid = get_local_id(0);
            long i;
            __global float *x = (__global float *) ((__global char *) x__base + x__offset);
__global float *y = (__global float *) ((__global char *) y__base + y__offset);;
            for (i = lid; i < n; i += 1) { y[i] = x[i] * 2; }
        }",
        "",
        &[(
            "twice",
            &[
                ("x__base", "reads", "only loads"),
                ("x__offset", "-", ""),
                ("y__base", "writes", "`y[…] =` (`y` is a copy of `y__base`)"),
                ("y__offset", "-", ""),
                ("n", "-", ""),
            ],
        )],
    );
    // A copy of a copy, and pointers moved within their object, are followed; a copy changed to
    // point elsewhere is not.
    check(
        "__kernel void k(__global int *a, __global int *b, __global int *c, __global int *d) {
            __global int *p = a + 4; __global int *r = p; int v = r[0];
            b += 4; b++; b = b + 1; v += b[0]; ++b;
            c[2] = 1;
            __global const int *s = c; s++; v += *s;
            __global int *t = d; t = 0; t[0] = v;
        }",
        "",
        &[(
            "k",
            &[
                ("a", "reads", "only loads"),
                ("b", "reads", "only loads"),
                ("c", "writes", "`c[…] =`"),
                ("d", "may-write", "changes `t`"),
            ],
        )],
    );
    // A prototype alone: declared.
    check(
        "__kernel void later(__global int *a);",
        "",
        &[("later", &[("a", "may-write", "without its body")])],
    );
}

#[test]
fn comments_macros_attributes_and_several_kernels() {
    check(
        "/* __kernel void not_a_kernel(__global int *x) { x[0] = 1; } */
         // __kernel void nor_this(__global int *y)
         #define REAL float
         #define AT(p, i) p[(i)]
         #define STORE(p, i, v) \\
             AT(p, i) = (v)
         __kernel __attribute__((reqd_work_group_size(64, 1, 1)))
         void first(__global REAL *out, __global const REAL *in /* only read */) {
             STORE(out, get_global_id(0), AT(in, get_global_id(0)));
         }
         __attribute__((vec_type_hint(float4))) __kernel void second(
             __global REAL *ro __attribute__((aligned(16))), __global char *s) {
             REAL t = ro[0]; const char *msg = \"a[0] = 1\"; (void)t; (void)msg; (void)s;
         }",
        "",
        &[
            ("first", &[("out", "writes", "="), ("in", "reads", "const")]),
            (
                "second",
                &[
                    ("ro", "reads", ""),
                    ("s", "may-write", "copies or converts"),
                ],
            ),
        ],
    );
}

#[test]
fn conditionals_and_options() {
    let src = "#ifdef WRITE_B
               #define B_ACCESS __global
               #else
               #define B_ACCESS __global const
               #endif
               __kernel void k(B_ACCESS int *b, __global int *a) {
               #if USE_A
                   a[0] = b[0];
               #endif
               }";
    check(
        src,
        "-D WRITE_B",
        &[("k", &[("b", "reads", ""), ("a", "reads", "")])],
    );
    check(
        src,
        "",
        &[("k", &[("b", "reads", "const"), ("a", "reads", "")])],
    );
    check(
        src,
        "-DUSE_A=1",
        &[("k", &[("b", "reads", "const"), ("a", "writes", "a[…] =")])],
    );
    // A condition on what the driver defines: the body under it is not judged.
    check(
        "__kernel void k(__global double *a) {
         #ifdef cl_khr_fp64
             a[0] = 1.0;
         #endif
         }",
        "",
        &[("k", &[("a", "may-write", "cl_khr_fp64")])],
    );
    // Nor the declaration.
    check(
        "#if __OPENCL_VERSION__ >= 200
         __kernel void k(__global int *a) { a[0] = 1; }
         #else
         __kernel void k(__global int *a) { }
         #endif",
        "",
        &[("k", &[("a", "unsure", "defined twice")])],
    );
}

#[test]
fn what_it_refuses_to_guess() {
    check(
        "#include \"types.h\"
         typedef __global float *gptr;
         typedef struct { int x; } pair;
         __kernel void k(gptr p, my_ptr_t q, pair r) { p[0] = 1; }",
        "",
        &[(
            "k",
            &[
                ("p", "writes", "p[…] ="),
                (
                    "q",
                    "unsure",
                    "`my_ptr_t` is not one clxfer knows (from `#include \"types.h\"`?)",
                ),
                ("r", "-", ""),
            ],
        )],
    );
    // Pasted tokens are not rebuilt (nor is the name they make).
    check(
        "#define ARG(n) __global int *a##n
         __kernel void k(ARG(1)) { a1[0] = 0; }",
        "",
        &[("k", &[("1", "unsure", "pastes")])],
    );
}

#[test]
fn build_options() {
    assert_eq!(
        lex::defines_of("-cl-fast-relaxed-math -DN=4 -D WIDE -I dir"),
        vec![("N".into(), "4".into()), ("WIDE".into(), "1".into())]
    );
}
