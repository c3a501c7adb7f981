//! skeptic runs every Rust block of every chapter, as readers see it (after
//! mdBook's includes), compiled against this package's real dependency graph.
//! See build.rs.
include!(concat!(env!("OUT_DIR"), "/skeptic-tests.rs"));
