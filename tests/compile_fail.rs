//! The compile-fail listings: each `listings/*/fail-*/main.rs` must fail to
//! compile with exactly the committed `main.stderr` beside it, which the book
//! shows. `TRYBUILD=overwrite` (part of `cargo xtask bless`) rewrites them.

#[test]
fn misuse_the_types_forbid() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail(concat!(env!("CARGO_MANIFEST_DIR"), "/listings/*/fail-*/main.rs"));
}
