//! Generates the skeptic tests from the *expanded* chapters.
//!
//! skeptic reads markdown but does not understand mdBook's `{{#include}}`, so
//! `cargo xtask test` first renders the book with mdBook's markdown renderer
//! into `target/book-md` (includes resolved: what readers see) and points
//! `BOOK_MD_DIR` at it. Without it, the generated test fails and says how to
//! run the suite.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=BOOK_MD_DIR");
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let dir = env::var("BOOK_MD_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join("target/book-md"));
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut chapters: Vec<PathBuf> = fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "md") && !p.ends_with("SUMMARY.md"))
                .collect()
        })
        .unwrap_or_default();
    chapters.sort();
    if chapters.is_empty() {
        let message = format!(
            "no expanded chapters in {}: run the suite with `cargo xtask test`, which renders them first",
            dir.display()
        );
        fs::write(
            out_dir.join("skeptic-tests.rs"),
            format!("#[test] fn expanded_chapters_are_missing() {{ panic!({message:?}); }}\n"),
        )
        .unwrap();
        return;
    }
    // skeptic has no `compile_fail`: it would compile those blocks and call
    // the expected error a failure. trybuild pins their error and `mdbook test`
    // checks that they fail, so skeptic gets them as `ignore`d tests.
    let for_skeptic = out_dir.join("chapters");
    fs::create_dir_all(&for_skeptic).unwrap();
    let mut copies = Vec::new();
    for chapter in &chapters {
        println!("cargo:rerun-if-changed={}", chapter.display());
        let text = fs::read_to_string(chapter).unwrap();
        let copy = for_skeptic.join(chapter.file_name().unwrap());
        fs::write(&copy, text.replace("```rust,compile_fail", "```rust,ignore,compile_fail")).unwrap();
        copies.push(copy);
    }
    skeptic::generate_doc_tests(&copies);
}
