//! What is checked of a run's page and query before a browser starts: the page must report
//! to the runner, and the manifest must be on the serving origin, readable under the served
//! root and offer what the query asks of it.

use std::path::Path;

/// The pages `--page` may name, for the messages.
const PAGES_ALLOWED: &str = "an .html page under the served root that reports to the \
    /benchmark-* endpoints, such as www/index.html or bench/core/index.html";

/// Files a page's scan may read before it gives up: index.html reaches the reporting client
/// through 3 modules.
const PAGE_SCAN_LIMIT: usize = 200;

/// `page` must be an .html file under `root` that speaks the endpoints: it, or a script it
/// loads (directly or through imports, under the root), names a `/benchmark-` endpoint. A
/// page that does not would only wait for the timeout.
pub fn check_page(root: &Path, page: &str) -> Result<(), String> {
    let root = root
        .canonicalize()
        .map_err(|e| format!("the root {} cannot be read: {e}", root.display()))?;
    let file = root.join(page).canonicalize().map_err(|e| {
        format!(
            "--page {page:?} does not exist under {} ({e}); allowed: {PAGES_ALLOWED}",
            root.display()
        )
    })?;
    if !file.starts_with(&root) {
        return Err(format!(
            "--page {page:?} is outside the served root {}; allowed: {PAGES_ALLOWED}",
            root.display()
        ));
    }
    if !file.is_file() || file.extension().is_none_or(|e| e != "html") {
        return Err(format!(
            "--page {page:?} is not an .html file; allowed: {PAGES_ALLOWED}"
        ));
    }
    let mut todo = vec![file];
    let mut seen = std::collections::HashSet::new();
    while let Some(file) = todo.pop() {
        if !seen.insert(file.clone()) || seen.len() > PAGE_SCAN_LIMIT {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if text.contains("/benchmark-") {
            return Ok(());
        }
        let dir = file.parent().unwrap_or(&root).to_owned();
        for reference in script_references(&text) {
            let path = match reference.strip_prefix('/') {
                Some(absolute) => root.join(absolute),
                None => dir.join(reference),
            };
            if let Ok(path) = path.canonicalize() {
                if path.starts_with(&root) {
                    todo.push(path);
                }
            }
        }
    }
    Err(format!(
        "--page {page:?} does not report to the /benchmark-* endpoints (neither it nor a script \
         it loads names one), so a run would only time out; allowed: {PAGES_ALLOWED}"
    ))
}

/// Quoted local paths ending in `.js` or `.mjs`: script sources and imports.
fn script_references(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for quote in ['"', '\''] {
        let mut parts = text.split(quote);
        parts.next();
        for (index, part) in parts.enumerate() {
            // Every second piece lies between quotes.
            if index % 2 == 0
                && (part.ends_with(".js") || part.ends_with(".mjs"))
                && !part.contains("://")
                && !part.contains(char::is_whitespace)
            {
                found.push(part);
            }
        }
    }
    found
}

/// `model=` in another page's query (the transformers.js peer page's export folder, which the
/// run serves) must name a folder under `root` that is no dot-folder.
pub fn check_model_folder(root: &Path, query: &str) -> Result<(), String> {
    let Some((_, folder)) =
        url::form_urlencoded::parse(query.as_bytes()).find(|(n, _)| n == "model")
    else {
        return Ok(());
    };
    crate::server::Served::new(root, root)
        .with_model_folder(&folder)
        .map(drop)
}

/// `manifest=` must name a path on the serving origin (the page fetches the manifest and
/// every model it lists, and a benchmark never reaches the network on its own), a manifest
/// under `root` the core can read, that offers the query's tier and decoder and allows its
/// maxTokens, capture and verify ([`ocr_bench_core::manifest::Manifest::check_config`]).
pub fn check_manifest(
    root: &Path,
    page: &str,
    config: &ocr_bench_core::Config,
) -> Result<(), String> {
    let manifest = config.manifest.as_str();
    let scheme = manifest.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    });
    let other_host = ["//", "\\\\", "/\\", "\\/"]
        .iter()
        .any(|p| manifest.starts_with(p));
    if scheme || other_host {
        return Err(format!(
            "manifest={manifest:?} is not on the serving origin; allowed: a path on this server, \
             such as {} (a benchmark never reaches the network on its own)",
            ocr_bench_core::config::DEFAULT_MANIFEST
        ));
    }
    let (shown, model) = crate::model_manifest::read(root, page, manifest)?;
    model
        .check_config(config)
        .map_err(|e| format!("the manifest {shown}: {e}"))
}

