//! `import`: an optimum export folder checked and given a manifest
//! ([`ocr_bench::import_export`]); prints the page query that runs it, or every problem found.

use std::path::Path;

use ocr_bench::import_export::{import, ImportRequest};

use super::EXIT_USAGE;

/// 0 with the manifest written, 2 with the problems named.
pub fn import_command(root: &Path, folder: &Path, name: Option<String>, out: Option<&Path>) -> u8 {
    let request = ImportRequest {
        root: root.to_path_buf(),
        folder: folder.to_path_buf(),
        name,
        out: out.map(Path::to_path_buf),
    };
    match import(&request) {
        Ok(imported) => {
            let manifest = &imported.manifest;
            let variants = |names: Vec<&String>| {
                names
                    .into_iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            println!("wrote {}", imported.manifest_path.display());
            println!(
                "encoders (tier=): {}; decoders (decoder=): {}",
                variants(manifest.vision.keys().collect()),
                variants(manifest.decoder.keys().collect())
            );
            for note in &imported.notes {
                println!("note: {note}");
            }
            println!("query: {}", imported.query);
            0
        }
        Err(refusal) => {
            eprintln!(
                "ocr-bench: {} is refused ({} problem{}):",
                folder.display(),
                refusal.0.len(),
                if refusal.0.len() == 1 { "" } else { "s" }
            );
            for problem in &refusal.0 {
                eprintln!("  - {problem}");
            }
            EXIT_USAGE
        }
    }
}
