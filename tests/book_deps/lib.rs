//! The crates the book's code blocks use, as dependencies of one library.
//!
//! This file is empty on purpose. `cargo xtask book-test` builds this library
//! and hands the resulting artifacts (one per crate) to `mdbook test -L`, so
//! that every `extern crate` in a chapter finds exactly one candidate. To use a
//! new crate in a chapter, add it to `[dependencies]` in the root Cargo.toml.