/// `ort=` must name an onnxruntime-web version whose files are under `root`: a checkout has
/// every version `package.json` installs (after `npm ci`), a portable bundle only those it was
/// built with (`scripts/bundle --ort`).
pub fn check_runtime(root: &Path, config: &ocr_bench_core::Config) -> Result<(), String> {
    let pinned = ocr_bench_core::config::OrtVersion::PINNED;
    let folder = config.ort.dist_folder();
    // The module every realm imports, and the WASM build beside it.
    let files = ["ort.webgpu.min.mjs", "ort-wasm-simd-threaded.asyncify.wasm"];
    match files
        .iter()
        .find(|file| !root.join(&folder).join(file).is_file())
    {
        None => Ok(()),
        Some(file) => Err(format!(
            "ort={} needs onnxruntime-web {} under the served root, and {} has no {folder}/{file}: \
             in a checkout run npm ci; a portable bundle carries only the versions it was built \
             with (scripts/bundle --ort {pinned},{}); or leave ort at {pinned}",
            config.ort,
            config.ort,
            root.display(),
            config.ort,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::DEFAULT_PAGE;

    #[test]
    fn a_version_whose_files_are_not_under_the_root_is_refused_before_a_browser_starts() {
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let later = ocr_bench_core::parse_query("ort=1.31.1").unwrap();
        check_runtime(&checkout, &ocr_bench_core::Config::default()).unwrap();
        check_runtime(&checkout, &later).unwrap();
        // A bundle built with the pinned version only.
        let bundle = tempfile::tempdir().unwrap();
        let pinned = bundle.path().join("node_modules/onnxruntime-web/dist");
        std::fs::create_dir_all(&pinned).unwrap();
        for file in ["ort.webgpu.min.mjs", "ort-wasm-simd-threaded.asyncify.wasm"] {
            std::fs::write(pinned.join(file), "").unwrap();
        }
        check_runtime(bundle.path(), &ocr_bench_core::Config::default()).unwrap();
        let err = check_runtime(bundle.path(), &later).unwrap_err();
        assert!(
            err.contains("ort=1.31.1")
                && err.contains("node_modules/onnxruntime-web-1.31.1/dist/ort.webgpu.min.mjs")
                && err.contains("scripts/bundle --ort 1.30.0,1.31.1"),
            "{err}"
        );
    }

    #[test]
    fn only_pages_under_the_root_that_report_are_allowed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        check_page(&root, DEFAULT_PAGE).unwrap();
        check_page(&root, "bench/core/index.html").unwrap();
        for (page, why) in [
            ("README.md", "not an .html file"),
            ("../../../etc/hostname", "outside the served root"),
            ("www/report.html", "does not report"),
            ("www/missing.html", "does not exist"),
        ] {
            let err = check_page(&root, page).unwrap_err();
            assert!(
                err.contains(why) && err.contains("www/index.html"),
                "{page}: {err}"
            );
        }
    }

    #[test]
    fn the_manifest_must_be_on_the_serving_origin() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let check = |config: &ocr_bench_core::Config| check_manifest(&root, DEFAULT_PAGE, config);
        let config = |m: &str| ocr_bench_core::parse_query(&format!("manifest={m}")).unwrap();
        check(&config("/models/manifest.json")).unwrap();
        check(&config("../models/manifest.json")).unwrap();
        for off in [
            "https://example.com/m.json",
            "//example.com/m.json",
            "data:,{}",
        ] {
            let err = check(&config(off)).unwrap_err();
            assert!(
                err.contains("not on the serving origin") && err.contains("/models/manifest.json"),
                "{err}"
            );
        }
    }

    #[test]
    fn the_query_is_checked_against_the_manifest_it_names() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let check = |query: &str| {
            check_manifest(
                &root,
                DEFAULT_PAGE,
                &ocr_bench_core::parse_query(query).unwrap(),
            )
        };
        check("decoder=fixed-kv-gpu&choose=gpu&capture=on").unwrap();
        let err = check("decoder=my-decoder").unwrap_err();
        assert!(
            err.contains("models/manifest.json")
                && err.contains("has no decoder \"my-decoder\"")
                && err.contains("it offers: baseline, einsum-int8"),
            "{err}"
        );
        let err = check("decoder=nbits-int4&verify=wasm").unwrap_err();
        assert!(err.contains("GatherBlockQuantized"), "{err}");
        let err = check("manifest=/models/none.json").unwrap_err();
        assert!(
            err.contains("models/none.json") && err.contains("cannot be read"),
            "{err}"
        );
    }
}
