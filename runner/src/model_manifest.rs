//! The model manifest a run's query names (`manifest=`), read from under the served root as
//! the page fetches it, through the core's type ([`ocr_bench_core::manifest::Manifest`]): the
//! checks before a browser starts and the floor read it here.

use std::path::{Component, Path, PathBuf};

use ocr_bench_core::manifest::Manifest;

/// The file under `root` that the page at `page` (a path under the root) fetches as
/// `manifest=`: absolute paths from the root, others from the page's directory, never above
/// the root.
pub fn manifest_path(root: &Path, page: &str, manifest: &str) -> Result<PathBuf, String> {
    let url_path = manifest.split(['?', '#']).next().unwrap_or_default();
    let joined = match url_path.strip_prefix('/') {
        Some(absolute) => PathBuf::from(absolute),
        None => Path::new(page.trim_start_matches('/'))
            .parent()
            .unwrap_or(Path::new(""))
            .join(url_path),
    };
    let mut inside = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::Normal(name) => inside.push(name),
            Component::ParentDir if inside.pop() => {}
            Component::CurDir => {}
            _ => {
                return Err(format!(
                    "manifest={manifest:?} leads outside the served root"
                ));
            }
        }
    }
    Ok(root.join(inside))
}

/// The manifest `manifest` (a `manifest=` value) names for the page at `page`: the path
/// shown for it (relative to the root) and its contents, or why it cannot be read.
pub fn read(root: &Path, page: &str, manifest: &str) -> Result<(String, Manifest), String> {
    let path = manifest_path(root, page, manifest)?;
    let shown = path
        .strip_prefix(root)
        .unwrap_or(&path)
        .display()
        .to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "the manifest {shown} (manifest={manifest:?}) cannot be read: {e}; allowed: a \
             manifest file under the served root {} (are the models built? see README.md)",
            root.display()
        )
    })?;
    let parsed = Manifest::parse(&text).map_err(|e| format!("the manifest {shown}: {e}"))?;
    Ok((shown, parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .canonicalize()
            .unwrap()
    }

    #[test]
    fn the_manifest_is_read_where_the_page_fetches_it_and_never_above_the_root() {
        let (shown, manifest) = read(&root(), "www/index.html", "/models/manifest.json").unwrap();
        assert_eq!(shown, "models/manifest.json");
        assert!(manifest.decoder.contains_key("baseline"));
        let (relative, _) = read(&root(), "www/index.html", "../models/manifest.json?v=2").unwrap();
        assert_eq!(relative, shown);
        let err = read(&root(), "www/index.html", "/models/none.json").unwrap_err();
        assert!(
            err.contains("models/none.json") && err.contains("cannot be read"),
            "{err}"
        );
        let err = read(&root(), "www/index.html", "../../etc/passwd").unwrap_err();
        assert!(err.contains("leads outside the served root"), "{err}");
        let err = read(&root(), "www/index.html", "/models/vocab.json").unwrap_err();
        assert!(
            err.contains("models/vocab.json") && err.contains("not one the core can read"),
            "{err}"
        );
    }
}
